#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// A small pool of dedicated threads that run the work of deferred answers
/// (``HTTPAnswer/deferred(_:)``), so that a request waiting on a slow store holds no HTTP worker.
///
/// Bounded: at most `threads` pieces of work run and `queueLimit` wait; ``reserve()`` refuses
/// more (the request is answered ``HTTPHandler/deferredWorkRefused(_:)``, 503). Each piece of
/// work resumes a suspended connection when it ends, so ``HTTPServer`` stops the daemon only
/// after ``shutDown(waitingAtMost:log:)`` saw every piece end.
final class DeferredWorkPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        /// Reserved, queued or running pieces of work.
        var pending = 0
        var accepting = true
        var stopped = false
    }

    private let state = Mutex(State())
    /// One signal per queued piece (and one per thread on shutdown).
    private let signal = DispatchSemaphore(value: 0)
    let threads: Int
    let queueLimit: Int

    /// Starts `threads` threads (none: every ``reserve()`` is refused).
    init(threads: Int, queueLimit: Int) {
        self.threads = max(0, threads)
        self.queueLimit = max(0, queueLimit)
        for _ in 0..<self.threads {
            // The stack an MHD worker has (the default 8 MiB): the work is the handler's, which
            // may decode and index a whole layout. Untouched pages cost no memory.
            let started = DetachedThread.start(stackSize: 8 << 20) { [self] in self.serve() }
            if !started { break }
        }
    }

    /// Takes a place for one piece of work: false when `threads + queueLimit` are taken, or the
    /// pool stops. A place taken must be used by ``run(_:)``.
    func reserve() -> Bool {
        state.withLock { state in
            guard state.accepting, threads > 0, state.pending < threads + queueLimit else { return false }
            state.pending += 1
            return true
        }
    }

    /// Queues `work` in a place taken by ``reserve()``.
    func run(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.queue.append(work) }
        signal.signal()
    }

    /// Work reserved, queued or running.
    var pending: Int { state.withLock { $0.pending } }

    /// Refuses new work, waits until every piece taken has ended (at most `seconds`; each ends
    /// by itself: a store round trip has its timeout), then ends the threads. Idempotent.
    func shutDown(waitingAtMost seconds: Double, log: (String) -> Void) {
        state.withLock { $0.accepting = false }
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while pending > 0 && ContinuousClock.now < deadline {
            usleepMilliseconds(5)
        }
        let left = pending
        if left > 0 { log("\(left) deferred answer(s) still running after \(seconds) s") }
        let wasStopped = state.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !wasStopped else { return }
        for _ in 0..<threads { signal.signal() }
    }

    private func serve() {
        while true {
            signal.wait()
            let next: (@Sendable () -> Void)? = state.withLock { state in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            guard let work = next else {
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            work()
            state.withLock { $0.pending -= 1 }
        }
    }

    private func usleepMilliseconds(_ milliseconds: Int) {
        var request = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        _ = nanosleep(&request, nil)
    }
}
