/// What a client must do to its views for one update, as a delta from the previous state.
///
/// The client applies `recycle` and `discard` before `reuse` and `create`. Every list is in layout
/// order. Items are positions in the session's layout.
///
/// Besides the views, a plan carries the outputs of paging (`target`, `page`) and of the scrolling
/// helpers (`prefetch`, `cancelPrefetch`, `load`, `enter`, `leave`, `viewed`, `linked`, `selected`) and of
/// `loop` (`placements`, `recenter`); each is empty or nil when it has nothing to say.
public struct Plan: Hashable, Sendable {
    public var seq: UInt64
    /// The offset the plan was made at (for `scrollTo`, the resulting offset); rects of entering
    /// items are in this offset's coordinates.
    public var offset: Point
    /// Items that left; their views go into the reuse pool of their identifier.
    /// (Builds an array: encoders read `withViewLists` instead.)
    public var recycle: [PlanEntry] {
        get { withViewLists { Self.planEntries($0.recycle) } }
        set { setViews(recycle: newValue, discard: discard, reuse: reuse, create: create) }
    }
    /// Items that left; their views are released.
    public var discard: [PlanEntry] {
        get { withViewLists { Self.planEntries($0.discard) } }
        set { setViews(recycle: recycle, discard: newValue, reuse: reuse, create: create) }
    }
    /// Items that entered and take a pooled view.
    public var reuse: [ReuseEntry] {
        get { withViewLists { Array($0.reuse) } }
        set { setViews(recycle: recycle, discard: discard, reuse: newValue, create: create) }
    }
    /// Items that entered and need a new view.
    public var create: [PlanEntry] {
        get { withViewLists { Self.planEntries($0.create) } }
        set { setViews(recycle: recycle, discard: discard, reuse: reuse, create: newValue) }
    }
    /// A stored list (entries kept as `ReuseEntry`) as the `PlanEntry`s its getter answers.
    private static func planEntries(_ list: UnsafeBufferPointer<ReuseEntry>) -> [PlanEntry] {
        list.map { PlanEntry(item: $0.item, view: $0.view) }
    }

    /// How many entries `recycle`, `discard`, `reuse` and `create` have, without building them.
    public var recycleCount: Int { views?.counts.recycle ?? 0 }
    public var discardCount: Int { views?.counts.discard ?? 0 }
    public var reuseCount: Int { views?.counts.reuse ?? 0 }
    public var createCount: Int { views?.counts.create ?? 0 }

    /// Calls `body` with the four view lists read in place (no array built); the buffers are
    /// valid only inside `body`.
    public func withViewLists<R>(_ body: (PlanViewLists) throws -> R) rethrows -> R {
        guard let views else { return try body(.empty) }
        return try withExtendedLifetime(views) { try body(views.lists) }
    }

    /// The four view lists in one allocation; nil when all are empty (most updates of a drag).
    /// One reference instead of four arrays: a plan is copied and destroyed a few times on its
    /// way out (the last one is kept for retries), and each array was a retain and a release
    /// every time (`perf` of `viewport-bench 1000000 still`: ~30 % of an update that changes
    /// nothing); and one allocation instead of one per list (see `PlanViews`). The box is never
    /// changed after it is made (`ManagedBuffer` cannot conform to `Sendable` itself).
    nonisolated(unsafe) private var views: PlanViews?
    /// Helper outputs; nil when there are none. Boxed so that a plan without them stays the size
    /// of the view lists (plans are copied on every update).
    private var box: PlanExtras.Box?

    /// The helper outputs, nil when there are none.
    var extras: PlanExtras? { box?.value }

    /// Whether any paging, helper or loop output is set (cheap: one pointer test).
    public var hasExtras: Bool { box != nil }

    public init(seq: UInt64, offset: Point) {
        self.seq = seq
        self.offset = offset
    }

    /// A plan with its four view lists.
    public init(seq: UInt64, offset: Point, recycle: [PlanEntry], discard: [PlanEntry], reuse: [ReuseEntry], create: [PlanEntry]) {
        self.seq = seq
        self.offset = offset
        setViews(recycle: recycle, discard: discard, reuse: reuse, create: create)
    }

    /// A plan whose view lists `fill` writes in place: `counts.total` entries in storage order
    /// (recycle, discard, reuse, create), every one of them initialized.
    init(seq: UInt64, offset: Point, counts: PlanViews.Counts, fill: (UnsafeMutablePointer<ReuseEntry>) -> Void) {
        self.seq = seq
        self.offset = offset
        if counts.total > 0 { views = PlanViews.make(counts: counts, fill: fill) }
    }

    /// Replaces the four view lists (one box, or nil when all are empty).
    private mutating func setViews(recycle: [PlanEntry], discard: [PlanEntry], reuse: [ReuseEntry], create: [PlanEntry]) {
        views =
            recycle.isEmpty && discard.isEmpty && reuse.isEmpty && create.isEmpty
            ? nil : PlanViews.make(recycle: recycle, discard: discard, reuse: reuse, create: create)
    }

    /// True when the plan asks the client to do nothing to its views.
    public var isEmpty: Bool {
        views == nil && move.isEmpty && pin.isEmpty && unpin.isEmpty
    }

