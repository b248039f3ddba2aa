extension ViewportSession {
    /// Whether `item` is in `region` (strict intersection; in a looping session, of some copy).
    @inline(__always)
    func isMember(_ item: Int, of region: Region) -> Bool {
        let rect = layout.rects[item]
        if let loop { return loop.copyShift(of: rect, in: region) != nil }
        return region.intersects(rect)
    }

    /// Every item in `region`, in layout order (in a looping session, any copy counts).
    /// - Complexity: O(log n + k log k) for k items found (times the copies met when looping).
    func items(in region: Region) -> [Int] {
        guard let loop else { return layout.items(in: region) }
        var found: [Int] = []
        loop.forEachItem(in: region, layout: layout) { found.append($0) }
        Self.sortUnique(&found)
        return found
    }

    /// Items in `a` but not in `b`, in layout order.
    /// - Complexity: O(log n + k log k) for k items in the strips of `a` beyond `b`'s edges; in a
    ///   looping session, for k items in `a`.
    func items(in a: Region, notIn b: Region) -> [Int] {
        guard loop != nil else { return changedItems(in: a, notIn: b) }
        return items(in: a).filter { !isMember($0, of: b) }
    }
}
