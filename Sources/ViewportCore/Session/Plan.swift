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

/// What a client must do to its views for one update, as a delta from the previous state.
///
/// The client applies `recycle` and `discard` before `reuse` and `create`. Every list is in layout
/// order. Items are positions in the session's layout.
public struct Plan: Equatable, Sendable {
    public var seq: UInt64
    public var offset: Point
    /// Items that left; their views go into the reuse pool of their identifier.
    public var recycle: [PlanEntry] = []
    /// Items that left; their views are released.
    public var discard: [PlanEntry] = []
    /// Items that entered and take a pooled view.
    public var reuse: [ReuseEntry] = []
    /// Items that entered and need a new view.
    public var create: [PlanEntry] = []
    /// After a layout change: items that kept their view but whose rect changed (new layout).
    public var move: [PlanEntry] = []
    /// After a layout change: the layout `recycle` and `discard` refer to (the previous one).
    public var previousLayout: Layout?

    public init(seq: UInt64, offset: Point) {
        self.seq = seq
        self.offset = offset
    }

    /// True when the plan asks the client to do nothing to its views.
    public var isEmpty: Bool { recycle.isEmpty && discard.isEmpty && reuse.isEmpty && create.isEmpty && move.isEmpty }

    public static func == (a: Plan, b: Plan) -> Bool {
        a.seq == b.seq && a.offset == b.offset && a.recycle == b.recycle && a.discard == b.discard && a.reuse == b.reuse
            && a.create == b.create && a.move == b.move && a.previousLayout === b.previousLayout
    }
}
