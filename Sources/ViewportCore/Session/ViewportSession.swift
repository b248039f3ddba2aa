/// One scroll view of one client: where it is, which items are shown by which views, the reuse
/// pools, and the counters. A pure state machine: `apply(_:)` turns an update into a plan.
///
/// Not thread-safe by itself; the service keeps each session behind a lock.
public struct ViewportSession: Sendable {
    public internal(set) var layout: Layout
    /// Offset, viewport, motion and region, the client's clock, the diff basis, pinned header and drag.
    var scroll: ScrollState
    /// Item → view of every materialized item.
    var shown = ShownViews()
    /// Pooled views by reuse class, with their count, the same-item index and the caps.
    var pools: ReusePools
    /// The handle of the next new view.
    var handles = ViewHandles()
    /// The last `seq` and its plan: the retry check of updates, layout changes and edits.
    var sequence: UpdateSequence
    /// The scrolling helpers' state and the selection, boxed (see `helpers`): nil while every
    /// helper is off and nothing is selected, as in most sessions.
    private var helpersBox: SessionHelpers.Box?
    public internal(set) var stats = SessionStats()
    /// Edits of the session's layout applied (PATCH), see `ViewportSession+Edit.swift`.
    public internal(set) var edits = 0
    /// Insets, paging, looping and the view limit; one shared instance for the defaults.
    let options: SessionOptions

    public var insets: Insets { options.insets }
    public var paging: PagingOptions { options.paging }
    /// The looping content, nil when the session does not loop.
    var loop: LoopSpace? { options.loop }
    /// Most items materialized at once; nil for no limit.
    public var maxViews: Int? { options.maxViews }

    /// `helpers.areOn`, read on every update (docs/workarounds.md "Accessor coroutines allocate their frame").
    var helpersAreOn: Bool { helpersBox?.value.areOn ?? false }

    /// The scrolling helpers' state and the selection. Kept out of line (176 bytes) and only
    /// for sessions that use them: a session's size is what `sessions.max` multiplies.
    /// A plain getter and a `_modify` of the box's storage (docs/workarounds.md "The helpers' `_read` accessor frees its value too early").
    var helpers: SessionHelpers {
        get { helpersBox?.value ?? .off }
        set { helpersBox = newValue.isOff ? nil : SessionHelpers.Box(newValue) }
        _modify {
            let box: SessionHelpers.Box
            if isKnownUniquelyReferenced(&helpersBox), let unique = helpersBox {
                box = unique
            } else {
                box = SessionHelpers.Box(helpersBox?.value ?? .off)
                helpersBox = box
            }
            yield &box.value
        }
    }

    // Single helpers read in place (docs/workarounds.md "Accessor coroutines allocate their frame").
    var hasPrefetcher: Bool { helpersBox?.value.prefetcher != nil }
    var prefetcher: Prefetcher? { helpersBox?.value.prefetcher }
    var hasLazyLoader: Bool { helpersBox?.value.lazyLoader != nil }
    var hasExposureTracker: Bool { helpersBox?.value.exposureTracker != nil }
    var hasLinks: Bool { !(helpersBox?.value.links.isEmpty ?? true) }
    var links: [(name: String, view: LinkedScrollView)] { helpersBox?.value.links ?? [] }
    /// With `loop`: the shift of the copy `item`'s view shows.
    func loopShift(of item: Int) -> Double? { helpersBox?.value.loopShifts[item] }
    /// With `exposure`: its rule; nil without `exposure`.
    public var exposureRule: ExposureRule? { helpersBox?.value.exposureTracker?.rule }

