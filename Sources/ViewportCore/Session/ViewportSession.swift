/// One scroll view of one client: where it is, which items are shown by which views, the reuse
/// pools, and the counters. A pure state machine: `apply(_:)` turns an update into a plan.
///
/// Not thread-safe by itself; the service keeps each session behind a lock.
public struct ViewportSession: Sendable {
    public internal(set) var layout: Layout
    public internal(set) var offset: Point
    public internal(set) var viewport: Size
    public let buffer: Buffer
    public let insets: Insets
    public let poolCaps: PoolCaps

    /// The materialized region at the current offset and viewport.
    public internal(set) var region: Region
    /// The motion `region` leans toward (see `Buffer`): that of the last update.
    public internal(set) var motion = Motion.none
    /// The session's last client time (`time`), nil until an update or the opening carries one.
    public internal(set) var time: Double?
    /// Item → view of every materialized item.
    var shown = IntMap()
    /// Pooled views by reuse class (index); classes past the end have empty pools.
    var pools: [ReusePool] = []
    /// (item, reuse class) → the pooled view that last showed that item, for same-item reuse,
    /// keyed by ``PooledItemKey/packed``. Keyed by class too: after a layout change an item's old
    /// view may sit in another pool.
    var pooledByItem = IntMap()
    var pooledCount = 0
    /// Cap per reuse class of the current layout (absent: `defaultCap`).
    var capByClass: [Int: Int] = [:]
    var defaultCap: Int?
    var nextView = 1
    /// Where the region may move without changing the materialized set (see `SafeWindow`).
    var safeWindow: SafeWindow?
    /// The sticky header pinned at the top, if any (see `ViewportSession+Sticky.swift`).
    public internal(set) var pinned: PinnedHeader?

    /// The last applied sequence number (0 is the opening plan).
    public internal(set) var seq: UInt64 = 0
    /// Edits of the session's layout applied (PATCH), see `ViewportSession+Edit.swift`.
    public internal(set) var edits = 0
    /// The plan of `seq`, answered again on a retry.
    public internal(set) var lastPlan: Plan
    public internal(set) var stats = SessionStats()
    /// Reuse identifiers of pooled views that the current layout does not use (after a layout
    /// change), by class `layout.reuseNames.count + k`.
    var extraReuseNames: [String] = []

    // Paging and the scrolling helpers (see `ViewportSession+Helpers.swift`). A helper that is off
    // is nil or empty and costs nothing.
    public let paging: PagingOptions
    /// The offset of the last `drag-begin` not yet answered by a `drag-end` (`b`).
    var dragBegin: Point?
    /// The selected item (`select`).
    public internal(set) var selected: Int?
    var prefetcher: Prefetcher?
    var lazyLoader: LazyLoader?
    var exposureTracker: ExposureTracker?
    /// Followers of `links`, by name in ascending order.
    let links: [(name: String, view: LinkedScrollView)]
    /// The looping content, nil when the session does not loop.
    let loop: LoopSpace?
    /// With `loop`: item → the shift of the copy its view shows (empty without `loop`).
    var loopShifts: [Int: Double] = [:]
    /// Whether some helper needs work after every update.
    let usesHelpers: Bool
    /// Most items materialized at once; nil for no limit.
    public let maxViews: Int?
    /// Set by a resync (the client's views replaced the session's): `shown` need not be the
    /// items of `region`, so the next update compares the shown items with the new region
    /// itself instead of diffing the two regions.
    var needsFullDiff = false

