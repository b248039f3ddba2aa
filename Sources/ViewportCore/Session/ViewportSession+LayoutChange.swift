extension ViewportSession {
    /// Moves the session to another layout and answers the plan (docs/api.md "Layout changes").
    ///
    /// Items are matched by id. An item materialized before and after, with the same reuse
    /// identifier, keeps its view (listed under `move` when its rect changed); the others leave
    /// (in the previous layout's order) or enter (in the new layout's order) by the usual rules.
    /// Pools carry over by reuse identifier. It is an update: it takes the next `seq` (or answers a
    /// retry) and counts as phase idle.
    /// - Complexity: O(log n + k log k) for k items materialized before and after: only they are
    ///   matched, by the new layout's id table.
    public mutating func changeLayout(to newLayout: Layout, anchor: LayoutAnchor, seq sent: UInt64? = nil) throws(SessionError) -> Plan {
        if let retry = try checkLayoutChange(seq: sent) { return retry }
        let old = layout
        func newIndex(of oldItem: Int) -> Int? {
            old.withIDBytes(at: oldItem) { newLayout.item(withIDBytes: $0) }
        }
        let newOffset = anchor == .visible ? visibleAnchorOffset(in: newLayout, position: newIndex) ?? offset : offset
        var remap = ItemRemap(old: old, new: newLayout, extraNames: pools.extraNames, position: newIndex)
        return try transition(to: newLayout, offset: newOffset, remap: &remap, field: "layout")
    }

    /// What ``changeLayout(to:anchor:seq:)`` checks before it looks at the new layout: a looping
    /// session refuses (invalid), a retry answers the last plan, a `seq` that is neither is a
    /// conflict; nil to go on. The service runs it before it stores an inline layout, so that a
    /// retry or a conflict is answered as such when the layout table is full (the problems' order
    /// puts 409 before 429).
    public func checkLayoutChange(seq sent: UInt64?) throws(SessionError) -> Plan? {
        if loop != nil {
            throw .invalid(field: "layout", reason: "a looping session cannot change its layout (its period comes from it); open a new session")
        }
        return try sequence.check(sent)
    }

    /// The offset that keeps the first item on screen (the viewport without buffer, in the
    /// current layout's order) that `newLayout` has too where it was on screen, on both axes (not
    /// clamped); nil when no item on screen is in `newLayout`.
    /// - Complexity: O(k log k) for k shown items, O(log n) a rect in a stack.
    func visibleAnchorOffset(in newLayout: Layout, position: (Int) -> Int?) -> Point? {
        let screen = Region(offset: offset, viewport: viewport, buffer: 0)
        for item in shown.keys.sorted() {
            let before = layout.rects[item]
            guard screen.intersects(before), let j = position(item) else { continue }
            let after = newLayout.rects[j]
            return Point(x: Self.shifted(offset.x, from: before.x, to: after.x), y: Self.shifted(offset.y, from: before.y, to: after.y))
        }
        return nil
    }

    /// Moves the session to `newLayout` at `newOffset` and answers the plan: the shared part of a
    /// layout change and of an edit of the session's stacks.
    ///
    /// An item shown before whose new position (`remap`) is materialized at the new offset, with
    /// the same reuse identifier, keeps its view (under `move` when its rect changed); the others
    /// leave (previous layout's order) and the new ones enter (new layout's order) by the usual
    /// rules. Everything the session keeps by item position goes through `remapItems`. It is an
    /// update: it takes the next `seq` and counts as phase idle. Nothing changes when it throws
    /// (more items materialized than `maxViews`).
    /// - Complexity: O(log n + k log k) for k items materialized before and after (times the cost
    ///   of `remap`'s lookups), plus `remapItems`.
    mutating func transition(to newLayout: Layout, offset newOffset: Point, remap: inout ItemRemap, field: String) throws(SessionError) -> Plan {
        let old = layout
        let oldShown = shown.sorted { $0.key < $1.key }
        // A layout change is not a scroll: no motion, so a direction-aware buffer is max(a, b) around;
        // but a region that looks ahead keeps reaching (an edit while scrolling, a measurement,
        // would otherwise drop the items ahead that the next update brings back).
        let newMotion = motion.looksAhead ? motion : .none
        let newRegion = Region(offset: newOffset, viewport: viewport, buffer: buffer, motion: newMotion)
        var found = newLayout.itemsAndRects(in: newRegion)
        // A sticky header pinned in the new layout is materialized too.
        let newPin = newLayout.stickyItems.isEmpty ? nil : ViewportSession.pinnedHeader(in: newLayout, at: newOffset, insets: insets)
        if let newPin, !found.contains(where: { $0.item == newPin.item }) {
            found.insert((newPin.item, newLayout.rect(at: newPin.item)), at: found.firstIndex { $0.item > newPin.item } ?? found.count)
        }
        try checkViewLimit(found.count, field: field)
        let materialized = found.map(\.item)
        // Rects before, from one query of the old region (a pinned header outside it is looked up).
        let before = old.itemsAndRects(in: region)
        func oldRect(_ item: Int) -> Rect { Self.rect(of: item, in: before) ?? old.rects[item] }

        var survivors = IntMap()
        var moves: [PlanEntry] = []
        var leaving: [LeavingItem] = []
        for (item, view) in oldShown {
            let j = remap.position(item)
            if let j, let after = Self.rect(of: j, in: found), remap.keepsReuse || newLayout.reuseName(of: j) == old.reuseName(of: item) {
                survivors[j] = view
                if after != oldRect(item) { moves.append(PlanEntry(item: j, view: view)) }
            } else {
                leaving.append(LeavingItem(item: item, view: view, reuseClass: remap.poolClass(ofOld: old.poolClass(of: item)), poolItem: j))
            }
        }

        let screenBefore = exposureRule.map {
            Self.itemsOnScreen(of: old, Region(offset: offset, viewport: viewport, buffer: 0), rule: $0)
        } ?? []
        // A layout change has no velocity: every outstanding prediction ends. Those that did not
        // enter are cancelled, including items the new layout removed, so they are named (like
        // `leave`) by previous-layout positions.
        let isMaterialized = Set(materialized)
        let cancelledPredictions = prefetcher.map { prefetcher in
            prefetcher.predicted.filter { remap.position($0).map { !isMaterialized.contains($0) } ?? true }.sorted()
        } ?? []
        remapItems(&remap)
        helpers.prefetcher?.remap { _ in nil }
        // Leaving items still in the new layout were renumbered with the rest: they are no longer shown.
        for leave in leaving {
            if let item = leave.poolItem { shown[item] = nil }
        }

        layout = newLayout
        pools.resolveCaps(for: layout)
        sequence.advance()
        stats.updates += 1
        scroll.move(to: newOffset, viewport: viewport, motion: newMotion)
        scroll.diffBasis = .regions
        let entering = materialized.filter { survivors[$0] == nil }
        var plan = leaving.withUnsafeBufferPointer { makePlan(leaving: $0, entering: entering, offset: newOffset) }
        plan.move = moves.sorted { $0.item < $1.item }
        plan.previousLayout = old
        // The previous pin carries over only when its header kept its view: a header that left and
        // entered again (its reuse identifier changed) has a new view at its layout rect, to pin.
        let oldPin = pinned.flatMap { survivors[$0.item] == nil ? nil : $0 }
        (plan.pin, plan.unpin) = pinEntries(old: oldPin, new: newPin)
        scroll.pinned = newPin
        if helpersAreOn || selected != nil {
            // Items that stay on screen keep their exposure; the rest enter or leave it.
            let screenAfter = exposureRule.map { itemsOnScreen(Region(offset: newOffset, viewport: viewport, buffer: 0), rule: $0) } ?? []
            let stayed = Set(screenBefore.compactMap { remap.position($0) }).intersection(screenAfter)
            let enteredScreen = screenAfter.filter { !stayed.contains($0) }
            let leftScreen = screenBefore.filter { remap.position($0).map { !stayed.contains($0) } ?? true }
            finishLayoutChangePlan(
                &plan, leaving: leaving.compactMap { remap.position($0.item) }, entering: entering,
                enteredScreen: enteredScreen, leftScreen: leftScreen, leftScreenStaying: leftScreen.compactMap { remap.position($0) },
                cancelledPredictions: cancelledPredictions)
        }
        sequence.record(plan)
        return plan
    }

    /// The rect of `item` in a list sorted by item, nil when it is not there.
    /// - Complexity: O(log k).
    static func rect(of item: Int, in list: [(item: Int, rect: Rect)]) -> Rect? {
        var lo = 0
        var hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].item < item { lo = mid + 1 } else { hi = mid }
        }
        return lo < list.count && list[lo].item == item ? list[lo].rect : nil
    }
}

extension ViewportSession {
    /// `value + (to − from)` for finite client numbers, kept finite: where that order of sums
    /// passes the largest double, the others are tried (`(value − from) + to`, `(value + to) − from`),
    /// and what still overflows saturates at the largest double.
    static func shifted(_ value: Double, from: Double, to: Double) -> Double {
        for candidate in [value + (to - from), (value - from) + to, (value + to) - from] where candidate.isFinite {
            return candidate
        }
        let limit = Double.greatestFiniteMagnitude
        let rough = value / 2 + (to / 2 - from / 2)
        return rough > 0 ? limit : -limit
    }
}
