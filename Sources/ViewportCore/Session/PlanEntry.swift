/// An item and the view handle that shows (or showed) it.
public struct PlanEntry: Hashable, Sendable {
    /// Item position in the layout the plan refers to.
    public var item: Int
    public var view: Int

    public init(item: Int, view: Int) {
        self.item = item
        self.view = view
    }
}
