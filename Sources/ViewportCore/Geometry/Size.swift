/// A width and height in points.
public struct Size: Hashable, Sendable {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    public static let zero = Size(width: 0, height: 0)

    public var isFinite: Bool { width.isFinite && height.isFinite }

    /// Finite and not negative: what a viewport or content size must be.
    public var isValidExtent: Bool { isFinite && width >= 0 && height >= 0 }
}
