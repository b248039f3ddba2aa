/// Why bytes are not a valid stored layout or session snapshot.
public enum BinaryFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes end before the value does.
    case truncated(at: Int)
    /// Not this format, or a version this build cannot read (written by a newer viewportd).
    case unsupported(String)
    /// A value that cannot be (a bad tag, a count beyond the bytes, an id not in the layout).
    case invalid(String)

    public var description: String {
        switch self {
        case .truncated(let at): return "truncated at byte \(at)"
        case .unsupported(let what): return "unsupported: \(what)"
        case .invalid(let what): return "invalid: \(what)"
        }
    }
}
