extension ViewportSession {
    /// The offset that puts `target.item` at `target.align` in a viewport of `viewport`, on both
    /// axes, clamped to the scrollable range (along a looping axis: the item's copy nearest to the
    /// current offset, not clamped).
    ///
    /// Per axis, with the item at `[a, a + len]`, the viewport length `v` and the current offset `o`:
    /// `start` → `a`; `center` → `a + len/2 − v/2`; `end` → `a + len − v`; `auto` → `a` if
    /// `len > v`, else `min(max(o, a + len − v), a)` (no movement when the item is shown whole).
    /// - Complexity: O(1).
    public func scrollOffset(to target: ScrollTarget, viewport: Size) -> Point {
        let rect = layout.rects[target.item]
        var result = offset
        for axis in Axis.allCases {
            let o = axis.component(of: offset)
            var a = axis.leadingEdge(of: rect)
            if let loop, loop.axis == axis { a = loop.nearestCopy(of: a, to: o) }
            let len = axis.length(of: rect)
            let v = axis.component(of: viewport)
            let value: Double
            switch target.align {
            case .start: value = a
            case .center: value = a + len / 2 - v / 2
            case .end: value = a + len - v
            case .auto: value = len > v ? a : min(max(o, a + len - v), a)
            }
            let placed = loop?.axis == axis
                ? value
                : ScrollRange(axis: axis, contentSize: layout.contentSize, viewport: viewport, insets: insets).clamp(value)
            result = axis.setting(placed, in: result)
        }
        return result
    }
}