    /// True when the plan is `Plan(seq:offset:)` and nothing else: no view lists, no outputs.
    var isBare: Bool { views == nil && box == nil }

    /// Changes the helper outputs in place.
    @inline(__always)
    mutating func updateExtras(_ body: (inout PlanExtras) -> Void) {
        var e = box?.value ?? PlanExtras()
        body(&e)
        box = e == .empty ? nil : PlanExtras.Box(e)
    }

    public static func == (a: Plan, b: Plan) -> Bool {
        a.seq == b.seq && a.offset == b.offset && a.recycle == b.recycle && a.discard == b.discard
            && a.reuse == b.reuse && a.create == b.create && a.extras == b.extras
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(seq)
        hasher.combine(offset)
        hasher.combine(recycle)
        hasher.combine(discard)
        hasher.combine(reuse)
        hasher.combine(create)
        hasher.combine(extras)
    }

    // MARK: Layout changes and sticky headers

    /// After a layout change: items that kept their view but whose rect changed (new layout).
    public var move: [PlanEntry] {
        get { extras?.move ?? [] }
        set { updateExtras { $0.move = newValue } }
    }

    /// After a layout change: the layout `recycle`, `discard`, `leave` and `cancelPrefetch` refer
    /// to (the previous one).
    public var previousLayout: Layout? {
        get { extras?.previousLayout?.layout }
        set { updateExtras { $0.previousLayout = newValue.map(LayoutReference.init) } }
    }

    /// After an edit of the session's layout (PATCH) that changed the content size: the new one.
    public var contentSize: Size? {
        get { extras?.contentSize }
        set { updateExtras { $0.contentSize = newValue } }
    }

    /// A sticky header newly pinned, or whose pinned rect moved (pushed by the next header).
    public var pin: [PinEntry] {
        get { extras?.pin ?? [] }
        set { updateExtras { $0.pin = newValue } }
    }

    /// A sticky header no longer pinned that stays materialized: back to its layout rect.
    public var unpin: [PinEntry] {
        get { extras?.unpin ?? [] }
        set { updateExtras { $0.unpin = newValue } }
    }

    // MARK: Paging

    /// `target`: where a drag comes to rest; on `drag-end` plans only.
    public var target: Point? {
        get { extras?.target }
        set { updateExtras { $0.target = newValue } }
    }

    /// `page`: the page of `target` in the modes `page` and `snap` (with `loop`, in
    /// `0 ..< pages`).
    public var page: Int? {
        get { extras?.page }
        set { updateExtras { $0.page = newValue } }
    }

    // MARK: Helpers

    /// `prefetch`: items predicted to be materialized soon, each listed once while predicted.
    public var prefetch: [Int] {
        get { extras?.prefetch ?? [] }
        set { updateExtras { $0.prefetch = newValue } }
    }

    /// `cancelPrefetch`: items predicted earlier that no longer are and did not enter.
    public var cancelPrefetch: [Int] {
        get { extras?.cancelPrefetch ?? [] }
        set { updateExtras { $0.cancelPrefetch = newValue } }
    }

    /// `load`: items whose heavy content should be loaded now.
    public var load: [Int] {
        get { extras?.load ?? [] }
        set { updateExtras { $0.load = newValue } }
    }

    /// `enter`: items that came into the screen region, with their enter counts.
    public var enter: [ExposureEntry] {
        get { extras?.enter ?? [] }
        set { updateExtras { $0.enter = newValue } }
    }

    /// `leave`: items that went out of the screen region.
    public var leave: [Int] {
        get { extras?.leave ?? [] }
        set { updateExtras { $0.leave = newValue } }
    }

    /// `viewed`: with `exposure.minTime`, items whose stay on screen has lasted `minTime` seconds of
    /// client time, once per stay, with how many of their stays were viewed (from 1).
    public var viewed: [ExposureEntry] {
        get { extras?.viewed ?? [] }
        set { updateExtras { $0.viewed = newValue } }
    }

    /// `linked`: each follower's offset, by name in ascending order.
    public var linked: [LinkedOffset] {
        get { extras?.linked ?? [] }
        set { updateExtras { $0.linked = newValue } }
    }

    /// The session's selected item: `create` and `reuse` entries of it carry `"selected": true`.
    public var selected: Int? {
        get { extras?.selected }
        set { updateExtras { $0.selected = newValue } }
    }

    // MARK: Loop

    /// With `loop`: entering items whose view goes to a copy of the item, not its layout rect.
    public var placements: [Placement] {
        get { extras?.placements ?? [] }
        set { updateExtras { $0.placements = newValue } }
    }

    /// With `loop`: after applying the plan, the client adds `recenter` to its content offset and to
    /// the position of every view it shows (the picture does not change: `recenter` is a whole
    /// number of periods along the loop axis). Nil when nothing is to move.
    public var recenter: Point? {
        get { extras?.recenter }
        set { updateExtras { $0.recenter = newValue } }
    }

    /// Where the view of `item` (entering in this plan) goes, in the coordinates of `offset`: its
    /// layout rect, or its `placements` rect in a looping session.
    /// - Complexity: O(p) for p placements (at most the entering items).
    public func rect(of item: Int, in layout: Layout) -> Rect {
        if let placed = extras?.placements.first(where: { $0.item == item }) { return placed.rect }
        return layout.rects[item]
    }
}
