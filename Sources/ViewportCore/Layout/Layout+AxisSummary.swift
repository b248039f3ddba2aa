extension Layout {
    /// Sorted leading edges and extents of the items along `axis` (for the paging mode `items` and
    /// for `loop`), computed once per layout on first use.
    /// - Complexity: O(n log n) the first time per axis, O(1) afterwards.
    public func axisSummary(_ axis: Axis) -> AxisSummary {
        axisCache.summary(axis) { AxisSummary(axis: axis, capacity: count) { forEachRectInOrder($0) } }
    }

    /// The leading edge (min x or min y) along `axis` nearest to `value`, of any item; on a tie,
    /// the smaller. Nil without items (paging mode `items`).
    ///
    /// Without stacks, the layout's `axisSummary`. With stacks, each stack answers for its own
    /// items (`StackSection.nearestLeadingEdge`, or its lanes across the axis) and a summary of
    /// the other items does for them: that summary is made once per layout version and handed on
    /// by a PATCH that moves none of them, so an edited stack never sorts its items.
    /// - Complexity: O(log n) (plus O(lanes · log n) per stack); O(m log m) the first time for
    ///   the m items outside stacks.
    public func nearestLeadingEdge(along axis: Axis, to value: Double) -> Double? {
        guard hasStacks else { return axisSummary(axis).nearestLeadingEdge(to: value) }
        var best = fixedEdgesSummary(axis).nearestLeadingEdge(to: value)
        func consider(_ edge: Double) {
            if let b = best, abs(b - value) < abs(edge - value) || (abs(b - value) == abs(edge - value) && b <= edge) { return }
            best = edge
        }
        for stack in stacks where !stack.section.isEmpty {
            let section = stack.section
            if axis == section.axis {
                if let found = section.nearestLeadingEdge(to: value) { consider(found.edge) }
            } else {
                for lane in 0..<section.laneCount where section.tree.count(inLane: lane) > 0 { consider(section.laneOffset(lane)) }
            }
        }
        return best
    }

    /// The summary of the items outside stacks along `axis`.
    /// - Complexity: O(m log m) the first time per axis and version, O(1) afterwards.
    func fixedEdgesSummary(_ axis: Axis) -> AxisSummary {
        fixedEdgesCache.summary(axis) {
            AxisSummary(axis: axis, capacity: 0) { body in
                for segment in segments {
                    switch segment {
                    case .explicit(_, let storageStart, let count):
                        for k in storageStart..<(storageStart + count) { body(explicitRects[k]) }
                    case .generated(_, let section):
                        for k in 0..<section.count { body(section.rect(k)) }
                    case .placed(_, _, let p):
                        for k in 0..<placedSections[p].count { body(placedSections[p].rect(k)) }
                    case .stack:
                        break
                    }
                }
            }
        }
    }
}
