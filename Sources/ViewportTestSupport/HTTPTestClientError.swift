/// Failures of ``HTTPTestClient``.
public enum HTTPTestClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Could not connect (errno text).
    case connectFailed(String)
    /// A read or write did not complete before the deadline.
    case timedOut
    /// The peer closed the connection before a complete response.
    case closedByPeer
    /// A socket call failed (errno text).
    case socket(String)
    /// The bytes received are not a valid HTTP/1.1 response.
    case malformed(String)

    public var description: String {
        switch self {
        case .connectFailed(let reason): return "connect failed: \(reason)"
        case .timedOut: return "timed out"
        case .closedByPeer: return "connection closed by peer"
        case .socket(let reason): return "socket error: \(reason)"
        case .malformed(let reason): return "malformed response: \(reason)"
        }
    }
}
