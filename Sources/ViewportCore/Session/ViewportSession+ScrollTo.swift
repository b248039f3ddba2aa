extension ViewportSession {
    /// The offset that puts `target.item` at `target.align` in a viewport of `viewport`, on both
    /// axes, clamped to the scrollable range (along a looping axis: the item's copy nearest to the
    /// current offset, not clamped).
    ///
    /// Per axis, with the item at `[a, a + len]`, the viewport length `v`, the current offset `o`
    /// and the margin `m`: `start` → `a − m`; `center` → `a + len/2 − v/2`; `end` →
    /// `a + len − v + m`; `auto` → `a − m` if `len + 2m > v`, else `min(max(o, a + len − v + m), a − m)`
    /// (no movement when the item is shown whole with its margins).
    /// - Complexity: O(1).
    public func scrollOffset(to target: ScrollTarget, viewport: Size) -> Point {
        Self.scrollOffset(to: target, viewport: viewport, from: offset, layout: layout, insets: insets, loop: loop)
    }

    /// `scrollOffset(to:viewport:)` from `offset`, for a session being opened.
    static func scrollOffset(
        to target: ScrollTarget, viewport: Size, from offset: Point, layout: Layout, insets: Insets, loop: LoopSpace?
    ) -> Point {
        let rect = layout.rects[target.item]
        // Written so that a margin of 0 computes exactly what it did before margins existed.
        let m = target.margin
        func minus(_ x: Double) -> Double { m == 0 ? x : x - m }
        func plus(_ x: Double) -> Double { m == 0 ? x : x + m }
        var result = offset
        for axis in Axis.allCases {
            let o = axis.component(of: offset)
            var a = axis.leadingEdge(of: rect)
            if let loop, loop.axis == axis { a = loop.nearestCopy(of: a, to: o) }
            let len = axis.length(of: rect)
            let v = axis.component(of: viewport)
            let value: Double
            switch target.align {
            case .start: value = minus(a)
            case .center: value = a + len / 2 - v / 2
            case .end: value = plus(a + len - v)
            case .auto: value = (m == 0 ? len : len + 2 * m) > v ? minus(a) : min(max(o, plus(a + len - v)), minus(a))
            }
            let placed = loop?.axis == axis
                ? value
                : ScrollRange(axis: axis, contentSize: layout.contentSize, viewport: viewport, insets: insets).clamp(value)
            result = axis.setting(placed, in: result)
        }
        return result
    }
}