    public var offset: Point { scroll.offset }
    public var viewport: Size { scroll.viewport }
    public var buffer: Buffer { scroll.buffer }
    public var poolCaps: PoolCaps { pools.caps }
    /// The materialized region at the current offset and viewport.
    public var region: Region { scroll.region }
    /// The motion `region` leans toward (see `Buffer`): that of the last update.
    public var motion: Motion { scroll.motion }
    /// The session's last client time (`time`), nil until an update or the opening carries one.
    public var time: Double? { scroll.time }
    /// The sticky header pinned at the top, if any (see `ViewportSession+Sticky.swift`).
    public var pinned: PinnedHeader? { scroll.pinned }
    /// The last applied sequence number (0 is the opening plan).
    public var seq: UInt64 { sequence.seq }
    /// The plan of `seq`, answered again on a retry.
    public var lastPlan: Plan { sequence.lastPlan }
    /// The selected item (`select`).
    public var selected: Int? { helpersBox?.value.selected }

    /// Opens a session; its opening plan (`seq` 0) creates a view for every materialized item.
    public init(layout: Layout, configuration: SessionConfiguration) throws(SessionError) {
        try configuration.validate()
        self.layout = layout
        self.scroll = ScrollState(offset: configuration.offset, viewport: configuration.viewport, buffer: configuration.buffer, time: configuration.time,
            rtt: configuration.rtt)
        self.pools = ReusePools(caps: configuration.pool)
        self.sequence = UpdateSequence(lastPlan: Plan(seq: 0, offset: configuration.offset))
        let helpers = SessionHelpers(configuration: configuration)
        self.helpersBox = helpers.isOff ? nil : SessionHelpers.Box(helpers)
        self.options = SessionOptions.make(
            insets: configuration.insets, paging: configuration.paging,
            loop: try Self.makeLoop(layout: layout, configuration: configuration), maxViews: configuration.maxViews,
            lookAhead: configuration.lookAhead)
        if let loop { try Self.checkLoop(loop, viewport: viewport, buffer: buffer.still, paging: paging, field: "loop") }
        if let target = configuration.scrollTo {
            // The opening plan starts where `scrollTo` puts the item, scrolling from `offset`.
            guard layout.rects.indices.contains(target.item) else {
                throw .invalid(field: "scrollTo.id", reason: "item \(target.item) is not in the layout")
            }
            let start = Self.scrollOffset(to: target, viewport: viewport, from: offset, layout: layout, insets: insets, loop: loop)
            scroll.move(to: start, viewport: viewport, motion: .none)
        }
        if let loop, abs(loop.axis.component(of: offset)) > LoopSpace.maxOffset {
            throw .invalid(field: "offset", reason: "must be within ±\(LoopSpace.maxOffset) along the loop axis")
        }
        pools.resolveCaps(for: layout)
        var entering = loop == nil ? layout.items(in: region) : items(in: region)
        let pin = loop == nil ? pinnedHeader(at: offset) : nil
        if let pin, !entering.contains(pin.item) {
            entering.insert(pin.item, at: entering.firstIndex { $0 > pin.item } ?? entering.count)
        }
        try checkViewLimit(entering.count, field: "viewport")
        var plan = makePlan(leaving: UnsafeBufferPointer(start: nil, count: 0), entering: entering, offset: offset)
        scroll.pinned = pin
        plan.pin = pinEntries(old: nil, new: pin).pin
        if helpersAreOn {
            finishPlan(&plan, phase: .idle, velocity: nil, time: time, previous: nil, leaving: [], entering: entering)
        }
        sequence.record(plan)
    }

    /// The number of views the client holds now, shown or pooled.
    public var liveViews: Int { shown.count + pools.count }

    /// The handle the next new view gets; every handle the session assigned is below it.
    public var nextHandle: Int { handles.next }

    /// Makes every handle the session assigns from now on at least `handle` (a store hands a
    /// new owner a range above anything a previous owner may have assigned).
    public mutating func reserveHandles(from handle: Int) { handles.reserve(from: handle) }

