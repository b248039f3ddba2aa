import Synchronization

/// The lazily computed `AxisSummary` of each axis of one layout. Layouts are immutable and shared
/// by many sessions on many threads; the first session that needs a summary computes it under the
/// lock, the others wait for it and share the result.
final class AxisSummaryCache: Sendable {
    private let summaries = Mutex<[Axis: AxisSummary]>([:])

    init() {}

    /// The summary of `axis`, computing it on first use.
    /// - Complexity: O(n log n) the first time per axis, O(1) afterwards.
    func summary(_ axis: Axis, make: () -> AxisSummary) -> AxisSummary {
        summaries.withLock { cache in
            if let found = cache[axis] { return found }
            let made = make()
            cache[axis] = made
            return made
        }
    }
}
