/// How far the materialized region's edges can move along one axis, with its cross-axis edges
/// fixed, before any item enters or leaves.
///
/// After a small single-axis move that changed something, the session looks `lookahead` points
/// around each of the region's two edges on that axis (the same two index queries that find what
/// entered and left) and records the nearest item edge that would flip an item. Later updates that
/// stay inside answer an empty plan without touching the index: a slow drag, where most frames
/// change nothing, costs O(1) per frame.
struct SafeWindow: Sendable {
    enum Axis: Sendable { case x, y }

    let axis: Axis
    /// The region it was measured at.
    let origin: Region
    /// The low edge (minX or minY) may be in `lowEdgeFrom ..< lowEdgeBelow`.
    private(set) var lowEdgeFrom: Double
    private(set) var lowEdgeBelow: Double
    /// The high edge (maxX or maxY) may be in `(highEdgeAbove, highEdgeThrough]`.
    private(set) var highEdgeAbove: Double
    private(set) var highEdgeThrough: Double

    /// How far beyond each edge the window looks. Longer finds more room per measurement but costs
    /// more candidates; 64 pt measured well for 60 Hz drags (viewport-bench).
    static let lookahead = 64.0

    /// A window of `lookahead` around each edge, to be narrowed by `observe(_:)`.
    init(axis: Axis, around region: Region) {
        self.axis = axis
        self.origin = region
        let l = SafeWindow.lookahead
        let (low, high) = axis == .y ? (region.minY, region.maxY) : (region.minX, region.maxX)
        lowEdgeFrom = low - l
        lowEdgeBelow = low + l
        highEdgeAbove = high - l
        highEdgeThrough = high + l
    }

    /// A window in a given state (a restored snapshot).
    init(axis: Axis, origin: Region, lowEdgeFrom: Double, lowEdgeBelow: Double, highEdgeAbove: Double, highEdgeThrough: Double) {
        self.axis = axis
        self.origin = origin
        self.lowEdgeFrom = lowEdgeFrom
        self.lowEdgeBelow = lowEdgeBelow
        self.highEdgeAbove = highEdgeAbove
        self.highEdgeThrough = highEdgeThrough
    }

    /// The spans along the axis that `observe(_:)` must be shown every item touching (with the
    /// region's cross-axis extent): `lookahead` around each edge. A pair, not an array: no
    /// allocation per measurement.
    var spans: (low: (Double, Double), high: (Double, Double)) {
        ((lowEdgeFrom, lowEdgeBelow), (highEdgeAbove, highEdgeThrough))
    }

    /// Narrows the window by one item near an edge. Items far from the edges change nothing.
    @inline(__always)
    mutating func observe(_ r: Rect) {
        let lo: Double
        let hi: Double
        let crossOverlaps: Bool
        let low: Double
        let high: Double
        switch axis {
        case .y:
            (lo, hi) = (r.y, r.y + r.height)
            crossOverlaps = r.x < origin.maxX && r.x + r.width > origin.minX
            (low, high) = (origin.minY, origin.maxY)
        case .x:
            (lo, hi) = (r.x, r.x + r.width)
            crossOverlaps = r.y < origin.maxY && r.y + r.height > origin.minY
            (low, high) = (origin.minX, origin.maxX)
        }
        guard crossOverlaps else { return }
        if hi <= low {
            // Before the low edge: enters once that edge passes below its far side.
            lowEdgeFrom = max(lowEdgeFrom, hi)
        } else if lo >= high {
            // Beyond the high edge: enters once that edge passes its near side.
            highEdgeThrough = min(highEdgeThrough, lo)
        } else {
            // Shown: leaves once the low edge reaches its far side or the high edge its near side.
            lowEdgeBelow = min(lowEdgeBelow, hi)
            highEdgeAbove = max(highEdgeAbove, lo)
        }
    }

    /// Whether the set of materialized items at `region` is the same as at `origin`.
    @inline(__always)
    func contains(_ region: Region) -> Bool {
        switch axis {
        case .y:
            return region.minX == origin.minX && region.maxX == origin.maxX
                && region.minY >= lowEdgeFrom && region.minY < lowEdgeBelow
                && region.maxY > highEdgeAbove && region.maxY <= highEdgeThrough
        case .x:
            return region.minY == origin.minY && region.maxY == origin.maxY
                && region.minX >= lowEdgeFrom && region.minX < lowEdgeBelow
                && region.maxX > highEdgeAbove && region.maxX <= highEdgeThrough
        }
    }
}
