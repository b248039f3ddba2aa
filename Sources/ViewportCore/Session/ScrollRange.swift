/// The offsets a scroll view can rest at along one axis (API.md "Paging and deceleration"):
/// `[-inset.leading, content + inset.trailing − viewport]`, or the single offset at its lower end
/// when the content is shorter than the viewport.
public struct ScrollRange: Hashable, Sendable {
    public let lower: Double
    public let upper: Double

    /// The range along `axis` of a scroll view with these sizes and insets.
    public init(axis: Axis, contentSize: Size, viewport: Size, insets: Insets) {
        let (lead, trail) = axis == .x ? (insets.left, insets.right) : (insets.top, insets.bottom)
        lower = -lead
        upper = max(lower, axis.component(of: contentSize) + trail - axis.component(of: viewport))
    }

    /// `value` moved into the range.
    @inline(__always)
    public func clamp(_ value: Double) -> Double { max(lower, min(value, upper)) }

    /// Where `value` lies in the range, from 0 at the lower end to 1 at the upper end (0 when the
    /// range is a single offset).
    public func progress(of value: Double) -> Double {
        let length = upper - lower
        guard length > 0 else { return 0 }
        return max(0, min(1, (value - lower) / length))
    }

    /// The offset at `progress` (0…1) of the range.
    public func offset(atProgress progress: Double) -> Double { lower + progress * (upper - lower) }
}
