/// Why a layout is invalid. Each case names the item (by position and, where it has one, id) and
/// the rule it breaks; the service answers them as 422.
public enum LayoutError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyID(index: Int)
    case idTooLong(index: Int, bytes: Int)
    case nonFiniteRect(index: Int, id: String)
    /// `x + width` or `y + height` is beyond the range of a double: the item's far edge (and the
    /// default content size) would be infinite.
    case extentOverflow(index: Int, id: String)
    case negativeSize(index: Int, id: String)
    case duplicateID(id: String, first: Int, second: Int)
    case invalidContentSize(Size)
    case tooManyItems(count: Int, limit: Int)
    /// A generated section whose description is invalid (`field` names the part).
    case invalidSection(field: String, reason: String)

    public var description: String {
        switch self {
        case .emptyID(let index):
            return "items[\(index)].id: must not be empty"
        case .idTooLong(let index, let bytes):
            return "items[\(index)].id: \(bytes) bytes of UTF-8, at most \(Layout.maxIDBytes) allowed"
        case .nonFiniteRect(let index, let id):
            return "items[\(index)].rect (id \"\(id)\"): every number must be finite"
        case .extentOverflow(let index, let id):
            return "items[\(index)].rect (id \"\(id)\"): x + width and y + height must be finite numbers"
        case .negativeSize(let index, let id):
            return "items[\(index)].rect (id \"\(id)\"): width and height must not be negative"
        case .duplicateID(let id, let first, let second):
            return "items[\(second)].id: \"\(id)\" is already the id of items[\(first)]"
        case .invalidContentSize(let size):
            return "contentSize: [\(size.width), \(size.height)] must be finite and not negative"
        case .invalidSection(let field, let reason):
            return "\(field): \(reason)"
        case .tooManyItems(let count, let limit):
            return "items: \(count) items, at most \(limit) allowed (layouts.maxItems)"
        }
    }
}