    /// Applies one update, or answers the last plan again for a retry (`seq` equal to the last).
    ///
    /// Nothing changes when it throws.
    /// The diff strategy comes from `DiffStrategy.pick`; each has its own function
    /// (`ViewportSession+Diff.swift`).
    /// - Complexity: O(log n + c log c) for c items entering or leaving (plus the items that straddle
    ///   the region's moving edges), independent of how many items stay shown. Helpers add their
    ///   own queries (see `finishPlan`); a looping session is O(log n + k log k) for k shown items.
    public mutating func apply(_ update: ViewportUpdate) throws(SessionError) -> Plan {
        let newViewport = update.size ?? viewport
        let newOffset: Point
        if case .offset(let point) = update.destination, update.size == nil, update.velocity == nil,
            update.select == nil, update.time == nil, update.rtt == nil, loop == nil, point.isFinite
        {
            newOffset = point  // the common case: nothing more to check
        } else {
            newOffset = try validate(update, viewport: newViewport)
        }
        if let retry = try sequence.check(update.seq) { return retry }
        var newMotion = Motion(velocity: update.velocity, from: offset, to: newOffset)
        if let velocity = update.velocity, let rtt = update.rtt ?? scroll.rtt {
            newMotion = lookingAhead(newMotion, velocity: velocity, rtt: rtt, viewport: newViewport, phase: update.phase)
        }
        let newRegion = scroll.region(at: newOffset, viewport: newViewport, motion: newMotion)
        let previous = (offset: offset, viewport: viewport)
        let newPin = layout.stickyItems.isEmpty || loop != nil ? nil : pinnedHeader(at: newOffset)
        var diff: ItemDiff
        switch DiffStrategy.pick(basis: scroll.diffBasis, loop: loop, samePin: newPin == pinned, from: region, to: newRegion) {
        case .unchanged:
            return applyUnchanged(update, offset: newOffset, viewport: newViewport, motion: newMotion, previous: previous)
        case .full: diff = fullDiff(to: newRegion, pin: newPin)
        case .loop(let loop): diff = loopDiff(loop, to: newRegion)
        case .drag(let axis): diff = dragDiff(along: axis, to: newRegion)
        case .jump: diff = jumpDiff(to: newRegion)
        case .strips: diff = stripsDiff(to: newRegion)
        }
        if !diff.pinsAdjusted && (newPin != nil || pinned != nil) {
            adjustForPins(leaving: &diff.leaving, entering: &diff.entering, old: pinned?.item, new: newPin?.item, oldRegion: region, newRegion: newRegion)
        }
        try checkViewLimit(shown.count - diff.leaving.count + diff.entering.count, field: update.size == nil ? "offset" : "size")
        // Nothing has changed up to here; from here on the update is applied.
        advance(to: newOffset, viewport: newViewport, motion: newMotion, update: update)
        scroll.diffBasis = diff.nextBasis
        var plan = takeLeavingAndPlan(diff.leaving, entering: diff.entering, offset: offset)
        if newPin != nil || pinned != nil {
            (plan.pin, plan.unpin) = pinEntries(old: pinned, new: newPin)
            scroll.pinned = newPin
        }
        if needsFinishing(update.phase) {
            finishPlan(&plan, phase: update.phase, velocity: update.velocity, time: update.time, previous: previous, leaving: diff.leaving, entering: diff.entering)
        }
        sequence.record(plan)
        return plan
    }

    /// `DiffStrategy.unchanged`: the update moves inside the safe window; nothing enters or leaves.
    /// - Complexity: O(1), plus the helpers' work (see `finishPlan`).
    @inline(__always)
    private mutating func applyUnchanged(
        _ update: ViewportUpdate, offset newOffset: Point, viewport newViewport: Size, motion newMotion: Motion, previous: (offset: Point, viewport: Size)
    ) -> Plan {
        advance(to: newOffset, viewport: newViewport, motion: newMotion, update: update)
        var plan = Plan(seq: seq, offset: offset)
        if needsFinishing(update.phase) {
            finishPlan(&plan, phase: update.phase, velocity: update.velocity, time: update.time, previous: previous, leaving: [], entering: [])
        }
        sequence.record(plan)
        return plan
    }

