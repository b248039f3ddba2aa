/// One of the two scroll axes.
public enum Axis: String, CaseIterable, Hashable, Sendable {
    case x, y

    /// The other axis.
    public var cross: Axis { self == .x ? .y : .x }

    /// The component of `point` along this axis.
    @inline(__always)
    public func component(of point: Point) -> Double { self == .x ? point.x : point.y }

    /// The component of `size` along this axis.
    @inline(__always)
    public func component(of size: Size) -> Double { self == .x ? size.width : size.height }

    /// `point` with its component along this axis replaced by `value`.
    @inline(__always)
    public func setting(_ value: Double, in point: Point) -> Point {
        self == .x ? Point(x: value, y: point.y) : Point(x: point.x, y: value)
    }

    /// The leading edge (min x or min y) of `rect` along this axis.
    @inline(__always)
    public func leadingEdge(of rect: Rect) -> Double { self == .x ? rect.x : rect.y }

    /// The extent (width or height) of `rect` along this axis.
    @inline(__always)
    public func length(of rect: Rect) -> Double { self == .x ? rect.width : rect.height }

    /// The low and high edges of `region` along this axis.
    @inline(__always)
    public func span(of region: Region) -> (low: Double, high: Double) {
        self == .x ? (region.minX, region.maxX) : (region.minY, region.maxY)
    }
}