    /// Opens a session; its opening plan (`seq` 0) creates a view for every materialized item.
    public init(layout: Layout, configuration: SessionConfiguration) throws(SessionError) {
        try configuration.validate()
        self.layout = layout
        self.offset = configuration.offset
        self.viewport = configuration.viewport
        self.buffer = configuration.buffer
        self.insets = configuration.insets
        self.poolCaps = configuration.pool
        self.region = Region(offset: configuration.offset, viewport: configuration.viewport, buffer: configuration.buffer, motion: .none)
        self.time = configuration.time
        self.lastPlan = Plan(seq: 0, offset: configuration.offset)
        self.paging = configuration.paging
        self.prefetcher = configuration.prefetch.map { Prefetcher(seconds: $0) }
        self.lazyLoader = configuration.lazyLoad ? LazyLoader() : nil
        self.exposureTracker = configuration.exposure ? ExposureTracker(rule: configuration.exposureRule) : nil
        self.links = configuration.links.sorted { $0.key < $1.key }.map { (name: $0.key, view: $0.value) }
        self.loop = try Self.makeLoop(layout: layout, configuration: configuration)
        self.usesHelpers = configuration.usesHelpers
        self.maxViews = configuration.maxViews
        if let loop { try Self.checkLoop(loop, viewport: viewport, buffer: buffer.still, paging: paging, field: "loop") }
        if let target = configuration.scrollTo {
            // The opening plan starts where `scrollTo` puts the item, scrolling from `offset`.
            guard layout.rects.indices.contains(target.item) else {
                throw .invalid(field: "scrollTo.id", reason: "item \(target.item) is not in the layout")
            }
            offset = Self.scrollOffset(to: target, viewport: viewport, from: offset, layout: layout, insets: insets, loop: loop)
            region = Region(offset: offset, viewport: viewport, buffer: buffer, motion: .none)
            lastPlan = Plan(seq: 0, offset: offset)
        }
        if let loop, abs(loop.axis.component(of: offset)) > LoopSpace.maxOffset {
            throw .invalid(field: "offset", reason: "must be within ±\(LoopSpace.maxOffset) along the loop axis")
        }
        resolveCaps()
        var entering = loop == nil ? layout.items(in: region) : items(in: region)
        let pin = loop == nil ? pinnedHeader(at: offset) : nil
        if let pin, !entering.contains(pin.item) {
            entering.insert(pin.item, at: entering.firstIndex { $0 > pin.item } ?? entering.count)
        }
        try checkViewLimit(entering.count, field: "viewport")
        var plan = makePlan(leaving: [], entering: entering, offset: offset)
        pinned = pin
        plan.pin = pinEntries(old: nil, new: pin).pin
        if usesHelpers {
            finishPlan(&plan, phase: .idle, velocity: nil, time: time, previous: nil, leaving: [], entering: entering)
        }
        lastPlan = plan
    }

    /// The number of views the client holds now, shown or pooled.
    public var liveViews: Int { shown.count + pooledCount }

    /// The handle the next new view gets; every handle the session assigned is below it.
    public var nextHandle: Int { nextView }

    /// Makes every handle the session assigns from now on at least `handle` (a store hands a
    /// new owner a range above anything a previous owner may have assigned).
    public mutating func reserveHandles(from handle: Int) { nextView = max(nextView, handle) }

