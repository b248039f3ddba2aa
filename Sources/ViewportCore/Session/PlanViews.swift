/// A plan's four view lists in one immutable box (see `Plan.views`): a `Plan` holds one only
/// when some list is not empty.
final class PlanViews: Sendable {
    let recycle: [PlanEntry]
    let discard: [PlanEntry]
    let reuse: [ReuseEntry]
    let create: [PlanEntry]

    init(recycle: [PlanEntry], discard: [PlanEntry], reuse: [ReuseEntry], create: [PlanEntry]) {
        self.recycle = recycle
        self.discard = discard
        self.reuse = reuse
        self.create = create
    }
}
