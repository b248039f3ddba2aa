/// Where a scroll gesture is, mirroring UIScrollViewDelegate's events.
public enum ScrollPhase: String, CaseIterable, Hashable, Sendable {
    /// scrollViewWillBeginDragging
    case dragBegin = "drag-begin"
    /// scrollViewDidScroll while the finger is down
    case dragging
    /// scrollViewWillEndDragging(withVelocity:targetContentOffset:)
    case dragEnd = "drag-end"
    /// scrollViewDidScroll while decelerating
    case decelerating
    /// scrollViewDidEndDecelerating, or a programmatic offset change
    case idle
}
