/// What paging and looping need to know about a layout along one axis, computed once per layout
/// and axis, on first use.
public struct AxisSummary: Sendable {
    /// Every item's leading edge (min x or min y), ascending.
    public let leadingEdges: ContiguousArray<Double>
    /// The smallest leading edge and the largest trailing edge (0 and 0 without items).
    public let minLeading: Double
    public let maxTrailing: Double
    /// The longest item extent along the axis (0 without items).
    public let maxLength: Double

    /// The summary of the rects `forEachRect` gives (`capacity` of them, about).
    /// - Complexity: O(n log n).
    init(axis: Axis, capacity: Int, forEachRect: ((Rect) -> Void) -> Void) {
        var edges = ContiguousArray<Double>()
        edges.reserveCapacity(capacity)
        var low = Double.infinity
        var high = -Double.infinity
        var longest = 0.0
        forEachRect { r in
            let lead = axis.leadingEdge(of: r)
            let length = axis.length(of: r)
            edges.append(lead)
            low = min(low, lead)
            high = max(high, lead + length)
            longest = max(longest, length)
        }
        let isEmpty = edges.isEmpty
        edges.sort()
        leadingEdges = edges
        minLeading = isEmpty ? 0 : low
        maxTrailing = isEmpty ? 0 : high
        maxLength = longest
    }

    /// The leading edge nearest to `value`; on a tie, the smaller. Nil without items.
    /// - Complexity: O(log n).
    public func nearestLeadingEdge(to value: Double) -> Double? {
        guard let first = leadingEdges.first, let last = leadingEdges.last else { return nil }
        // First edge >= value.
        var lo = 0
        var hi = leadingEdges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if leadingEdges[mid] < value { lo = mid + 1 } else { hi = mid }
        }
        if lo == 0 { return first }
        if lo == leadingEdges.count { return last }
        let below = leadingEdges[lo - 1]
        let above = leadingEdges[lo]
        return value - below <= above - value ? below : above
    }
}