    /// Applies one update, or answers the last plan again for a retry (`seq` equal to the last).
    ///
    /// Nothing changes when it throws.
    /// - Complexity: O(log n + c log c) for c items entering or leaving (plus the items that straddle
    ///   the region's moving edges), independent of how many items stay shown. Helpers add their
    ///   own queries (see `finishPlan`); a looping session is O(log n + k log k) for k shown items.
    public mutating func apply(_ update: ViewportUpdate) throws(SessionError) -> Plan {
        let newViewport = update.size ?? viewport
        let newOffset: Point
        if case .offset(let point) = update.destination, update.size == nil, update.velocity == nil,
            update.select == nil, update.time == nil, loop == nil, point.isFinite
        {
            newOffset = point  // the common case: nothing more to check
        } else {
            newOffset = try validate(update, viewport: newViewport)
        }
        if let sent = update.seq {
            if sent == seq { return lastPlan }
            guard sent == seq &+ 1 else { throw .sequenceConflict(current: seq, sent: sent) }
        }
        let newMotion = Motion(velocity: update.velocity, from: offset, to: newOffset)
        let newRegion = Region(offset: newOffset, viewport: newViewport, buffer: buffer, motion: newMotion)
        let previous = (offset: offset, viewport: viewport)
        let newPin = layout.stickyItems.isEmpty || loop != nil ? nil : pinnedHeader(at: newOffset)
        if let window = safeWindow, window.contains(newRegion), newPin == pinned {
            // Nothing enters or leaves: O(1).
            advance(to: newOffset, viewport: newViewport, motion: newMotion, update: update)
            region = newRegion
            var plan = Plan(seq: seq, offset: offset)
            if needsFinishing(update.phase) {
                finishPlan(&plan, phase: update.phase, velocity: update.velocity, time: update.time, previous: previous, leaving: [], entering: [])
            }
            lastPlan = plan
            return plan
        }
        let sameX = newRegion.minX == region.minX && newRegion.maxX == region.maxX
        let sameY = newRegion.minY == region.minY && newRegion.maxY == region.maxY
        let moved = max(
            abs(newRegion.minX - region.minX), abs(newRegion.maxX - region.maxX),
            abs(newRegion.minY - region.minY), abs(newRegion.maxY - region.maxY))
        var leaving: [Int]
        var entering: [Int]
        var newWindow: SafeWindow?
        var pinsAdjusted = false
        if needsFullDiff && loop == nil {
            // After a resync: what is shown against what the new region (and pin) needs.
            let pinnedItem = newPin?.item
            leaving = shown.keys.filter { $0 != pinnedItem && !newRegion.intersects(layout.rects[$0]) }.sorted()
            var needed = layout.items(in: newRegion)
            if let pinnedItem, !needed.contains(pinnedItem) {
                needed.insert(pinnedItem, at: needed.firstIndex { $0 > pinnedItem } ?? needed.count)
            }
            entering = needed.filter { shown[$0] == nil }
            pinsAdjusted = true
        } else if let loop {
            // Periodic content: compare the shown items with the ones at the new region. An item
            // whose view must move to another copy of it (a jump) leaves and enters again.
            let moving = shown.keys.filter { item in
                loop.copyShift(of: layout.rects[item], in: newRegion).map { $0 != loopShifts[item] } ?? true
            }
            leaving = moving.sorted()
            let movingSet = Set(moving)
            entering = items(in: newRegion).filter { shown[$0] == nil || movingSet.contains($0) }
        } else if sameX != sameY && moved < SafeWindow.lookahead {
            // A drag along one axis: two queries around the moving edges find what changed and
            // measure the next safe window.
            var window = SafeWindow(axis: sameX ? .y : .x, around: newRegion)
            (leaving, entering) = changedItemsNearEdges(from: region, to: newRegion, window: &window)
            newWindow = window
        } else {
            leaving = changedItems(in: region, notIn: newRegion)
            entering = changedItems(in: newRegion, notIn: region)
        }
        if !pinsAdjusted && (newPin != nil || pinned != nil) {
            adjustForPins(leaving: &leaving, entering: &entering, old: pinned?.item, new: newPin?.item, oldRegion: region, newRegion: newRegion)
        }
        try checkViewLimit(shown.count - leaving.count + entering.count, field: update.size == nil ? "offset" : "size")
        // Nothing has changed up to here; from here on the update is applied.
        advance(to: newOffset, viewport: newViewport, motion: newMotion, update: update)
        safeWindow = newWindow
        region = newRegion
        needsFullDiff = false
        var plan = makePlan(leaving: takeLeaving(leaving), entering: entering, offset: offset)
        if newPin != nil || pinned != nil {
            (plan.pin, plan.unpin) = pinEntries(old: pinned, new: newPin)
            pinned = newPin
        }
        if needsFinishing(update.phase) {
            finishPlan(&plan, phase: update.phase, velocity: update.velocity, time: update.time, previous: previous, leaving: leaving, entering: entering)
        }
        lastPlan = plan
        return plan
    }

    /// Whether paging or a helper has something to add to a plan (after `select` is applied).
    @inline(__always)
    private func needsFinishing(_ phase: ScrollPhase) -> Bool {
        usesHelpers || selected != nil || phase == .dragEnd || phase == .dragBegin
    }

    /// Takes the next sequence number and moves to the update's offset, viewport, motion and time.
    @inline(__always)
    private mutating func advance(to newOffset: Point, viewport newViewport: Size, motion newMotion: Motion, update: ViewportUpdate) {
        seq += 1
        stats.updates += 1
        offset = newOffset
        viewport = newViewport
        motion = newMotion
        if let select = update.select { selected = select.item }
        if let t = update.time { time = t }
    }

