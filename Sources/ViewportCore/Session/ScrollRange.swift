/// The offsets a scroll view can rest at along one axis (docs/api.md "Paging and deceleration"):
/// `[-inset.leading, content + inset.trailing − viewport]`, or the single offset at its lower end
/// when the content is shorter than the viewport.
///
/// Client numbers are any finite doubles, so the sums here may pass the largest double: the upper
/// end saturates at the largest finite value, and `progress`/`offset(atProgress:)` avoid forming
/// an infinite length, so no NaN or infinity comes out of a range.
public struct ScrollRange: Hashable, Sendable {
    public let lower: Double
    public let upper: Double

    /// The range along `axis` of a scroll view with these sizes and insets.
    public init(axis: Axis, contentSize: Size, viewport: Size, insets: Insets) {
        let (lead, trail) = axis == .x ? (insets.left, insets.right) : (insets.top, insets.bottom)
        lower = -lead
        let far = axis.component(of: contentSize) + trail - axis.component(of: viewport)
        // `far` is ±infinity only when a partial sum overflowed (each input is finite).
        upper = max(lower, far.isFinite ? far : (far > 0 ? .greatestFiniteMagnitude : lower))
    }

    /// `value` moved into the range.
    @inline(__always)
    public func clamp(_ value: Double) -> Double { max(lower, min(value, upper)) }

    /// Where `value` lies in the range, from 0 at the lower end to 1 at the upper end (0 when the
    /// range is a single offset).
    public func progress(of value: Double) -> Double {
        let length = upper - lower
        guard length > 0 else { return 0 }
        if !length.isFinite {
            // Both ends near the largest double: halve everything (exact for normal numbers).
            return max(0, min(1, (value / 2 - lower / 2) / (upper / 2 - lower / 2)))
        }
        // `value - lower` may overflow to ±infinity: the clamp makes it 1 or 0.
        return max(0, min(1, (value - lower) / length))
    }

    /// The offset at `progress` (0…1) of the range.
    public func offset(atProgress progress: Double) -> Double {
        let length = upper - lower
        if length.isFinite { return lower + progress * length }
        return lower * (1 - progress) + upper * progress
    }
}
