/// When `exposure` counts an item as on screen, and how long it must stay to be viewed (docs/api.md
/// "Viewability, direction-aware buffers, time"; FlatList's viewabilityConfig).
///
/// An item is on screen when the part of its rect inside the screen region (the viewport without
/// buffer) is at least `threshold` of its area. `threshold` 0 is strict intersection, as
/// `"exposure": true` always was; an item of zero area is on screen when it lies strictly inside.
/// With `minTime`, a stay on screen is viewed once it has lasted `minTime` seconds of client time.
public struct ExposureRule: Hashable, Sendable {
    /// The visible fraction of its area an item needs, in 0…1.
    public var threshold: Double
    /// Seconds an item must stay on screen to be listed under `viewed`; nil for no `viewed`.
    public var minTime: Double?

    public init(threshold: Double = 0, minTime: Double? = nil) {
        self.threshold = threshold
        self.minTime = minTime
    }

    func validate() throws(SessionError) {
        guard threshold.isFinite, threshold >= 0, threshold <= 1 else {
            throw .invalid(field: "exposure.threshold", reason: "must be a number in 0…1")
        }
        if let minTime, !(minTime.isFinite && minTime >= 0) {
            throw .invalid(field: "exposure.minTime", reason: "must be finite and not negative")
        }
    }

    /// Whether an item with frame `r` is on screen in `screen`.
    ///
    /// Extents are taken as the index sees them (`x + width` minus `x`), so an item inside the
    /// screen has exactly its own extent visible and a threshold of 1 holds for it. The visible
    /// area is compared with `threshold ×` the area; when the area overflows (items beyond 1e154
    /// points), the two fractions per axis are multiplied instead.
    /// - Complexity: O(1).
    @inline(__always)
    public func isOnScreen(_ r: Rect, in screen: Region) -> Bool {
        if threshold == 0 { return screen.intersects(r) }
        let (x0, x1, y0, y1) = (r.x, r.x + r.width, r.y, r.y + r.height)
        let (lx, ly) = (x1 - x0, y1 - y0)
        guard lx > 0, ly > 0 else {
            // Zero area: strictly inside.
            return screen.minX < x0 && x1 < screen.maxX && screen.minY < y0 && y1 < screen.maxY
        }
        let vx = min(x1, screen.maxX) - max(x0, screen.minX)
        let vy = min(y1, screen.maxY) - max(y0, screen.minY)
        guard vx > 0, vy > 0 else { return false }
        let area = lx * ly
        if area.isFinite { return vx * vy >= threshold * area }
        return (vx / lx) * (vy / ly) >= threshold
    }
}
