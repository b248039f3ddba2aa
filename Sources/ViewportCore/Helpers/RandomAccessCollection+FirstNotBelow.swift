extension RandomAccessCollection where Index == Int, Element: Comparable {
    /// The first position in `self[from..<from + count]` (non-decreasing) whose element is not
    /// below `value`, or `from + count`: a lower bound, for the spatial index's reach lines and
    /// a session's sorted shown views. Inlined, so each caller gets it specialized for its
    /// element type.
    /// - Complexity: O(log count).
    @inline(__always)
    func firstIndex(notBelow value: Element, from: Int, count: Int) -> Int {
        var first = from
        var length = count
        while length > 0 {
            let half = length >> 1
            if self[first &+ half] < value {
                first = first &+ half &+ 1
                length = length &- half &- 1
            } else {
                length = half
            }
        }
        return first
    }
}
