/// Why a session refused an update. Nothing about the session changes when one is thrown.
public enum SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A well-formed but invalid value (HTTP 422).
    case invalid(field: String, reason: String)
    /// `seq` is neither the last applied sequence number nor the next one (HTTP 409).
    case sequenceConflict(current: UInt64, sent: UInt64)
    /// An edit would make the layout larger than allowed (HTTP 413, like `layouts.maxItems`).
    case tooLarge(field: String, reason: String)

    /// A `seq` below 0 as sent. JSON allows one, and it is neither the last sequence number nor
    /// the next, so it is a conflict like any other (docs/api.md "Updates"); this value stands for
    /// it (no session reaches 2^64 − 1 updates), and is not a client ahead of the session.
    public static let seqBelowZero = UInt64.max

    public var description: String {
        switch self {
        case .invalid(let field, let reason), .tooLarge(let field, let reason): return "\(field): \(reason)"
        case .sequenceConflict(let current, let sent):
            let shown = sent == Self.seqBelowZero ? "below 0" : "\(sent)"
            return "seq \(shown) does not follow the session's last sequence number \(current): send \(current + 1), or \(current) to retry"
        }
    }
}
