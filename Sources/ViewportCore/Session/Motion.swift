/// Which way the viewport moves along each axis: −1 toward lower offsets, +1 toward higher ones,
/// 0 not at all. It decides where a direction-aware `buffer` leans (see `Buffer`), and how far the
/// region reaches beyond the buffer that way (see `LookAhead`).
public struct Motion: Hashable, Sendable {
    public var x: Int
    public var y: Int
    /// Points the region reaches beyond the buffer in the direction of `x` (≥ 0; 0 when `x` is).
    public var lookAheadX: Double
    /// Points the region reaches beyond the buffer in the direction of `y` (≥ 0; 0 when `y` is).
    public var lookAheadY: Double

    public init(x: Int, y: Int, lookAheadX: Double = 0, lookAheadY: Double = 0) {
        self.x = x
        self.y = y
        self.lookAheadX = lookAheadX
        self.lookAheadY = lookAheadY
    }

    /// No motion (the opening plan, a layout change).
    public static let none = Motion(x: 0, y: 0)

    /// The rule of docs/api.md "Viewability, direction-aware buffers, time": on each axis, the sign of `velocity` when it is non-zero, else the sign of the
    /// offset change from `previous` to `offset`, else none. Compared, not subtracted, so no
    /// difference can overflow.
    @inline(__always)
    public init(velocity: Point?, from previous: Point, to offset: Point) {
        self.init(
            x: Self.sign(velocity?.x ?? 0, else: previous.x, offset.x),
            y: Self.sign(velocity?.y ?? 0, else: previous.y, offset.y))
    }

    /// Whether the region reaches beyond the buffer on some axis.
    @inline(__always)
    public var looksAhead: Bool { lookAheadX > 0 || lookAheadY > 0 }

    @inline(__always)
    private static func sign(_ v: Double, else from: Double, _ to: Double) -> Int {
        if v > 0 { return 1 }
        if v < 0 { return -1 }
        if to > from { return 1 }
        if to < from { return -1 }
        return 0
    }
}
