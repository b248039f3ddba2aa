/// The content of a looping session: the layout repeated every `period` points along `axis`, so
/// item `i` also sits at its rect moved by every multiple of the period.
///
/// An item is materialized when some copy of it strictly intersects the region. The session
/// requires `period ≥ region length + longest item` along the axis, so that at most one copy of an
/// item meets the materialized region: an item is shown by one view, at one place.
struct LoopSpace: Sendable {
    let axis: Axis
    let period: Double
    /// The items' extent along the axis, from the layout's `AxisSummary`.
    let minLeading: Double
    let maxTrailing: Double
    let maxLength: Double

    init(axis: Axis, period: Double, summary: AxisSummary) {
        self.axis = axis
        self.period = period
        minLeading = summary.minLeading
        maxTrailing = summary.maxTrailing
        maxLength = summary.maxLength
    }

    /// Offsets along a looping axis must stay within ±`maxOffset` so that copies keep their precision.
    static let maxOffset = 1e12
    /// The shortest period: offsets over the period (copy numbers) then stay below 2^53, exact and
    /// finite, for every offset within ±`maxOffset`.
    static let minPeriod = 1.0 / 1024

    /// `rect` moved by `shift` along the axis.
    @inline(__always)
    func moved(_ rect: Rect, by shift: Double) -> Rect {
        axis == .x
            ? Rect(x: rect.x + shift, y: rect.y, width: rect.width, height: rect.height)
            : Rect(x: rect.x, y: rect.y + shift, width: rect.width, height: rect.height)
    }

    /// The span `[low, high]` along the axis worth searching for `region`: a region longer than a
    /// period plus every item's extent meets every copy phase already, so it is cut there.
    private func searchSpan(_ region: Region) -> (Double, Double) {
        let (low, high) = axis.span(of: region)
        let enough = period + (maxTrailing - minLeading) + 1
        return (low, high - low > enough ? low + enough : high)
    }

    /// The shift (a multiple of the period) of the copy of `rect` that strictly intersects
    /// `region`, nil when none does.
    /// - Complexity: O(1).
    func copyShift(of rect: Rect, in region: Region) -> Double? {
        let (low, high) = searchSpan(region)
        let lead = axis.leadingEdge(of: rect)
        let first = ((low - lead - axis.length(of: rect)) / period).rounded(.down)
        let last = ((high - lead) / period).rounded(.up)
        // Counted, not `m - first`: past 2^53 periods `m += 1` leaves `m` unchanged (a period
        // tiny next to the offset), and the loop must still end.
        var m = first
        for _ in 0..<16 where m <= last {
            let shift = m * period
            if region.intersects(moved(rect, by: shift)) { return shift }
            m += 1
        }
        return nil
    }

    /// Calls `body` with every item some copy of which strictly intersects `region` (an item may
    /// be reported more than once when the region is longer than a period).
    /// - Complexity: O(c (log n + k)) for c copies of the layout meeting the region (1 or 2 for a
    ///   materialized region) and k items found.
    func forEachItem(in region: Region, layout: Layout, _ body: (Int) -> Void) {
        let (low, high) = searchSpan(region)
        let first = ((low - maxTrailing) / period).rounded(.down)
        let last = ((high - minLeading) / period).rounded(.up)
        var m = first
        // Counted (see `copyShift`): at most 64 copies, even where `m += 1` cannot move `m`.
        for _ in 0..<64 where m <= last {
            let shift = m * period
            // The index filter is conservative; widen the moved query by a hair for rounding.
            let slack = 1e-9 * (abs(low) + abs(high) + abs(shift) + 1)
            let (qLow, qHigh) = (low - shift - slack, high - shift + slack)
            let visit = { (item: Int, rect: Rect) in
                if region.intersects(moved(rect, by: shift)) { body(item) }
            }
            if axis == .x {
                layout.forEachItem(minX: qLow, minY: region.minY, maxX: qHigh, maxY: region.maxY, visit)
            } else {
                layout.forEachItem(minX: region.minX, minY: qLow, maxX: region.maxX, maxY: qHigh, visit)
            }
            m += 1
        }
    }

    /// The whole number of periods to add to an offset along the axis to bring it into
    /// `[0, period)`.
    func recenterShift(of offset: Double) -> Double {
        guard offset < 0 || offset >= period else { return 0 }
        return -(offset / period).rounded(.down) * period
    }

    /// `value` moved by whole periods to the copy nearest to `reference`.
    func nearestCopy(of value: Double, to reference: Double) -> Double {
        value + ((reference - value) / period).rounded() * period
    }
}
