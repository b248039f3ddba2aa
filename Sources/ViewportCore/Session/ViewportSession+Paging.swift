extension ViewportSession {
    /// The paging axis: the loop axis, `paging.axis`, or by default `y` if the content is taller
    /// than the viewport, else `x`.
    public var pagingAxis: Axis {
        loop?.axis ?? paging.axis ?? (layout.contentSize.height > viewport.height ? .y : .x)
    }

    /// The scrollable range along `axis` at the current viewport.
    public func scrollRange(_ axis: Axis) -> ScrollRange {
        ScrollRange(axis: axis, contentSize: layout.contentSize, viewport: viewport, insets: insets)
    }

    /// `value` along `axis` clamped to the scrollable range, unless `axis` loops.
    func place(_ value: Double, along axis: Axis) -> Double {
        loop?.axis == axis ? value : scrollRange(axis).clamp(value)
    }

    /// The `drag-end` target at the current offset `o`, for a drag that began at `begin` (`b`) with
    /// `velocity` (`v`): docs/api.md "Paging and deceleration", see `DragTarget`. The other coordinate
    /// is the current offset's, clamped likewise.
    /// - Complexity: O(1); O(log n) in the mode `items` (O(n log n) once per layout and axis).
    func dragTarget(begin: Point, velocity: Point) -> (target: Point, page: Int?) {
        let axis = pagingAxis
        var b = axis.component(of: begin)
        if let loop {
            // A recenter may have come between drag-begin and drag-end: compare in one frame.
            b = loop.nearestCopy(of: b, to: axis.component(of: offset))
        }
        let drag = DragTarget(
            mode: paging.mode, offset: axis.component(of: offset), begin: b, velocity: axis.component(of: velocity),
            pageSize: axis.component(of: paging.size ?? viewport), decelerationRate: paging.decelerationRate,
            contentLength: axis.component(of: layout.contentSize), range: scrollRange(axis),
            loopPeriod: loop?.period)
        let layout = self.layout
        let (value, page) = drag.resolve(nearest: { layout.nearestLeadingEdge(along: axis, to: $0) }, summary: { layout.axisSummary(axis) })
        let cross = axis.cross
        let target = cross.setting(place(cross.component(of: offset), along: cross), in: axis.setting(value, in: offset))
        return (target, paging.mode == .page || paging.mode == .snap ? page : nil)
    }
}
