extension ViewportSession {
    /// Moves the session to another layout and answers the plan (API.md "Layout changes").
    ///
    /// Items are matched by id. An item materialized before and after, with the same reuse
    /// identifier, keeps its view (listed under `move` when its rect changed); the others leave
    /// (in the previous layout's order) or enter (in the new layout's order) by the usual rules.
    /// Pools carry over by reuse identifier. It is an update: it takes the next `seq` (or answers a
    /// retry) and counts as phase idle.
    /// - Complexity: O(log n + k log k) for k items materialized before and after: only they are
    ///   matched, by the new layout's id table.
    public mutating func changeLayout(to newLayout: Layout, anchor: LayoutAnchor, seq sent: UInt64? = nil) throws(SessionError) -> Plan {
        if loop != nil {
            throw .invalid(field: "layout", reason: "a looping session cannot change its layout (its period comes from it); open a new session")
        }
        if let sent {
            if sent == seq { return lastPlan }
            guard sent == seq &+ 1 else { throw .sequenceConflict(current: seq, sent: sent) }
        }
        let old = layout
        let oldShown = shown.sorted { $0.key < $1.key }
        func newIndex(of oldItem: Int) -> Int? {
            old.withIDBytes(at: oldItem) { newLayout.item(withIDBytes: $0) }
        }

        var newOffset = offset
        if anchor == .visible {
            let screen = Region(offset: offset, viewport: viewport, buffer: 0)
            for (item, _) in oldShown where screen.intersects(old.rects[item]) {
                guard let j = newIndex(of: item) else { continue }
                let before = old.rects[item]
                let after = newLayout.rects[j]
                newOffset = Point(
                    x: Self.shifted(offset.x, from: before.x, to: after.x), y: Self.shifted(offset.y, from: before.y, to: after.y))
                break
            }
        }
        // A layout change is not a scroll: no motion, so a direction-aware buffer is max(a, b) around.
        let newRegion = Region(offset: newOffset, viewport: viewport, buffer: buffer, motion: .none)
        var materialized = newLayout.items(in: newRegion)
        // A sticky header pinned in the new layout is materialized too.
        let newPin = newLayout.stickyItems.isEmpty ? nil : ViewportSession.pinnedHeader(in: newLayout, at: newOffset, insets: insets)
        if let newPin, !materialized.contains(newPin.item) {
            materialized.insert(newPin.item, at: materialized.firstIndex { $0 > newPin.item } ?? materialized.count)
        }
        try checkViewLimit(materialized.count, field: "layout")
        let isMaterialized = Set(materialized)

        // Reuse classes carry over by name; names the new layout lacks keep a class of their own.
        var classMap: [Int: Int] = [:]
        var extras: [String] = []
        func newClass(ofOld c: Int) -> Int {
            guard c >= 0 else { return -1 }
            if let mapped = classMap[c] { return mapped }
            let name = reuseName(ofClass: c)
            let mapped: Int
            if let known = newLayout.reuseClass(named: name) {
                mapped = known
            } else if let k = extras.firstIndex(of: name) {
                mapped = newLayout.reuseNames.count + k
            } else {
                extras.append(name)
                mapped = newLayout.reuseNames.count + extras.count - 1
            }
            classMap[c] = mapped
            return mapped
        }

        var survivors = IntMap()
        var moves: [PlanEntry] = []
        var leaving: [LeavingItem] = []
        for (item, view) in oldShown {
            let oldClass = old.reuseClass(of: item)
            let j = newIndex(of: item)
            if let j, isMaterialized.contains(j), newLayout.reuseName(of: j) == old.reuseName(of: item) {
                survivors[j] = view
                if newLayout.rects[j] != old.rects[item] { moves.append(PlanEntry(item: j, view: view)) }
            } else {
                leaving.append(LeavingItem(item: item, view: view, reuseClass: newClass(ofOld: oldClass), poolItem: j ?? -1))
            }
        }

        // Pools and same-item bookkeeping move to the new layout's classes and positions.
        var newPools: [ReusePool] = []
        var newPooledByItem = IntMap()
        for (c, pool) in pools.enumerated() {
            let mapped = newClass(ofOld: c)
            for var entry in pool.entries {
                if entry.lastItem >= 0 {
                    // Within one pool, one entry at most names an item (it would have taken its
                    // view back), so the index stays one to one.
                    entry.lastItem = newIndex(of: entry.lastItem) ?? -1
                    if entry.lastItem >= 0 { newPooledByItem[PooledItemKey(item: entry.lastItem, reuseClass: mapped).packed] = entry.view }
                }
                newPools.push(entry, reuseClass: mapped)
            }
        }

        // The helpers' per-item state follows the items by id.
        let screenBefore = exposureTracker.map {
            Self.itemsOnScreen(of: old, Region(offset: offset, viewport: viewport, buffer: 0), rule: $0.rule)
        } ?? []
        var positions: [Int: Int] = [:]
        func remapped(_ item: Int) -> Int? {
            if let known = positions[item] { return known >= 0 ? known : nil }
            let j = newIndex(of: item)
            positions[item] = j ?? -1
            return j
        }
        selected = selected.flatMap(remapped)
        // A layout change has no velocity: every outstanding prediction ends. Those that did not
        // enter are cancelled, including items the new layout removed, so they are named (like
        // `leave`) by previous-layout positions.
        let cancelledPredictions = prefetcher.map { prefetcher in
            prefetcher.predicted.filter { remapped($0).map { !isMaterialized.contains($0) } ?? true }.sorted()
        } ?? []
        prefetcher?.remap { _ in nil }
        lazyLoader?.remap(remapped)
        exposureTracker?.remap(from: old, to: newLayout, remapped)

        layout = newLayout
        extraReuseNames = extras
        pools = newPools
        pooledByItem = newPooledByItem
        shown = survivors
        resolveCaps()
        seq += 1
        stats.updates += 1
        offset = newOffset
        region = newRegion
        motion = .none
        safeWindow = nil
        needsFullDiff = false
        let entering = materialized.filter { survivors[$0] == nil }
        var plan = makePlan(leaving: leaving, entering: entering, offset: newOffset)
        plan.move = moves.sorted { $0.item < $1.item }
        plan.previousLayout = old
        // The previous pin carries over only when its header kept its view: a header that left and
        // entered again (its reuse identifier changed) has a new view at its layout rect, to pin.
        let oldPin = pinned.flatMap { pin in
            newIndex(of: pin.item).flatMap { survivors[$0] == nil ? nil : PinnedHeader(item: $0, rect: pin.rect) }
        }
        (plan.pin, plan.unpin) = pinEntries(old: oldPin, new: newPin)
        pinned = newPin
        if usesHelpers || selected != nil {
            // Items that stay on screen keep their exposure; the rest enter or leave it.
            let screenAfter = exposureTracker.map { itemsOnScreen(Region(offset: newOffset, viewport: viewport, buffer: 0), rule: $0.rule) } ?? []
            let stayed = Set(screenBefore.compactMap(remapped)).intersection(screenAfter)
            let enteredScreen = screenAfter.filter { !stayed.contains($0) }
            let leftScreen = screenBefore.filter { remapped($0).map { !stayed.contains($0) } ?? true }
            finishLayoutChangePlan(
                &plan, leaving: leaving.compactMap { remapped($0.item) }, entering: entering,
                enteredScreen: enteredScreen, leftScreen: leftScreen, leftScreenStaying: leftScreen.compactMap(remapped),
                cancelledPredictions: cancelledPredictions)
        }
        lastPlan = plan
        return plan
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
