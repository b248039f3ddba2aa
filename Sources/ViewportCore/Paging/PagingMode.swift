/// Where a drag comes to rest (docs/api.md "Paging and deceleration").
public enum PagingMode: String, CaseIterable, Hashable, Sendable {
    /// The natural resting offset `p = o + v/1000 · r/(1 − r)`.
    case none
    /// UIScrollView's `pagingEnabled`: one page per drag, direction decided by a vote of the
    /// velocity and the drag's direction; works for pages smaller than the viewport.
    case page
    /// The page nearest to `p` (several pages per fling).
    case snap
    /// The item leading edge (min x or min y) nearest to `p`; on a tie, the smaller.
    case items
}