    /// Refuses a state with more materialized items than `maxViews` (a 100-byte generated layout
    /// of a million zero-size items would otherwise make a plan of a million views).
    func checkViewLimit(_ count: Int, field: String) throws(SessionError) {
        guard let limit = maxViews, count > limit else { return }
        throw .invalid(field: field, reason: "would materialize \(count) items, more than this session's limit of \(limit) (sessions.maxViews)")
    }

    /// Checks an update before anything changes, and answers the offset it goes to.
    private func validate(_ update: ViewportUpdate, viewport newViewport: Size) throws(SessionError) -> Point {
        if let size = update.size {
            guard size.isValidExtent else {
                throw .invalid(field: "size", reason: "width and height must be finite and not negative")
            }
            if let loop, size != viewport {
                try Self.checkLoop(loop, viewport: size, buffer: buffer.still, paging: paging, field: "size")
            }
        }
        if let t = update.time {
            guard t.isFinite else { throw .invalid(field: "time", reason: "must be finite") }
            if let last = time, t < last {
                throw .invalid(
                    field: "time", reason: "\(Self.plain(t)) is lower than the session's last time \(Self.plain(last)) (the client's clock must not go back)")
            }
        }
        if let velocity = update.velocity, !velocity.isFinite {
            throw .invalid(field: "velocity", reason: "must be finite")
        }
        if case .item(let item) = update.select, !layout.rects.indices.contains(item) {
            throw .invalid(field: "select", reason: "item \(item) is not in the layout")
        }
        let newOffset: Point
        switch update.destination {
        case .offset(let point):
            guard point.isFinite else { throw .invalid(field: "offset", reason: "must be finite") }
            newOffset = point
        case .scrollTo(let target):
            guard layout.rects.indices.contains(target.item) else {
                throw .invalid(field: "scrollTo.id", reason: "item \(target.item) is not in the layout")
            }
            try target.validate()
            newOffset = scrollOffset(to: target, viewport: newViewport)
        }
        if let loop, abs(loop.axis.component(of: newOffset)) > LoopSpace.maxOffset {
            throw .invalid(field: "offset", reason: "must be within ±\(LoopSpace.maxOffset) along the loop axis")
        }
        return newOffset
    }

