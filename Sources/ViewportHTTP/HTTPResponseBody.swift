/// The body of an ``HTTPResponse``.
public enum HTTPResponseBody: Sendable {
    /// The whole body in memory, sent with `Content-Length`.
    case bytes([UInt8])
    /// The whole body in malloc'd memory that libmicrohttpd takes without copying, sent with
    /// `Content-Length` (see ``HTTPResponseBuffer``).
    case buffer(HTTPResponseBuffer)
    /// A body produced piece by piece, sent with chunked transfer encoding.
    case stream(any HTTPResponseStream)
}

extension HTTPResponseBody {
    /// The bytes of an in-memory body (a copy for `.buffer`), nil for a stream.
    public var inMemoryBytes: [UInt8]? {
        switch self {
        case .bytes(let bytes): return bytes
        case .buffer(let buffer): return buffer.bytes
        case .stream: return nil
        }
    }
}
