/// One reply of a Redis-protocol server (RESP2), copied out of hiredis' reply objects.
public enum RedisReply: Sendable, Hashable {
    case status(String)
    /// An error reply (`-ERR …`, `-NOSCRIPT …`): the command failed, the connection is fine.
    case error(String)
    case integer(Int64)
    /// A bulk string: arbitrary bytes.
    case string([UInt8])
    case null
    case array([RedisReply])

    /// The bytes of a bulk string or status, nil otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case .string(let bytes): return bytes
        case .status(let text): return Array(text.utf8)
        default: return nil
        }
    }

    /// A bulk string or status as text.
    public var text: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// An integer reply, or a bulk string that spells one.
    public var integer: Int64? {
        switch self {
        case .integer(let value): return value
        case .string(let bytes): return Int64(String(decoding: bytes, as: UTF8.self))
        default: return nil
        }
    }

    public var array: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The error message of an error reply.
    public var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }
}

extension RedisReply: CustomStringConvertible {
    /// Readable, for error messages: bulk strings as quoted text (the first 64 bytes), errors
    /// with their `-`.
    public var description: String {
        switch self {
        case .status(let text): return text
        case .error(let message): return "-\(message)"
        case .integer(let value): return String(value)
        case .string(let bytes):
            let shown = String(decoding: bytes.prefix(64), as: UTF8.self).debugDescription
            return bytes.count > 64 ? "\(shown)… (\(bytes.count) bytes)" : shown
        case .null: return "nil"
        case .array(let elements): return "[" + elements.prefix(8).map(\.description).joined(separator: ", ") + (elements.count > 8 ? ", …]" : "]")
        }
    }
}
