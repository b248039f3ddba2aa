import ServiceLifecycle
import Synchronization
import ViewportCore

/// Where the API keeps sessions: in this process (``SessionStore``, the default), or in this
/// process in front of a store shared by several instances (``SharedSessionStore``).
///
/// Requests reach a session's state only through ``withSession(_:hint:_:)``, which finds the
/// session (taking it over from another instance when a shared store has it elsewhere), runs the
/// body under the session's lock, and records the change for the store.
protocol SessionRepository: Sendable {
    /// Sessions held by this instance.
    var count: Int { get }

    /// Where a session is (for a 404 before anything else): the handle here is a hint for
    /// ``withSession(_:hint:_:)``.
    func locate(_ id: String) throws(Problem) -> SessionLocation

    /// Runs `body` on the session's state under its lock and answers its result, and the handle
    /// (to pass as `hint` next time: a stream or a socket applies many updates to one session).
    /// 404 when there is no such session; 503 (with `Retry-After`) when the shared store is
    /// needed and does not answer. `body` answers whether it changed the session.
    func withSession<R: Sendable>(
        _ id: String, hint: SessionHandle?, _ body: (inout ViewportSession) throws(Problem) -> SessionChange<R>
    ) throws(Problem) -> (result: R, handle: SessionHandle)

    /// True when a request for session `id` needs no round trip to a shared store (always without
    /// one); false: it is answered off the HTTP workers.
    func answersFromMemory(_ id: String, hint: SessionHandle?) -> Bool

    /// Adds a session opened by this instance (429 when `sessions.max` are open).
    func insert(_ handle: SessionHandle) throws(Problem)

    /// Ends a session (DELETE): false when there was none.
    func end(_ id: String) throws(Problem) -> Bool

    /// Drops sessions idle for longer than `sessions.idleTimeout`.
    func sweep()

    /// The state of the shared store for `/healthz`, nil without one.
    var storeIsUp: Bool? { get }

    /// Starts background work (a shared store's writer and handover listener).
    func start()

    /// Background work run as services of the process's `ServiceGroup`: shut down after the HTTP
    /// server drained and before ``shutdown()`` (none by default).
    var backgroundServices: [any Service] { get }

    /// On shutdown, after the HTTP layer drained: hands every session over (writes it and
    /// releases it), so that another instance continues it.
    func shutdown()
}

enum SessionLocation {
    case here(SessionHandle)
    /// In the shared store (another instance may hold it).
    case elsewhere
    case nowhere

    var exists: Bool {
        if case .nowhere = self { return false }
        return true
    }

    var handle: SessionHandle? {
        if case .here(let handle) = self { return handle }
        return nil
    }
}

/// What a body did to a session: its result, and whether the session changed (and must be
/// written to a shared store).
struct SessionChange<R: Sendable>: Sendable {
    var result: R
    var changed: Bool
}

extension SessionStore: SessionRepository {
    func locate(_ id: String) -> SessionLocation { get(id).map { .here($0) } ?? .nowhere }

    func withSession<R: Sendable>(
        _ id: String, hint: SessionHandle?, _ body: (inout ViewportSession) throws(Problem) -> SessionChange<R>
    ) throws(Problem) -> (result: R, handle: SessionHandle) {
        // A hint is used as it is, unless it has expired (as a lookup would find). One clock read
        // serves the check and the touch.
        let now = Monotonic.nanoseconds()
        let found: SessionHandle?
        if let hint, hint.id == id, hint.idleNanoseconds(now: now) <= idleNanoseconds {
            found = hint
        } else {
            found = get(id)
        }
        guard let handle = found else { throw Self.notFound(id) }
        let result = try handle.state.withLock { (state) throws(Problem) -> R in
            guard !state.closed else { throw Self.notFound(id) }
            return try body(&state.session).result
        }
        handle.touch(now: now)
        return (result, handle)
    }

    func answersFromMemory(_ id: String, hint: SessionHandle?) -> Bool { true }

    static func notFound(_ id: String) -> Problem { .notFound("session \(id) does not exist or has expired") }

    func end(_ id: String) -> Bool { remove(id) != nil }

    var storeIsUp: Bool? { nil }

    func start() {}

    func shutdown() {}
}
