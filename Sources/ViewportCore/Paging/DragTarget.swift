/// The resting offset of a drag along the paging axis (docs/api.md "Paging and deceleration"), as a pure function of the drag.
///
/// With `o` the offset of the `drag-end` update, `b` the offset of the last `drag-begin`, `v` the
/// velocity, `s` the page size and `r` the deceleration rate, the natural resting offset is
/// `p = o + v/1000 · r/(1 − r)`, and the target:
/// - `none`: `p`;
/// - `page`: `k · s` where `k0 = floor((b + s/2)/s)`; if `v = 0`, `k = floor((o + s/2)/s)`;
///   otherwise `vote = sign(v) + (o > b ? 1 : −1)` and `k = k0 + sign(vote)`;
/// - `snap`: `k · s` with `k = floor(p/s + 1/2)`;
/// - `items`: the item leading edge nearest to `p`, the smaller on a tie.
///
/// In `page` and `snap`, `k` is kept within `0 … pages − 1`, `pages = ceil(content length / s)`,
/// before the target is computed; the target is then clamped to the scrollable range. In a looping
/// session the axis has no ends: `k` is not kept in range, the target is not clamped, and `page`
/// is `k` modulo the pages of one period.
struct DragTarget: Sendable {
    var mode: PagingMode
    /// `o`, `b`, `v`, `s` and `r` along the paging axis.
    var offset: Double
    var begin: Double
    var velocity: Double
    var pageSize: Double
    var decelerationRate: Double
    /// The content length along the paging axis.
    var contentLength: Double
    /// The scrollable range along the paging axis.
    var range: ScrollRange
    /// The loop period along the paging axis, nil when the session does not loop.
    var loopPeriod: Double?

    /// The natural resting offset `p`, kept finite: with `r` near 1 and a huge (finite) velocity
    /// the formula passes the largest double; it saturates there, or at ±`LoopSpace.maxOffset`
    /// along a looping axis (which has no range to clamp to, and whose offsets are bounded).
    var naturalRest: Double {
        let r = decelerationRate
        let p = offset + velocity / 1000 * r / (1 - r)
        let bound = loopPeriod == nil ? Double.greatestFiniteMagnitude : LoopSpace.maxOffset
        return max(-bound, min(p, bound))
    }

    /// The target offset along the paging axis, and the page in the modes `page` and `snap`.
    /// `summary` is asked for only in the mode `items` of a looping session, `nearest` (the item
    /// leading edge nearest to a value, the smaller on a tie) only in the mode `items` of others.
    /// - Complexity: O(1); O(log n) in the mode `items` once the layout's summary exists.
    func resolve(nearest: (Double) -> Double? = { _ in nil }, summary: () -> AxisSummary) -> (offset: Double, page: Int?) {
        let p = naturalRest
        switch mode {
        case .none:
            return (place(p), nil)
        case .page, .snap:
            let s = pageSize
            // A zero page size (the default, on a zero-size viewport) has no pages to snap to.
            guard s > 0 else { return (place(p), 0) }
            var k: Double
            if mode == .snap {
                k = (p / s + 1 / 2).rounded(.down)
            } else if velocity == 0 {
                k = ((offset + s / 2) / s).rounded(.down)
            } else {
                let k0 = ((begin + s / 2) / s).rounded(.down)
                let vote = (velocity > 0 ? 1.0 : -1.0) + (offset > begin ? 1.0 : -1.0)
                k = k0 + (vote > 0 ? 1 : vote < 0 ? -1 : 0)
            }
            if let period = loopPeriod {
                let pages = max(1, (period / s).rounded())
                // Pages so small that `p / s` overflows: the nearest page is `p` itself.
                let target = k * s
                return (target.isFinite ? target : p, Self.saturatingInt(k - (k / pages).rounded(.down) * pages))
            }
            let pages = (contentLength / s).rounded(.up)
            k = max(0, min(k, pages - 1))
            return (range.clamp(k * s), Self.saturatingInt(k))
        case .items:
            guard let period = loopPeriod else { return (range.clamp(nearest(p) ?? p), nil) }
            let edges = summary()
            guard let first = edges.leadingEdges.first, let last = edges.leadingEdges.last,
                let near = edges.nearestLeadingEdge(to: p - (p / period).rounded(.down) * period)
            else { return (p, nil) }
            let base = (p / period).rounded(.down) * period
            let q = p - base
            // The nearest edge of this period, or of the neighbouring periods across the wrap.
            let candidates = [last - period, near, first + period]
            var best = near
            for c in candidates where abs(c - q) < abs(best - q) || (abs(c - q) == abs(best - q) && c < best) {
                best = c
            }
            return (base + best, nil)
        }
    }

    /// `value` clamped to the scrollable range, or left alone along a looping axis.
    private func place(_ value: Double) -> Double { loopPeriod == nil ? range.clamp(value) : value }

    /// `value` (integral) as an Int, saturating at the ends of Int's range; NaN (a page count
    /// that overflowed on both sides) is 0.
    static func saturatingInt(_ value: Double) -> Int {
        if value.isNaN { return 0 }
        if value >= 9.2e18 { return Int.max }
        if value <= -9.2e18 { return Int.min }
        return Int(value)
    }
}