    /// A number as a JSON client wrote it: `9`, not `9.0`.
    static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }

    /// Every materialized item with its view, in layout order.
    public var visible: [PlanEntry] {
        shown.map { PlanEntry(item: $0.key, view: $0.value) }.sorted { $0.item < $1.item }
    }

    /// Each reuse identifier's pooled views, oldest first, identifiers in layout order of first use.
    public var pooledViews: [(reuse: String, views: [Int])] {
        pools.enumerated().filter { !$0.element.isEmpty }.map {
            (reuseName(ofClass: $0.offset), $0.element.entries.map(\.view))
        }
    }

    // MARK: Diffing

    /// Items that leave and enter on a move of less than `SafeWindow.lookahead` along the window's
    /// axis, found by one query around each moving edge; every candidate also narrows `window`.
    private func changedItemsNearEdges(from old: Region, to new: Region, window: inout SafeWindow) -> ([Int], [Int]) {
        var leaving: [Int] = []
        var entering: [Int] = []
        let (oldLow, oldHigh) = window.axis == .y ? (old.minY, old.maxY) : (old.minX, old.maxX)
        let spans = window.spans
        for (k, span) in spans.enumerated() {
            // Each span also covers the strip its edge swept.
            let oldEdge = k == 0 ? oldLow : oldHigh
            let from = min(span.0, oldEdge)
            let to = max(span.1, oldEdge)
            let visit = { (item: Int, r: Rect) in
                let wasIn = old.intersects(r)
                let isIn = new.intersects(r)
                if wasIn && !isIn {
                    leaving.append(item)
                } else if isIn && !wasIn {
                    entering.append(item)
                }
                window.observe(r)
            }
            if window.axis == .y {
                layout.forEachItem(minX: new.minX, minY: from, maxX: new.maxX, maxY: to, visit)
            } else {
                layout.forEachItem(minX: from, minY: new.minY, maxX: to, maxY: new.maxY, visit)
            }
        }
        return (Self.sortedUnique(leaving), Self.sortedUnique(entering))
    }

    static func sortedUnique(_ items: [Int]) -> [Int] {
        guard items.count > 1 else { return items }
        var found = items
        found.sort()
        var unique = 0
        for item in found where unique == 0 || found[unique - 1] != item {
            found[unique] = item
            unique += 1
        }
        found.removeLast(found.count - unique)
        return found
    }

    /// Items materialized in `a` but not in `b`, in layout order.
    ///
    /// Such an item lies outside `b` on some side, so it touches one of the (at most four) strips
    /// of `a` beyond `b`'s edges; only those strips are searched.
    func changedItems(in a: Region, notIn b: Region) -> [Int] {
        guard a != b else { return [] }
        var found: [Int] = []
        func search(_ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) {
            layout.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { item, r in
                if a.intersects(r) && !b.intersects(r) { found.append(item) }
            }
        }
        if b.minY > a.minY { search(a.minX, a.minY, a.maxX, min(b.minY, a.maxY)) }
        if b.maxY < a.maxY { search(a.minX, max(b.maxY, a.minY), a.maxX, a.maxY) }
        if b.minX > a.minX { search(a.minX, a.minY, min(b.minX, a.maxX), a.maxY) }
        if b.maxX < a.maxX { search(max(b.maxX, a.minX), a.minY, a.maxX, a.maxY) }
        return Self.sortedUnique(found)
    }

    // MARK: Planning

    /// Caps by class, for the current layout's identifiers and those kept from earlier layouts
    /// (`extraReuseNames`: a per-identifier cap holds for its pool after a layout change too).
    mutating func resolveCaps() {
        defaultCap = poolCaps.max
        capByClass = [:]
        for (name, cap) in poolCaps.perReuse {
            if let c = layout.reuseClass(named: name) {
                capByClass[c] = cap
            } else if let k = extraReuseNames.firstIndex(of: name) {
                capByClass[layout.reuseNames.count + k] = cap
            }
        }
    }

    private func cap(of reuseClass: Int) -> Int? { capByClass[reuseClass] ?? defaultCap }

    /// Builds the plan for items leaving and entering (each in layout order) and applies it to the
    /// session's state, following docs/api.md "Plans": leaving views are pooled first, in order; then
    /// entering items take back their own last view; then the others, in layout order, take the
    /// most recently pooled view; then pools over their cap drop the oldest views pooled by this
    /// plan.
    /// The name of a reuse class of the current layout, or of one kept from an earlier layout.
    func reuseName(ofClass c: Int) -> String {
        c < layout.reuseNames.count ? layout.reuseNames[c] : extraReuseNames[c - layout.reuseNames.count]
    }

    /// Drops the same-item index entry of a view leaving its pool.
    private mutating func forgetPooled(_ entry: ReusePool.Entry, reuseClass c: Int) {
        guard entry.lastItem >= 0 else { return }
        let key = PooledItemKey(item: entry.lastItem, reuseClass: c).packed
        if pooledByItem[key] == entry.view { pooledByItem[key] = nil }
    }

    /// Removes leaving items of the current layout from `shown`, with their views and classes.
    private mutating func takeLeaving(_ items: [Int]) -> [LeavingItem] {
        items.compactMap { item in
            shown.removeValue(forKey: item).map {
                LeavingItem(item: item, view: $0, reuseClass: layout.reuseClass(of: item), poolItem: item)
            }
        }
    }

    /// Builds the plan for items leaving and entering (each in layout order) and applies it to the
    /// session's state, following docs/api.md "Plans": leaving views are pooled first, in order; then
    /// entering items take back their own last view; then the others, in layout order, take the
    /// most recently pooled view; then pools over their cap drop the oldest views pooled by this
    /// plan. Leaving items are already out of `shown`.
    mutating func makePlan(leaving: [LeavingItem], entering: [Int], offset: Point) -> Plan {
        var plan = Plan(seq: seq, offset: offset)
        var touchedClasses: [Int] = []
        for leave in leaving where leave.reuseClass >= 0 {
            let c = leave.reuseClass
            pools.push(.init(view: leave.view, lastItem: leave.poolItem, pooledAt: seq), reuseClass: c)
            if leave.poolItem >= 0 { pooledByItem[PooledItemKey(item: leave.poolItem, reuseClass: c).packed] = leave.view }
            pooledCount += 1
            if !touchedClasses.contains(c) { touchedClasses.append(c) }
        }

        // Entering: their own last view first, then the newest pooled view, else a new view.
        // `assigned[k]` is nil until entering item k has a view.
        var assigned = [EnteringView?](repeating: nil, count: entering.count)
        if pooledCount > 0 {
            for (k, item) in entering.enumerated() {
                let c = layout.reuseClass(of: item)
                guard c >= 0 else { continue }
                let key = PooledItemKey(item: item, reuseClass: c).packed
                guard let view = pooledByItem[key], c < pools.count, pools[c].take(view: view) != nil else { continue }
                pooledByItem[key] = nil
                pooledCount -= 1
                assigned[k] = EnteringView(view: view, reused: true, rebind: false)
            }
        }
        for (k, item) in entering.enumerated() where assigned[k] == nil {
            let c = layout.reuseClass(of: item)
            if c >= 0, c < pools.count, let entry = pools[c].popNewest() {
                forgetPooled(entry, reuseClass: c)
                pooledCount -= 1
                assigned[k] = EnteringView(view: entry.view, reused: true, rebind: entry.lastItem != item)
            } else {
                assigned[k] = EnteringView(view: nextView, reused: false, rebind: true)
                nextView += 1
            }
        }
        for (k, item) in entering.enumerated() {
            guard let a = assigned[k] else { continue }
            shown[item] = a.view
            if a.reused {
                plan.reuse.append(ReuseEntry(item: item, view: a.view, rebind: a.rebind))
                if !a.rebind { stats.rebindFree += 1 }
            } else {
                plan.create.append(PlanEntry(item: item, view: a.view))
            }
        }

        // Caps apply once the plan is applied: drop the oldest views this plan pooled.
        var cappedViews: Set<Int> = []
        for c in touchedClasses {
            guard let limit = cap(of: c), pools[c].count > limit else { continue }
            for entry in pools[c].trim(excess: pools[c].count - limit, pooledAt: seq) {
                forgetPooled(entry, reuseClass: c)
                pooledCount -= 1
                cappedViews.insert(entry.view)
            }
        }
        for leave in leaving {
            let entry = PlanEntry(item: leave.item, view: leave.view)
            if leave.reuseClass < 0 || cappedViews.contains(leave.view) {
                plan.discard.append(entry)
            } else {
                plan.recycle.append(entry)
            }
        }

        stats.created += plan.create.count
        stats.reused += plan.reuse.count
        stats.recycled += plan.recycle.count
        stats.discarded += plan.discard.count
        stats.peakViews = max(stats.peakViews, shown.count + pooledCount)
        return plan
    }
}

