/// Where a sorted run's query from a given near edge starts: the block of reaches that
/// ``SpatialIndex/prefetchQuery(minX:minY:)`` found for that edge and started loading. A query
/// given it skips its own search of the blocks when it is the same index's and its near edge is
/// the same (else it searches as usual: a start for another edge or index changes nothing).
public struct QueryStart: Sendable, Equatable {
    /// The index that found it.
    let index: ObjectIdentifier
    /// The near edge along the run's axis, rounded down to `Float` as a query rounds it.
    let near: Float
    /// The first block whose last reach gets to `near`.
    let block: Int
}
