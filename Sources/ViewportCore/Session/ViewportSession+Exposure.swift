/// Which items are on screen for `exposure` (see `ExposureRule`), and which came onto or went off
/// it between two screen regions.
extension ViewportSession {
    /// Every item on screen in `screen` by `rule`, in layout order (in a looping session, the copy
    /// that meets the screen counts).
    /// - Complexity: O(log n + k log k) for k items intersecting the screen.
    func itemsOnScreen(_ screen: Region, rule: ExposureRule) -> [Int] {
        let found = items(in: screen)
        guard rule.threshold != 0 else { return found }
        return found.filter { rule.isOnScreen(screenRect(of: $0, near: screen), in: screen) }
    }

    /// Every item of `layout` on screen in `screen` by `rule`, in layout order (no loop).
    /// - Complexity: O(log n + k log k) for k items intersecting the screen.
    static func itemsOnScreen(of layout: Layout, _ screen: Region, rule: ExposureRule) -> [Int] {
        let found = layout.items(in: screen)
        guard rule.threshold != 0 else { return found }
        return found.filter { rule.isOnScreen(layout.rect(at: $0), in: screen) }
    }

    /// The rect of `item` as it meets `screen`: its layout rect, or in a looping session the copy
    /// that intersects the screen (at most one does).
    @inline(__always)
    private func screenRect(of item: Int, near screen: Region) -> Rect {
        let rect = layout.rect(at: item)
        guard let loop, let shift = loop.copyShift(of: rect, in: screen) else { return rect }
        return loop.moved(rect, by: shift)
    }

    /// Items on screen in `new` but not in `old` (`entered`), and the reverse (`left`), in layout
    /// order.
    ///
    /// An item's visible fraction changes only if its rect touches a strip that a screen edge swept
    /// (between that edge in `old` and in `new`, across both screens): inside both screens along
    /// an axis it is whole, outside both it is nothing. So only the items on those strips are
    /// looked at — the items near the screen's edges, not everything on screen or materialized.
    /// - Complexity: O(log n + s log s) for s items on the strips; in a looping session, for s
    ///   items intersecting either screen.
    func screenChanges(from old: Region, to new: Region, rule: ExposureRule) -> (entered: [Int], left: [Int]) {
        if rule.threshold == 0 {
            // Strict intersection, exactly as `"exposure": true` has always done it.
            return (items(in: new, notIn: old), items(in: old, notIn: new))
        }
        guard old != new else { return ([], []) }
        if loop != nil {
            let before = itemsOnScreen(old, rule: rule)
            let after = itemsOnScreen(new, rule: rule)
            let beforeSet = Set(before)
            let afterSet = Set(after)
            return (after.filter { !beforeSet.contains($0) }, before.filter { !afterSet.contains($0) })
        }
        var candidates: [(item: Int, rect: Rect)] = []
        func collect(_ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) {
            layout.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { candidates.append(($0, $1)) }
        }
        let (lowX, highX) = (min(old.minX, new.minX), max(old.maxX, new.maxX))
        let (lowY, highY) = (min(old.minY, new.minY), max(old.maxY, new.maxY))
        if old.minY != new.minY { collect(lowX, min(old.minY, new.minY), highX, max(old.minY, new.minY)) }
        if old.maxY != new.maxY { collect(lowX, min(old.maxY, new.maxY), highX, max(old.maxY, new.maxY)) }
        if old.minX != new.minX { collect(min(old.minX, new.minX), lowY, max(old.minX, new.minX), highY) }
        if old.maxX != new.maxX { collect(min(old.maxX, new.maxX), lowY, max(old.maxX, new.maxX), highY) }
        candidates.sort { $0.item < $1.item }
        var entered: [Int] = []
        var left: [Int] = []
        var last = -1
        for (item, rect) in candidates where item != last {
            last = item
            let was = rule.isOnScreen(rect, in: old)
            let now = rule.isOnScreen(rect, in: new)
            if now && !was {
                entered.append(item)
            } else if was && !now {
                left.append(item)
            }
        }
        return (entered, left)
    }

    /// With `exposure`: the items on screen now, in layout order (empty without `exposure`).
    public var onScreen: [Int] {
        guard let rule = exposureRule else { return [] }
        return itemsOnScreen(Region(offset: offset, viewport: viewport, buffer: 0), rule: rule)
    }
}