    /// Whether paging or a helper has something to add to a plan (after `select` is applied).
    @inline(__always)
    private func needsFinishing(_ phase: ScrollPhase) -> Bool {
        helpersAreOn || selected != nil || phase == .dragEnd || phase == .dragBegin
    }

    /// Takes the next sequence number and moves to the update's offset, viewport, motion and time.
    @inline(__always)
    private mutating func advance(to newOffset: Point, viewport newViewport: Size, motion newMotion: Motion, update: ViewportUpdate) {
        sequence.advance()
        stats.updates += 1
        scroll.move(to: newOffset, viewport: newViewport, motion: newMotion)
        if let select = update.select { helpers.selected = select.item }
        if let t = update.time { scroll.time = t }
        if let rtt = update.rtt { scroll.rtt = rtt }
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
        if let rtt = update.rtt { try LookAhead.validate(rtt: rtt, field: "rtt") }
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
        pools.byClass.enumerated().filter { !$0.element.isEmpty }.map {
            (reuseName(ofClass: $0.offset), $0.element.entries.map(\.view))
        }
    }

    // MARK: Planning

    /// The name of a reuse class of the current layout, or of one kept from an earlier layout.
    func reuseName(ofClass c: Int) -> String { pools.name(ofClass: c, in: layout) }

    /// Removes leaving items of the current layout from `shown`, with their views and classes,
    /// into `taken` (room for `items.count`), and answers how many it wrote. A buffer the caller
    /// holds on the stack, not an array: one allocation and an append's checks per item less on
    /// every update that changes views.
    private mutating func takeLeaving(_ items: [Int], into taken: UnsafeMutableBufferPointer<LeavingItem>) -> Int {
        var n = 0
        func take(_ item: Int, view: Int) {
            taken.initializeElement(at: n, to: LeavingItem(item: item, view: view, reuseClass: layout.poolClass(of: item), poolItem: item))
            n &+= 1
        }
        if items.count == shown.count && !items.isEmpty {
            if shown.hasKeys(items) {
                // Every shown item leaves (a jump), in the ordered form: their views in one pass,
                // then the array emptied at once.
                for (item, view) in shown { take(item, view: view) }
                shown.removeAll(keepingCapacity: true)
                return n
            }
            if !shown.isOrdered {
                // Every shown item leaves (a jump), in the hash form: read their views, then
                // empty the table at once instead of removing the keys one by one (each removal
                // shifts its probe run back). Only when each item is shown and comes once (in
                // layout order, increasing).
                var previous = -1
                for item in items {
                    guard item > previous, let view = shown[item] else { break }
                    previous = item
                    take(item, view: view)
                }
                if n == items.count {
                    shown.removeAll(keepingCapacity: true)
                    return n
                }
                // Written over below (the entries are trivial: nothing to deinitialize).
                n = 0
            }
        }
        for item in items {
            guard let view = shown.removeValue(forKey: item) else { continue }
            take(item, view: view)
        }
        return n
    }

    /// `takeLeaving` into a buffer on the stack, then `makePlan` of what it took.
    private mutating func takeLeavingAndPlan(_ leaving: [Int], entering: [Int], offset: Point) -> Plan {
        withUnsafeTemporaryAllocation(of: LeavingItem.self, capacity: leaving.count) { buffer in
            let taken = takeLeaving(leaving, into: buffer)
            // `LeavingItem` is trivial: the buffer needs no deinitialization.
            return makePlan(leaving: UnsafeBufferPointer(rebasing: buffer[..<taken]), entering: entering, offset: offset)
        }
    }

