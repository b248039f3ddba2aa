/// An `items` section of a layout with stacks: explicit items kept relative to the section's
/// origin, so the section moves in O(1) when a stack above it changes (PATCH).
///
/// Item `k`'s rect is `origin + rects[k]` (x and y added, sizes as given): the rect the section
/// stack computes when the layout is posted, and again when the layout is posted back from
/// `GET /v1/sessions/{id}/layout` at the moved origin. Its own R-tree indexes the relative rects;
/// a query translates the box by the origin, widened against rounding, and callers test exactly.
/// Its far corner is `origin + relativeFar` (the largest relative far edges, 0 at least), like a
/// movable generated section's.
struct PlacedSection: Sendable {
    /// The section's `id` when it had one (only written back out).
    let id: String?
    var origin: Point
    let rects: RectStore
    let reuseClasses: ReuseClassStore
    /// Sticky items, by index in the section.
    let sticky: [Int]
    /// The ids of its items are the layout's id table entries `storageStart ..< storageStart + count`.
    let storageStart: Int
    let index: SpatialIndex
    let relativeFar: Point

    init(id: String?, origin: Point, rects: RectStore, reuseClasses: ReuseClassStore, sticky: [Int], storageStart: Int) {
        self.id = id
        self.origin = origin
        self.rects = rects
        self.reuseClasses = reuseClasses
        self.sticky = sticky
        self.storageStart = storageStart
        self.index = SpatialIndex(store: rects)
        var far = Point.zero
        for r in rects { far = Point(x: max(far.x, r.x + r.width), y: max(far.y, r.y + r.height)) }
        self.relativeFar = far
    }

    var count: Int { rects.count }

    /// The largest `x + width` and `y + height` the section reaches (its origin at least).
    var farCorner: Point { Point(x: origin.x + relativeFar.x, y: origin.y + relativeFar.y) }

    /// Item `k`'s rect in content coordinates.
    @inline(__always)
    func rect(_ k: Int) -> Rect {
        let r = rects[k]
        return Rect(x: origin.x + r.x, y: origin.y + r.y, width: r.width, height: r.height)
    }

    /// Calls `body(k)` for every item whose rect may touch the closed box (a superset).
    /// - Complexity: O(log n + k) as the R-tree.
    @inline(__always)
    func forEachCandidate(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int) -> Void) {
        guard !rects.isEmpty else { return }
        // `origin + r` is rounded once: widen by far more than that rounding.
        let slackX = (abs(minX) + abs(maxX) + abs(origin.x)) * 0x1p-40 + 0x1p-40
        let slackY = (abs(minY) + abs(maxY) + abs(origin.y)) * 0x1p-40 + 0x1p-40
        index.forEachCandidate(
            minX: minX - origin.x - slackX, minY: minY - origin.y - slackY, maxX: maxX - origin.x + slackX, maxY: maxY - origin.y + slackY
        ) { k, _ in body(k) }
    }
}
