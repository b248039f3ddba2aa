/// An entering item bound to a pooled view.
public struct ReuseEntry: Hashable, Sendable {
    public var item: Int
    public var view: Int
    /// False when the view last showed this same item: nothing to reload.
    public var rebind: Bool

    public init(item: Int, view: Int, rebind: Bool) {
        self.item = item
        self.view = view
        self.rebind = rebind
    }
}
