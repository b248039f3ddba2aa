/// How far the materialized region's edges can move along one axis, with its cross-axis edges
/// fixed, before any item enters or leaves.
///
/// After a plan that changed something the session measures, around the region's two edges on the
/// axis it moved along, the nearest edge of an item that would flip; later updates that stay
/// inside answer an empty plan without touching the index. This is what makes a slow drag (most
/// frames change nothing) cost O(1) per frame.
struct SafeWindow: Sendable {
    enum Axis: Sendable { case x, y }

    let axis: Axis
    /// The region it was measured at.
    let origin: Region
    /// The low edge (minX or minY) may be in `lowEdgeFrom ..< lowEdgeBelow`.
    let lowEdgeFrom: Double
    let lowEdgeBelow: Double
    /// The high edge (maxX or maxY) may be in `(highEdgeAbove, highEdgeThrough]`.
    let highEdgeAbove: Double
    let highEdgeThrough: Double

    /// How far beyond each edge the window looks. Longer finds more room per measurement but costs
    /// more candidates; 64 pt measured best for 60 Hz drags (viewport-bench).
    static let lookahead = 64.0

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

    /// Measures the window around `region` along `axis`.
    /// - Complexity: four index queries over strips `lookahead` wide: O(log n + items near the edges).
    init(axis: Axis, around region: Region, layout: Layout) {
        self.axis = axis
        self.origin = region
        let l = SafeWindow.lookahead
        let rects = layout.rects
        let index = layout.index
        // Edges along the axis of an item, and of the region.
        @inline(__always) func lo(_ r: Rect) -> Double { axis == .y ? r.y : r.x }
        @inline(__always) func hi(_ r: Rect) -> Double { axis == .y ? r.y + r.height : r.x + r.width }
        @inline(__always) func crossOverlaps(_ r: Rect) -> Bool {
            axis == .y ? (r.x < region.maxX && r.x + r.width > region.minX) : (r.y < region.maxY && r.y + r.height > region.minY)
        }
        let low = axis == .y ? region.minY : region.minX
        let high = axis == .y ? region.maxY : region.maxX
        func search(_ from: Double, _ to: Double, _ body: (Rect) -> Void) {
            if axis == .y {
                index.forEachCandidate(minX: region.minX, minY: from, maxX: region.maxX, maxY: to) { body(rects[$0]) }
            } else {
                index.forEachCandidate(minX: from, minY: region.minY, maxX: to, maxY: region.maxY) { body(rects[$0]) }
            }
        }
        // Low edge moving up: an item before it enters once the edge passes below its far side.
        var lowFrom = low - l
        search(low - l, low) { r in
            if crossOverlaps(r), hi(r) <= low { lowFrom = max(lowFrom, hi(r)) }
        }
        // Low edge moving down: a shown item leaves once the edge reaches its far side.
        var lowBelow = low + l
        search(low, low + l) { r in
            if crossOverlaps(r), region.intersects(r) { lowBelow = min(lowBelow, hi(r)) }
        }
        // High edge moving up: a shown item leaves once the edge reaches its near side.
        var highAbove = high - l
        search(high - l, high) { r in
            if crossOverlaps(r), region.intersects(r) { highAbove = max(highAbove, lo(r)) }
        }
        // High edge moving down: an item beyond it enters once the edge passes its near side.
        var highThrough = high + l
        search(high, high + l) { r in
            if crossOverlaps(r), lo(r) >= high { highThrough = min(highThrough, lo(r)) }
        }
        lowEdgeFrom = lowFrom
        lowEdgeBelow = lowBelow
        highEdgeAbove = highAbove
        highEdgeThrough = highThrough
    }
}
