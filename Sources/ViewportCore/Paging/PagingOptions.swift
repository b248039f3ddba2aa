/// A session's `paging` option.
public struct PagingOptions: Hashable, Sendable {
    /// UIScrollView's `.normal` deceleration rate.
    public static let normalDecelerationRate = 0.998

    public var mode: PagingMode
    /// The paging axis; nil is automatic: `y` if the content is taller than the viewport, else `x`.
    public var axis: Axis?
    /// The page size (the axis picks its component); nil is the viewport size.
    public var size: Size?
    /// `r` of `p = o + v/1000 · r/(1 − r)`, in (0, 1).
    public var decelerationRate: Double

    public init(mode: PagingMode = .none, axis: Axis? = nil, size: Size? = nil, decelerationRate: Double = PagingOptions.normalDecelerationRate) {
        self.mode = mode
        self.axis = axis
        self.size = size
        self.decelerationRate = decelerationRate
    }

    /// Checks every value; the error names the field.
    public func validate() throws(SessionError) {
        guard decelerationRate.isFinite, decelerationRate > 0, decelerationRate < 1 else {
            throw .invalid(field: "paging.decelerationRate", reason: "must be greater than 0 and less than 1")
        }
        if let size {
            guard size.isValidExtent else {
                throw .invalid(field: "paging.size", reason: "width and height must be finite and not negative")
            }
            if mode == .page || mode == .snap {
                let used: [Axis] = axis.map { [$0] } ?? Axis.allCases
                for a in used where a.component(of: size) <= 0 {
                    throw .invalid(field: "paging.size", reason: "the page \(a == .x ? "width" : "height") must be positive in mode \(mode.rawValue)")
                }
            }
        }
    }
}