/// An item leaving the materialized region, as the planner needs it.
struct LeavingItem {
    /// Its position in the layout it leaves (for the plan's lists).
    var item: Int
    var view: Int
    /// The session's reuse class for its identifier, -1 for none.
    var reuseClass: Int
    /// Its position in the session's current layout, for same-item reuse; -1 if it is not there.
    var poolItem: Int
}

/// The view an entering item gets in `makePlan`: reused from a pool (rebound unless it last
/// showed the same item) or new.
struct EnteringView {
    var view: Int
    var reused: Bool
    var rebind: Bool
}

/// Key of the same-item index: an item and the reuse class of the pool its last view is in.
struct PooledItemKey {
    var item: Int
    var reuseClass: Int

    /// Both in one non-negative `Int` for ``IntMap`` (items and classes are below 2^31: a layout
    /// holds at most `layouts.maxItems` items and as many reuse identifiers).
    var packed: Int { item << 32 | reuseClass }
}

extension [ReusePool] {
    /// Pools `entry` in the pool of `reuseClass`, adding empty pools up to it.
    mutating func push(_ entry: ReusePool.Entry, reuseClass c: Int) {
        if c >= count { append(contentsOf: repeatElement(ReusePool(), count: c - count + 1)) }
        self[c].push(entry)
    }
}
