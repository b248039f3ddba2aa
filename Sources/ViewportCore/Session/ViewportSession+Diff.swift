/// The diff strategies of `apply(_:)`, one function each (see `DiffStrategy`), and the queries
/// they share. Each reads the session only; `apply` applies what they find.
extension ViewportSession {
    /// `DiffStrategy.full`: after a resync, the shown items against what the new region and pin
    /// need.
    /// - Complexity: O(k log k + log n + m) for k shown items and m items at `newRegion`.
    func fullDiff(to newRegion: Region, pin newPin: PinnedHeader?) -> ItemDiff {
        let pinnedItem = newPin?.item
        let leaving = shown.keys.filter { $0 != pinnedItem && !newRegion.intersects(layout.rects[$0]) }.sorted()
        var needed = layout.items(in: newRegion)
        if let pinnedItem, !needed.contains(pinnedItem) {
            needed.insert(pinnedItem, at: needed.firstIndex { $0 > pinnedItem } ?? needed.count)
        }
        return ItemDiff(leaving: leaving, entering: needed.filter { shown[$0] == nil }, pinsAdjusted: true)
    }

    /// `DiffStrategy.loop`: the shown items against the copies at the new region. An item whose
    /// view must move to another copy of it (a jump) leaves and enters again.
    /// - Complexity: O(k log k + log n + m) for k shown items and m items at `newRegion`.
    func loopDiff(_ loop: LoopSpace, to newRegion: Region) -> ItemDiff {
        let moving = shown.keys.filter { item in
            loop.copyShift(of: layout.rects[item], in: newRegion).map { $0 != loopShift(of: item) } ?? true
        }
        let movingSet = Set(moving)
        return ItemDiff(leaving: moving.sorted(), entering: items(in: newRegion).filter { shown[$0] == nil || movingSet.contains($0) })
    }

    /// `DiffStrategy.drag`: a move along `axis` by less than `SafeWindow.lookahead`. Two queries
    /// around the moving edges find what changed and measure the next safe window.
    /// - Complexity: O(log n + c) for c items near the moving edges.
    func dragDiff(along axis: SafeWindow.Axis, to newRegion: Region) -> ItemDiff {
        var window = SafeWindow(axis: axis, around: newRegion)
        let (leaving, entering) = changedItemsNearEdges(from: region, to: newRegion, window: &window)
        return ItemDiff(leaving: leaving, entering: entering, nextBasis: .window(window))
    }

    /// `DiffStrategy.jump`: every item of the old region leaves. They are all shown, so they are
    /// found there, without a query of the old region (half a jump's index work on a 1M layout).
    ///
    /// What the new region's query and plan read first (the index block, rects, classes and id
    /// offsets at a random place: cache misses on a 1M-item layout) starts loading, the leaving
    /// items are found meanwhile, then the query starts where the prefetch found its block. Then
    /// the first entering item's class starts loading while the leaving views are taken and pooled.
    /// - Complexity: O(k + log n + m) for k shown items and m items at `newRegion`.
    func jumpDiff(to newRegion: Region) -> ItemDiff {
        let start = layout.prefetchItems(in: newRegion)
        let leaving = shownItems(in: region, notIn: newRegion)
        let entering = changedItems(in: newRegion, notIn: region, start: start)
        if let first = entering.first {
            layout.prefetchClass(of: first)
            layout.prefetchID(of: first)
        }
        return ItemDiff(leaving: leaving, entering: entering)
    }

    /// `DiffStrategy.strips`: the items in the strips of each region beyond the other's edges.
    /// - Complexity: O(log n + c log c) for c items in the strips.
    func stripsDiff(to newRegion: Region) -> ItemDiff {
        ItemDiff(leaving: changedItems(in: region, notIn: newRegion), entering: changedItems(in: newRegion, notIn: region))
    }

    // MARK: Queries

