import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads that own a connection outside MHD's event loop, as a count and a shutdown signal: the
/// server's open WebSockets (one set) and the threads finishing live answers (another).
///
/// Each thread holds an MHD handle that dies with the daemon (an upgrade handle, or a suspended
/// connection it must resume): ``HTTPServer`` must not stop the daemon while one lives. So
/// stopping is: ``beginShutdown()`` (every thread wakes at once and ends promptly: WebSockets send
/// close 1001), ``refuseNew()`` (work that arrives later is closed on the spot instead of starting
/// a thread), then ``waitUntilEmpty(log:)``, then the daemon stops.
final class ConnectionThreads: Sendable {
    private struct State {
        var live = 0
        var accepting = true
    }

    private let state = Mutex(State())
    private let shuttingDown = Atomic<Bool>(false)
    /// A pipe every connection thread polls besides its socket. ``beginShutdown()`` writes one
    /// byte that nobody reads, so the read end stays readable and wakes every poller at once.
    let wakeReadEnd: Int32
    private let wakeWriteEnd: Int32
    /// `connectionTimeout`: a connection that hears nothing for half of it is pinged, for all of
    /// it is closed (1001); also the longest a reply may wait for a client that does not read.
    let timeoutSeconds: Double

    init(timeoutSeconds: Double) {
        self.timeoutSeconds = timeoutSeconds
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        // If pipe() failed both ends are -1: poll ignores negative fds, and the threads still
        // notice the shutdown flag within their poll timeout (at most a second).
        wakeReadEnd = ends[0]
        wakeWriteEnd = ends[1]
    }

    deinit {
        if wakeReadEnd >= 0 { close(wakeReadEnd) }
        if wakeWriteEnd >= 0 { close(wakeWriteEnd) }
    }

    /// Connection threads running now.
    var live: Int { state.withLock { $0.live } }

    var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    /// Counts a new connection in; false once ``refuseNew()`` was called.
    func enter() -> Bool {
        state.withLock { state in
            guard state.accepting else { return false }
            state.live += 1
            return true
        }
    }

    /// A connection thread is done with MHD's handle (its last act).
    func leave() {
        state.withLock { $0.live -= 1 }
    }

    /// Wakes every connection thread to close with 1001. Idempotent.
    func beginShutdown() {
        guard !shuttingDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        if wakeWriteEnd >= 0 { _ = write(wakeWriteEnd, &byte, 1) }
    }

    /// No new connection threads from now on.
    func refuseNew() {
        state.withLock { $0.accepting = false }
    }

    /// Blocks until every connection thread has ended. Each one is bounded (every wait in it has
    /// a deadline), so this does not wait forever; it logs if it takes unusually long.
    func waitUntilEmpty(log: (String) -> Void) {
        let started = ContinuousClock.now
        var warned = false
        while live > 0 {
            if !warned && ContinuousClock.now - started > .seconds(5) {
                log("waiting for \(live) connection thread(s) to end")
                warned = true
            }
            usleep(1_000)
        }
    }
}
