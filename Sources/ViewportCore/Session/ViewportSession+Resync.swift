extension ViewportSession {
    /// Adopts the views a client really has (docs/api.md "Many instances, one store": `POST
    /// /v1/sessions/{id}/resync`): its offset and viewport, shown items and pools replace the
    /// session's, `seq` becomes the client's, and handles assigned from now on are above every
    /// handle the session assigned or was told about.
    ///
    /// The shown items need not be the ones materialized at the offset: the next update compares
    /// them with its region and plans what leaves and enters. The helpers restart from the
    /// client's state: no outstanding prefetch predictions, the shown items count as loaded, no
    /// drag in progress; enter counts and the selection stay.
    ///
    /// Nothing changes when it throws; the error names the field (`visible[2].view`,
    /// `pool.card[0].id`).
    /// - Complexity: O(v + p) for v visible and p pooled views.
    public mutating func resync(_ state: ResyncState) throws(SessionError) {
        guard state.offset.isFinite else { throw .invalid(field: "offset", reason: "must be finite") }
        let newViewport = state.viewport ?? viewport
        if let size = state.viewport {
            guard size.isValidExtent else { throw .invalid(field: "viewport", reason: "width and height must be finite and not negative") }
            if let loop, size != viewport { try Self.checkLoop(loop, viewport: size, buffer: buffer.still, paging: paging, field: "viewport") }
        }
        if let loop, abs(loop.axis.component(of: state.offset)) > LoopSpace.maxOffset {
            throw .invalid(field: "offset", reason: "must be within ±\(LoopSpace.maxOffset) along the loop axis")
        }
        var fieldOfView: [Int: String] = [:]
        var highest = 0
        func claim(_ view: Int, field: String) throws(SessionError) {
            guard view > 0 else { throw .invalid(field: field, reason: "\(view) is not a positive integer") }
            if let other = fieldOfView[view] { throw .invalid(field: field, reason: "view \(view) is also \(other)") }
            fieldOfView[view] = field
            highest = max(highest, view)
        }
        var seen = Set<Int>()
        for (k, entry) in state.visible.enumerated() {
            guard layout.rects.indices.contains(entry.item) else { throw .invalid(field: "visible[\(k)].id", reason: "not in the layout") }
            guard seen.insert(entry.item).inserted else {
                throw .invalid(field: "visible[\(k)].id", reason: "\"\(layout.id(at: entry.item))\" is listed twice")
            }
            try claim(entry.view, field: "visible[\(k)].view")
        }
        try checkViewLimit(state.visible.count, field: "visible")
        var classes: [Int] = []
        for (reuse, views) in state.pool {
            guard let c = layout.reuseClass(named: reuse) else {
                throw .invalid(field: "pool.\(reuse)", reason: "no item of the layout has the reuse identifier \"\(reuse)\"")
            }
            guard !classes.contains(c) else { throw .invalid(field: "pool.\(reuse)", reason: "is listed twice") }
            classes.append(c)
            for (k, pooled) in views.enumerated() {
                // A view whose last item is not named (gone from the layout) belongs to the pool as it is.
                if let item = pooled.item {
                    guard layout.rects.indices.contains(item) else { throw .invalid(field: "pool.\(reuse)[\(k)].id", reason: "not in the layout") }
                    guard layout.reuseClass(of: item) == c else {
                        let actual = layout.reuseName(of: item).map { "\"\($0)\"" } ?? "none"
                        throw .invalid(
                            field: "pool.\(reuse)[\(k)].id",
                            reason: "item \"\(layout.id(at: item))\" has the reuse identifier \(actual), not \"\(reuse)\"")
                    }
                }
                try claim(pooled.view, field: "pool.\(reuse)[\(k)].view")
            }
        }

        // Valid: adopt it.
        // The client's views say nothing of its motion: the region is the still one.
        scroll.move(to: state.offset, viewport: newViewport, motion: .none)
        shown = ShownViews()
        for entry in state.visible { shown[entry.item] = entry.view }
        pools.removeAll()
        for (c, (_, views)) in zip(classes, state.pool) { pools.adopt(views, reuseClass: c, pooledAt: state.seq) }
        pools.resolveCaps(for: layout)
        handles.reserve(from: highest + 1)
        scroll.diffBasis = .full
        scroll.pinned = loop == nil ? pinnedHeader(at: offset).flatMap { shown[$0.item] != nil ? $0 : nil } : nil
        scroll.dragBegin = nil
        if let prefetcher = helpers.prefetcher { helpers.prefetcher = Prefetcher(seconds: prefetcher.seconds) }
        if helpers.lazyLoader != nil { helpers.lazyLoader = LazyLoader(loaded: Set(shown.keys), pending: [], fromDragEnd: []) }
        if !helpers.loopShifts.isEmpty { helpers.loopShifts = [:] }
        if let loop {
            for item in shown.keys { helpers.loopShifts[item] = loop.copyShift(of: layout.rects[item], in: region) ?? 0 }
        }
        stats.peakViews = max(stats.peakViews, liveViews)
        sequence.restart(at: state.seq, plan: Plan(seq: state.seq, offset: offset))
    }
}
