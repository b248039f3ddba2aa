extension ViewportSession {
    /// The looping content of a session with `loop`, or nil without.
    ///
    /// The loop axis is the paging axis as the session opens (`paging.axis`, or automatic at the
    /// initial viewport); the period is the content length along it, and every item must lie
    /// within `[0, period]` along it.
    static func makeLoop(layout: Layout, configuration: SessionConfiguration) throws(SessionError) -> LoopSpace? {
        guard configuration.loop else { return nil }
        let axis = configuration.paging.axis
            ?? (layout.contentSize.height > configuration.viewport.height ? .y : .x)
        let period = axis.component(of: layout.contentSize)
        guard period > 0 else {
            throw .invalid(field: "loop", reason: "the content has no length along the \(axis.rawValue) axis to repeat")
        }
        guard period >= LoopSpace.minPeriod else {
            throw .invalid(field: "loop", reason: "the content is \(period) long along the \(axis.rawValue) axis, shorter than the \(LoopSpace.minPeriod) a loop needs")
        }
        let summary = layout.axisSummary(axis)
        guard summary.minLeading >= 0, summary.maxTrailing <= period else {
            throw .invalid(field: "loop", reason: "every item must lie within the content along the \(axis.rawValue) axis")
        }
        return LoopSpace(axis: axis, period: period, summary: summary)
    }

    /// Checks that `loop` has a usable period at `viewport`: at least as long as the materialized
    /// region plus the longest item (so no item is materialized twice), and a whole number of
    /// pages in the modes `page` and `snap`.
    static func checkLoop(
        _ loop: LoopSpace, viewport: Size, buffer: Double, paging: PagingOptions, field: String
    ) throws(SessionError) {
        let axis = loop.axis
        let needed = axis.component(of: viewport) + 2 * buffer + loop.maxLength
        guard loop.period >= needed else {
            throw .invalid(
                field: field,
                reason: "loop needs content at least \(needed) long along \(axis.rawValue) (viewport + 2 × buffer + longest item); it is \(loop.period)")
        }
        if paging.mode == .page || paging.mode == .snap {
            let s = axis.component(of: paging.size ?? viewport)
            let pages = (loop.period / s).rounded()
            guard s > 0, pages >= 1, abs(pages * s - loop.period) <= 1e-9 * loop.period else {
                throw .invalid(field: field, reason: "loop with paging needs the content length along \(axis.rawValue) to be a whole number of pages")
            }
        }
    }

    /// Records which copy each entering item's view shows, and answers the placements of those
    /// that are not at their layout rect, in the coordinates of the current offset.
    /// - Complexity: O(l + e) for l leaving and e entering items.
    mutating func place(leaving: [Int], entering: [Int], in loop: LoopSpace) -> [Placement] {
        for item in leaving { helpers.loopShifts[item] = nil }
        var placed: [Placement] = []
        for item in entering {
            let rect = layout.rects[item]
            let shift = loop.copyShift(of: rect, in: region) ?? 0
            helpers.loopShifts[item] = shift
            if shift != 0 { placed.append(Placement(item: item, rect: loop.moved(rect, by: shift))) }
        }
        return placed
    }

    /// On an `idle` update, brings the offset along the loop axis back into `[0, period)` by whole
    /// periods, and answers the shift for the plan's `recenter` (nil when none).
    mutating func recenter(_ loop: LoopSpace) -> Point? {
        let axis = loop.axis
        let shift = loop.recenterShift(of: axis.component(of: offset))
        guard shift != 0 else { return nil }
        scroll.recenter(along: axis, by: shift)
        for (item, copy) in helpers.loopShifts { helpers.loopShifts[item] = copy + shift }
        return axis.setting(shift, in: .zero)
    }
}
