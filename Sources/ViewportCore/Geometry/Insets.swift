/// Content insets `[top, left, bottom, right]`, as UIScrollView's contentInset: they extend the
/// scrollable range, not the materialized region.
public struct Insets: Hashable, Sendable {
    public var top: Double
    public var left: Double
    public var bottom: Double
    public var right: Double

    public init(top: Double, left: Double, bottom: Double, right: Double) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }

    public static let zero = Insets(top: 0, left: 0, bottom: 0, right: 0)

    public var isFinite: Bool { top.isFinite && left.isFinite && bottom.isFinite && right.isFinite }
}
