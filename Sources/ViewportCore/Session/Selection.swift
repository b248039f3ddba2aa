/// An update's `select`: an item (`"select": "<id>"`) or none (`"select": null`). An update without
/// `select` keeps the selection (`ViewportUpdate.select == nil`).
public enum Selection: Hashable, Sendable {
    case item(Int)
    case clear

    /// The selected item, nil for `clear`.
    public var item: Int? {
        if case .item(let item) = self { return item }
        return nil
    }
}
