import CPrefetch

extension ContiguousArray {
    /// Starts loading the cache line that holds element `index` (nothing for an index outside
    /// the array): for a load the planner or the encoder makes soon after, on a large layout a
    /// cache miss (a jump's first entering class and id).
    /// - Complexity: O(1).
    @inline(__always)
    func prefetchElement(at index: Int) {
        withUnsafeBufferPointer { if index >= 0 && index < $0.count, let base = $0.baseAddress { viewportd_prefetch(base + index) } }
    }
}
