/// An axis-aligned region given by its edges, used for the materialized and screen regions.
///
/// Membership is the strict intersection of docs/api.md "The materialized region": an item that only touches an edge is outside, a
/// zero-size item strictly inside is inside.
public struct Region: Hashable, Sendable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// The viewport rect at `offset` grown by `buffer` on every side.
    public init(offset: Point, viewport: Size, buffer: Double) {
        self.init(
            minX: offset.x - buffer, minY: offset.y - buffer,
            maxX: offset.x + viewport.width + buffer, maxY: offset.y + viewport.height + buffer)
    }

    /// The strict intersection test (docs/api.md "The materialized region").
    @inline(__always)
    public func intersects(_ r: Rect) -> Bool {
        r.x < maxX && r.x + r.width > minX && r.y < maxY && r.y + r.height > minY
    }

    /// Whether the two regions share no area (touching edges share none). Only a choice of how
    /// to diff them rests on it: which items intersect either is still tested item by item.
    @inline(__always)
    func isDisjoint(from other: Region) -> Bool {
        other.minX >= maxX || other.maxX <= minX || other.minY >= maxY || other.maxY <= minY
    }
}
