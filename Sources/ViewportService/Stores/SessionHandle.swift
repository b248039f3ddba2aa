import Synchronization
import ViewportCore

/// One stored session: its state behind a lock (updates to one session are serialised, updates
/// to different sessions run in parallel) and when it was last used.
final class SessionHandle: Sendable {
    struct State: Sendable {
        var session: ViewportSession
        /// Set when the session is deleted or expires, so a request that looked it up just before
        /// answers 404 instead of updating a session nobody can see.
        var closed = false
        /// Who owns it in a shared store (``SessionOwnership/local`` without one).
        var ownership: SessionOwnership
    }

    let id: String
    let state: Mutex<State>
    private let lastUsed: Atomic<Int64>
    /// Whether it is in the shared store's queue of sessions to write.
    let queued = Atomic<Bool>(false)

    init(id: String, session: ViewportSession, ownership: SessionOwnership = .local) {
        self.id = id
        self.state = Mutex(State(session: session, ownership: ownership))
        self.lastUsed = Atomic(Monotonic.nanoseconds())
    }

    func touch() { touch(now: Monotonic.nanoseconds()) }

    func touch(now: Int64) { lastUsed.store(now, ordering: .relaxed) }

    func idleNanoseconds(now: Int64) -> Int64 { now - lastUsed.load(ordering: .relaxed) }
}
