import Synchronization
import ViewportCore

/// One stored session: its state behind a lock (updates to one session are serialised, updates
/// to different sessions run in parallel) and when it was last used.
final class SessionHandle: Sendable {
    struct State: ~Copyable, Sendable {
        var session: ViewportSession
        /// Set when the session is deleted or expires, so a request that looked it up just before
        /// answers 404 instead of updating a session nobody can see.
        var closed = false
        /// Who owns it in a shared store (``SessionOwnership/local`` without one).
        var ownership: SessionOwnership
        /// The session's count on its layout: ended when the session ends here or moves to
        /// another instance, replaced when it moves to another layout (``hold(_:)``).
        var layoutLease: LayoutLease

        /// After a layout change: the session holds `lease` if it is on `lease`'s layout now and
        /// holds another (the lease of the layout it left is dropped, releasing it). Otherwise
        /// `lease` is dropped: the change was not applied (a retry, a conflict), it was to the
        /// layout the session had, or the session left this instance meanwhile. A change that
        /// came after, to a third layout, holds its own lease, whichever of the two gets here
        /// first.
        mutating func hold(_ lease: consuming LayoutLease) {
            guard layoutLease.isHeld, session.layout.digest == lease.layout.digest, layoutLease.layout.digest != lease.layout.digest else {
                return
            }
            layoutLease = lease
        }
    }

    let id: String
    let state: Mutex<State>
    private let lastUsed: Atomic<Int64>
    /// Whether it is in the shared store's queue of sessions to write.
    let queued = Atomic<Bool>(false)

    /// A session on `layoutLease`'s layout, which it holds from now on.
    init(id: String, session: ViewportSession, layoutLease: consuming LayoutLease, ownership: SessionOwnership = .local) {
        self.id = id
        self.state = Mutex(State(session: session, ownership: ownership, layoutLease: layoutLease))
        self.lastUsed = Atomic(Monotonic.nanoseconds())
    }

    func touch() { touch(now: Monotonic.nanoseconds()) }

    func touch(now: Int64) { lastUsed.store(now, ordering: .relaxed) }

    func idleNanoseconds(now: Int64) -> Int64 { now - lastUsed.load(ordering: .relaxed) }

    /// After a layout change of this session: see ``State/hold(_:)``.
    func hold(_ lease: consuming LayoutLease) {
        var lease = Optional(lease)
        state.withLock { state in
            guard let lease = lease.take() else { return }
            state.hold(lease)
        }
    }
}
