/// The `prefetch` helper: predicts the items that the materialized region will reach within
/// `seconds` at the current velocity.
///
/// The swept region is the bounding box of the materialized region and of that region translated
/// by `velocity × seconds`: the union of the region at every intermediate offset for a motion along
/// one axis, and a slight superset of it (the box's two far corners) for a diagonal one. An item
/// is predicted while it strictly intersects the swept region and is not materialized.
struct Prefetcher: Sendable {
    let seconds: Double
    /// Items listed under `prefetch` and still predicted.
    private(set) var predicted: Set<Int> = []

    init(seconds: Double, predicted: Set<Int> = []) {
        self.seconds = seconds
        self.predicted = predicted
    }

    /// Carries predictions to another layout (`map`: old position → new, nil when gone).
    mutating func remap(_ map: (Int) -> Int?) { predicted = Set(predicted.compactMap(map)) }

    /// The region swept by `region` moving at `velocity` for `seconds`.
    func sweep(_ region: Region, velocity: Point) -> Region {
        let dx = velocity.x * seconds
        let dy = velocity.y * seconds
        return Region(
            minX: min(region.minX, region.minX + dx), minY: min(region.minY, region.minY + dy),
            maxX: max(region.maxX, region.maxX + dx), maxY: max(region.maxY, region.maxY + dy))
    }

    /// Replaces the predictions by `now` (items predicted by this update, in layout order; nil for
    /// an update without velocity) and answers the plan's `prefetch` (new predictions) and
    /// `cancelPrefetch` (dropped predictions of items that are not materialized: those that entered
    /// stop being predictions silently).
    /// - Complexity: O(p log p) for p predictions before and after.
    mutating func update(predicted now: [Int]?, isMaterialized: (Int) -> Bool) -> (prefetch: [Int], cancel: [Int]) {
        guard let now else {
            let cancel = predicted.filter { !isMaterialized($0) }.sorted()
            predicted = []
            return ([], cancel)
        }
        let nowSet = Set(now)
        let prefetch = now.filter { !predicted.contains($0) }
        let cancel = predicted.filter { !nowSet.contains($0) && !isMaterialized($0) }.sorted()
        predicted = nowSet
        return (prefetch, cancel)
    }
}
