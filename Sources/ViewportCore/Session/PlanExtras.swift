/// The outputs of paging and the scrolling helpers in one plan. A `Plan` holds one only when some
/// output is present, so plans of sessions without helpers stay small and allocate nothing.
struct PlanExtras: Hashable, Sendable {
    static let empty = PlanExtras()

    /// An immutable box, so a `Plan` holds one reference (nil without helper outputs).
    final class Box: Sendable {
        let value: PlanExtras
        init(_ value: PlanExtras) { self.value = value }
    }

    var target: Point?
    var page: Int?
    var prefetch: [Int] = []
    var cancelPrefetch: [Int] = []
    var load: [Int] = []
    var enter: [ExposureEntry] = []
    var leave: [Int] = []
    var linked: [LinkedOffset] = []
    var selected: Int?
    var placements: [Placement] = []
    var recenter: Point?
}
