/// Why a Redis command did not get its reply. Every case but ``server(_:)`` means the connection
/// is gone (it is closed; the next command reconnects).
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached within the connect timeout (refused, unreachable, timed out).
    case connect(String)
    /// A read or write failed or timed out.
    case io(String)
    /// The server closed the connection (it restarted, or closed an idle client).
    case closed(String)
    /// The server answered something that is not RESP.
    case protocolError(String)
    /// The server answered an error reply where the caller needed a result.
    case server(String)
    /// The server answered a reply of a type the caller did not expect.
    case unexpected(String)
    /// Recent commands failed: the pool fails fast until its retry time instead of waiting for
    /// another timeout. Also a cluster that answers `CLUSTERDOWN`, or keeps redirecting.
    case unavailable(String)
    /// The keys of one command (or one `MULTI`…`EXEC`) are in different hash slots of a cluster:
    /// nothing was sent. Give them one hash tag (`{…}`).
    case crossSlot(String)

    public var description: String {
        switch self {
        case .connect(let m): return "cannot connect: \(m)"
        case .io(let m): return "connection lost: \(m)"
        case .closed(let m): return "connection closed by the server: \(m)"
        case .protocolError(let m): return "protocol error: \(m)"
        case .server(let m): return "server error: \(m)"
        case .unexpected(let m): return "unexpected reply: \(m)"
        case .unavailable(let m): return "unavailable: \(m)"
        case .crossSlot(let m): return "keys in different hash slots of the cluster (give them one hash tag, {…}): \(m)"
        }
    }

    /// Whether the connection is unusable after it (everything but an error reply or an
    /// unexpected reply type).
    public var brokeTheConnection: Bool {
        switch self {
        case .server, .unexpected, .crossSlot: return false
        default: return true
        }
    }
}
