/// The body of an ``HTTPResponse``.
public enum HTTPResponseBody: Sendable {
    /// The whole body in memory, sent with `Content-Length`.
    case bytes([UInt8])
    /// A body produced piece by piece, sent with chunked transfer encoding.
    case stream(any HTTPResponseStream)
}
