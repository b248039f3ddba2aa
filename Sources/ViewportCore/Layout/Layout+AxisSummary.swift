extension Layout {
    /// Sorted leading edges and extents of the items along `axis` (for the paging mode `items` and
    /// for `loop`), computed once per layout on first use.
    /// - Complexity: O(n log n) the first time per axis, O(1) afterwards.
    public func axisSummary(_ axis: Axis) -> AxisSummary {
        axisCache.summary(axis, rects: rects)
    }
}
