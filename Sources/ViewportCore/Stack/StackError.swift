/// Why a stack (or an edit of one) is invalid: the field, relative to the stack's object (as
/// `items[3].size` or `lanes`), and the rule it breaks. The caller prefixes the field with where
/// the stack is (`sections[2].stack.`) or which edit it is, and answers 422.
public struct StackError: Error, Hashable, Sendable, CustomStringConvertible {
    public var field: String
    public var reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { "\(field): \(reason)" }

    /// The same error with its field under `prefix` (`prefix + "." + field`).
    public func under(_ prefix: String) -> StackError {
        StackError(field: field.isEmpty ? prefix : prefix + "." + field, reason: reason)
    }
}
