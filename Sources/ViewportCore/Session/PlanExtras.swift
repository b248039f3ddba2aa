/// The rarer parts of a plan (paging and helper outputs, layout-change moves, sticky pins) in one
/// box. A `Plan` holds one only when some part is present, so the common plan is its view lists'
/// box (`PlanViews`) and a nil: copying it (every update keeps its last plan) retains two
/// references, not a dozen.
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
    var viewed: [ExposureEntry] = []
    var linked: [LinkedOffset] = []
    var selected: Int?
    var placements: [Placement] = []
    var recenter: Point?
    var move: [PlanEntry] = []
    var previousLayout: LayoutReference?
    var pin: [PinEntry] = []
    var unpin: [PinEntry] = []
    var contentSize: Size?
}

/// A layout compared by identity (a plan names the layout object its leaving items belong to).
struct LayoutReference: Hashable, Sendable {
    let layout: Layout
    static func == (a: LayoutReference, b: LayoutReference) -> Bool { a.layout === b.layout }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(layout)) }
}
