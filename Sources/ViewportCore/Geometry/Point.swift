/// A point in content coordinates, in points (origin top-left, as UIScrollView).
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public static let zero = Point(x: 0, y: 0)

    public var isFinite: Bool { x.isFinite && y.isFinite }
}