    /// Builds the plan for items leaving and entering (each in layout order) and applies it to the
    /// session's state, following docs/api.md "Plans": leaving views are pooled first, in order; then
    /// entering items take back their own last view; then the others, in layout order, take the
    /// most recently pooled view; then pools over their cap drop the oldest views pooled by this
    /// plan. Leaving items are already out of `shown`.
    mutating func makePlan(leaving: UnsafeBufferPointer<LeavingItem>, entering: [Int], offset: Point) -> Plan {
        let seq = sequence.seq
        // The classes this plan pooled into, for the caps (nothing to track without caps).
        let capped = pools.hasCaps
        var touchedClasses: [Int] = []
        for leave in leaving {
            guard let c = leave.reuseClass else { continue }
            pools.put(view: leave.view, lastItem: leave.poolItem, reuseClass: c, pooledAt: seq)
            if capped && !touchedClasses.contains(c) { touchedClasses.append(c) }
        }

        // Entering: their own last view first, then the newest pooled view, else a new view.
        // `assigned[k]` is nil until entering item k has a view. On the stack, and the plan's
        // four lists written in place into its one allocation: a jump's plan is small, and its
        // allocations were a good part of its cost.
        return withUnsafeTemporaryAllocation(of: EnteringView?.self, capacity: entering.count) { assigned in
            assigned.initialize(repeating: nil)
            defer { assigned.deinitialize() }
            if !pools.isEmpty, let low = entering.min(), let high = entering.max(), pools.mayHoldItems(in: low...high) {
                for (k, item) in entering.enumerated() {
                    guard let c = layout.poolClass(of: item), let view = pools.takeView(lastShowing: item, reuseClass: c) else { continue }
                    assigned[k] = EnteringView(view: view, reused: true, rebind: false)
                }
            }
            var counts = PlanViews.Counts()
            for (k, item) in entering.enumerated() {
                let a: EnteringView
                if let own = assigned[k] {
                    a = own
                } else if let c = layout.poolClass(of: item), let entry = pools.takeNewest(reuseClass: c) {
                    a = EnteringView(view: entry.view, reused: true, rebind: entry.lastItem != item)
                    assigned[k] = a
                } else {
                    a = EnteringView(view: handles.make(), reused: false, rebind: true)
                    assigned[k] = a
                }
                shown[item] = a.view
                if a.reused {
                    counts.reuse += 1
                    if !a.rebind { stats.rebindFree += 1 }
                }
            }
            counts.create = entering.count - counts.reuse

            // Caps apply once the plan is applied: drop the oldest views this plan pooled.
            let cappedViews = touchedClasses.isEmpty ? [] : pools.trim(touchedClasses, pooledAt: seq)
            func isDiscarded(_ leave: LeavingItem) -> Bool {
                leave.reuseClass == nil || (!cappedViews.isEmpty && cappedViews.contains(leave.view))
            }
            for leave in leaving where isDiscarded(leave) { counts.discard += 1 }
            counts.recycle = leaving.count - counts.discard

            stats.created += counts.create
            stats.reused += counts.reuse
            stats.recycled += counts.recycle
            stats.discarded += counts.discard
            stats.peakViews = max(stats.peakViews, shown.count + pools.count)
            let assignedViews = UnsafeBufferPointer(assigned)
            return Plan(seq: seq, offset: offset, counts: counts) { out in
                // Storage order: recycle, discard, reuse, create; each list in layout order.
                var recycle = out
                var discard = out + counts.recycle
                var reuse = discard + counts.discard
                var create = reuse + counts.reuse
                for leave in leaving {
                    let entry = ReuseEntry(item: leave.item, view: leave.view, rebind: true)
                    if isDiscarded(leave) {
                        discard.initialize(to: entry)
                        discard += 1
                    } else {
                        recycle.initialize(to: entry)
                        recycle += 1
                    }
                }
                for (k, item) in entering.enumerated() {
                    guard let a = assignedViews[k] else { continue }
                    if a.reused {
                        reuse.initialize(to: ReuseEntry(item: item, view: a.view, rebind: a.rebind))
                        reuse += 1
                    } else {
                        create.initialize(to: ReuseEntry(item: item, view: a.view, rebind: true))
                        create += 1
                    }
                }
            }
        }
    }
}
