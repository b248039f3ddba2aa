/// An item frame `[x, y, width, height]` in content coordinates.
///
/// The far edges are computed as `x + width` and `y + height` wherever they are needed, so every
/// part of the code (index, planner, tests' oracle) sees the same floating-point values.
public struct Rect: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    public var minX: Double { x }
    public var minY: Double { y }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }

    public var isFinite: Bool { x.isFinite && y.isFinite && width.isFinite && height.isFinite }
}
