import Dispatch

/// Runs two independent computations at once, on two threads (layout builds: the digest and the
/// index take about the same time).
enum Parallel {
    /// A result written by one `concurrentPerform` iteration and read after all have finished.
    private final class Slot<T>: @unchecked Sendable {
        // @unchecked: written by exactly one iteration; read after `concurrentPerform` returns,
        // which orders the write before the read.
        var value: T?
    }

    static func both<A, B>(_ a: @Sendable () -> A, _ b: @Sendable () -> B) -> (A, B) {
        let first = Slot<A>()
        let second = Slot<B>()
        withoutActuallyEscaping(a) { a in
            withoutActuallyEscaping(b) { b in
                let work: @Sendable (Int) -> Void = { k in
                    if k == 0 { first.value = a() } else { second.value = b() }
                }
                DispatchQueue.concurrentPerform(iterations: 2, execute: work)
            }
        }
        guard let resultA = first.value, let resultB = second.value else {
            preconditionFailure("concurrentPerform ran every iteration")
        }
        return (resultA, resultB)
    }
}
