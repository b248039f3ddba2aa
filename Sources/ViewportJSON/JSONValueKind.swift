/// The type of the JSON value at the reader's position, from its first byte.
public enum JSONValueKind: Sendable, Equatable {
    case object, array, string, number, bool, null

    /// `an object`, `a string`, … for messages.
    public var phrase: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}