    /// Items that leave and enter on a move of less than `SafeWindow.lookahead` along the window's
    /// axis, found by one query around each moving edge; every candidate also narrows `window`.
    private func changedItemsNearEdges(from old: Region, to new: Region, window: inout SafeWindow) -> ([Int], [Int]) {
        var leaving: [Int] = []
        var entering: [Int] = []
        let (oldLow, oldHigh) = window.axis == .y ? (old.minY, old.maxY) : (old.minX, old.maxX)
        let spans = window.spans
        // The lists and the window go in as arguments (docs/workarounds.md "Captured inout state is boxed").
        let layout = layout
        func search(_ leaving: inout [Int], _ entering: inout [Int], _ window: inout SafeWindow, _ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) {
            layout.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { item, r in
                let wasIn = old.intersects(r)
                let isIn = new.intersects(r)
                if wasIn && !isIn {
                    leaving.append(item)
                } else if isIn && !wasIn {
                    entering.append(item)
                }
                window.observe(r)
            }
        }
        for k in 0..<2 {
            let span = k == 0 ? spans.low : spans.high
            // Each span also covers the strip its edge swept.
            let oldEdge = k == 0 ? oldLow : oldHigh
            let from = min(span.0, oldEdge)
            let to = max(span.1, oldEdge)
            if window.axis == .y {
                search(&leaving, &entering, &window, new.minX, from, new.maxX, to)
            } else {
                search(&leaving, &entering, &window, from, new.minY, to, new.maxY)
            }
        }
        Self.sortUnique(&leaving)
        Self.sortUnique(&entering)
        return (leaving, entering)
    }

    /// Sorts `found` and drops repeated items, in place (a copy of a shared array would cost an
    /// allocation per query).
    static func sortUnique(_ found: inout [Int]) {
        guard found.count > 1 else { return }
        found.sort()
        // By index (docs/workarounds.md "A for-in loop keeps the array shared").
        var unique = 1
        for k in 1..<found.count where found[k] != found[unique - 1] {
            found[unique] = found[k]
            unique += 1
        }
        found.removeLast(found.count - unique)
    }

    /// Shown items materialized in `a` but not in `b`, in layout order: the same items as
    /// `changedItems(in: a, notIn: b)` when `a` is the session's region (every item it
    /// materializes is shown; a pinned header outside it is not in `a`), found among the shown
    /// items instead of by a query.
    /// - Complexity: O(k) for k shown items (O(k log k) past `ShownViews.orderedLimit`).
    func shownItems(in a: Region, notIn b: Region) -> [Int] {
        var found: [Int] = []
        found.reserveCapacity(shown.count)
        let rects = layout.rects
        for (item, _) in shown {
            let r = rects[item]
            if a.intersects(r) && !b.intersects(r) { found.append(item) }
        }
        // The ordered form iterates in layout order already.
        if !shown.isOrdered { found.sort() }
        return found
    }

    /// Items materialized in `a` but not in `b`, in layout order.
    ///
    /// Such an item lies outside `b` on some side, so it touches one of the (at most four) strips
    /// of `a` beyond `b`'s edges; only those strips are searched.
    ///
    /// `start`: from `Layout.prefetchItems(in: a)`; the search from `a`'s near edge begins there.
    /// - Complexity: O(log n + c log c) for c items in the strips.
    func changedItems(in a: Region, notIn b: Region, start: QueryStart? = nil) -> [Int] {
        guard a != b else { return [] }
        var found: [Int] = []
        // About as many items change as are shown (all of them on a jump): one allocation.
        found.reserveCapacity(shown.count + 4)
        // `found` goes in as an argument (docs/workarounds.md "Captured inout state is boxed").
        let layout = layout
        func search(_ found: inout [Int], _ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) {
            layout.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start) { item, r in
                if a.intersects(r) && !b.intersects(r) { found.append(item) }
            }
        }
        if b.minY > a.minY { search(&found, a.minX, a.minY, a.maxX, min(b.minY, a.maxY)) }
        if b.maxY < a.maxY { search(&found, a.minX, max(b.maxY, a.minY), a.maxX, a.maxY) }
        if b.minX > a.minX { search(&found, a.minX, a.minY, min(b.minX, a.maxX), a.maxY) }
        if b.maxX < a.maxX { search(&found, max(b.maxX, a.minX), a.minY, a.maxX, a.maxY) }
        Self.sortUnique(&found)
        return found
    }
}
