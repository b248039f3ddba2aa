import Foundation
import Logging
import Synchronization
import ViewportCore
import ViewportRedis

/// Sessions in this process in front of a store shared by several instances (docs/api.md "Many
/// instances, one store"): the request path.
///
/// - Requests are answered from memory: a change marks the session dirty, and the writer
///   (``StoreWriter``, every `store.flushInterval`) writes the dirty ones in one pipeline and
///   renews the leases of the others. Nothing waits for the store on a request's path, except:
///   taking a session over from the store or another instance (``SessionTakeover``), the first
///   request after this instance's lease may have lapsed (the store was unreachable), and a plan
///   that needs handles beyond the reserve recorded in the store (rare: the writer reserves
///   ahead).
/// - One owner at a time: a lease per session, and the epoch as fencing token in every write
///   (``StoreScripts``). A session another instance owns is asked for: the owner's
///   ``SessionHandover`` writes and releases it at once, and this instance takes it.
/// - On shutdown every session is written and released (``SessionHandover/handOverAll()``), so the
///   next request anywhere continues it.
///
/// What each session's ownership allows, and what each answer of the store does to it, is the
/// state machine ``SessionOwnership``; this type and the writer and handover side perform its
/// actions.
final class SharedSessionStore: SessionRepository {
    let sessions: HeldSessions
    let writer: StoreWriter
    let handover: SessionHandover
    let takeover: SessionTakeover
    /// Changes answered from memory wait at most this long to be written (`store.flushInterval`
    /// + `store.timeout`, what a healthy writer takes at worst); then a request writes first, and
    /// answers 503 while the store does not take the write. Bounds what an owner cut off from the
    /// store, whose sessions another instance takes after the lease, can lose.
    let unwrittenLimit: Int64
    /// Requests doing store work for a session not here (``throughStore(_:_:)``), and how many
    /// may while the store is slow: as many as the threads that run such requests
    /// (`store.requestThreads`), so that the ones queued behind them answer 503 rather than wait.
    private let storeCallsWaiting = Atomic<Int>(0)
    let slowStoreCallLimit: Int

    init(
        local: SessionStore, layouts: SharedLayoutStore, store: RedisStateStore, metrics: ServiceMetrics, logger: Logger,
        storeThreads: Int = 4, parkAfter: Double = .infinity
    ) {
        self.slowStoreCallLimit = max(1, storeThreads)
        let sessions = HeldSessions(local: local, layouts: layouts, store: store, metrics: metrics, logger: logger, parkAfter: parkAfter)
        self.sessions = sessions
        self.writer = StoreWriter(sessions: sessions)
        self.handover = SessionHandover(sessions: sessions, writer: writer)
        self.takeover = SessionTakeover(sessions: sessions)
        self.unwrittenLimit = Int64((store.flushInterval + store.pool.commandTimeout) * 1e9)
    }

    var local: SessionStore { sessions.local }
    var store: RedisStateStore { sessions.store }
    var count: Int { local.count }
    var storeIsUp: Bool? { store.health.isUp }
    private var leaseNanoseconds: Int64 { sessions.leaseNanoseconds }
    private var gates: IDGates { sessions.gates }

    /// Answering handover requests (``SessionHandover/listening``).
    var listening: AtomicFlag { handover.listening }
    /// Whether the handover listener runs (``SessionHandover/listenerRunning``).
    var listenerRunning: AtomicFlag { handover.listenerRunning }

    /// Session ids viewportd hands out: 32 lowercase hex digits. Anything else is not looked up.
    static func isHexID(_ id: String) -> Bool {
        id.utf8.count == 32 && id.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    // MARK: Requests

    func locate(_ id: String) throws(Problem) -> SessionLocation {
        if let handle = local.get(id) { return .here(handle) }
        guard Self.isHexID(id) else { return .nowhere }
        return try throughStore(id) { () throws(Problem) -> SessionLocation in
            do {
                return try store.sessionExists(id) ? .elsewhere : .nowhere
            } catch {
                throw error.problem
            }
        }
    }

    /// True when a request for `id` is answered without a round trip to the store: the session
    /// is here and its lease holds with its changes written recently enough (or it answers 503 or
    /// 404 at once), or the id is not one viewportd hands out. False sends the request to the
    /// threads that wait on the store (``APIHandler``). Without locking out anything: a lease
    /// that lapses between this check and the request's turn is renewed on the HTTP worker.
    func answersFromMemory(_ id: String, hint: SessionHandle?) -> Bool {
        guard let handle = (hint?.id == id ? hint : nil) ?? local.get(id) else { return !Self.isHexID(id) }
        return handle.state.withLock { state in
            if state.closed { return true }
            switch state.ownership.admit(now: Monotonic.nanoseconds(), unwrittenLimit: unwrittenLimit, lostReplySince: store.health.lostReplySince) {
            case .serve, .confirmFirst, .gone: return true
            case .renewFirst, .writeFirst, .moved: return false
            }
        }
    }

    func withSession<R: Sendable>(
        _ id: String, hint: SessionHandle?, _ body: (inout ViewportSession) throws(Problem) -> SessionChange<R>
    ) throws(Problem) -> (result: R, handle: SessionHandle) {
        if let handle = (hint?.id == id ? hint : nil) ?? local.get(id), let result = try attempt(handle, body) {
            return (result, handle)
        }
        // Not here, or it just moved away: through the store, one request per session at a time
        // (and the request that takes it over applies its own update before a handover request
        // can take it away again).
        return try gates.withLock(id) { () throws(Problem) -> (result: R, handle: SessionHandle) in
            if let handle = local.get(id), let result = try attempt(handle, body) { return (result, handle) }
            return try throughStore(id) { () throws(Problem) -> (result: R, handle: SessionHandle) in
                for _ in 0..<3 {
                    guard let handle = try takeover.acquire(id) else { throw SessionStore.notFound(id) }
                    if let result = try attempt(handle, body) { return (result, handle) }
                }
                throw Problem.unavailable("session \(id) keeps moving between instances; retry")
            }
        }
    }

    /// Runs a request's store work for a session not here (on a thread of `store.requestThreads`:
    /// ``answersFromMemory(_:hint:)`` sent it there). While the store does not answer this
    /// instance, it answers 503 at once rather than wait `store.timeout` or more; the writer's
    /// heartbeat, every flush interval, finds out when the store answers again. While the store
    /// answers slowly, at most `slowStoreCallLimit` requests wait for it at once (the others 503
    /// at once), so that a queue of them does not build up behind the slow ones.
    private func throughStore<T>(_ id: String, _ work: () throws(Problem) -> T) throws(Problem) -> T {
        let now = Monotonic.nanoseconds()
        if store.health.isUnreachable(now: now) {
            throw Problem.unavailable("session \(id): the shared store does not answer this instance; retry shortly", retryAfter: 1)
        }
        let waiting = storeCallsWaiting.wrappingAdd(1, ordering: .relaxed).newValue
        defer { storeCallsWaiting.wrappingSubtract(1, ordering: .relaxed) }
        if waiting > slowStoreCallLimit && store.health.isSlow(now: now) {
            throw Problem.unavailable(
                "session \(id): the shared store answers slowly and other requests are waiting for it; retry shortly", retryAfter: 1)
        }
        return try work()
    }

    private enum Attempt<R: Sendable>: Sendable {
        case done(R, dirty: Bool)
        case moved
    }

    /// Runs `body` on this copy, or answers nil when the copy is stale (the session moved).
    private func attempt<R: Sendable>(
        _ handle: SessionHandle, _ body: (inout ViewportSession) throws(Problem) -> SessionChange<R>
    ) throws(Problem) -> R? {
        let outcome = try handle.state.withLock { (state) throws(Problem) -> Attempt<R> in
            guard !state.closed else { throw SessionStore.notFound(handle.id) }
            let now = Monotonic.nanoseconds()
            var admission = state.ownership.admit(now: now, unwrittenLimit: unwrittenLimit, lostReplySince: store.health.lostReplySince)
            if admission == .renewFirst {
                guard try renewNow(handle, &state) else { return .moved }
                // The lease holds again; changes may still wait to be written (renewals can get
                // through where writes do not).
                admission = state.ownership.admit(
                    now: Monotonic.nanoseconds(), unwrittenLimit: unwrittenLimit, lostReplySince: store.health.lostReplySince)
            }
            switch admission {
            case .gone: throw SessionStore.notFound(handle.id)
            case .moved: return .moved
            case .confirmFirst: throw Self.unconfirmed(handle.id)
            case .renewFirst:
                throw Problem.unavailable("session \(handle.id): the shared store did not renew this instance's lease; retry shortly")
            case .writeFirst:
                do throws(Problem) {
                    try writeNow(handle, &state, purpose: .unwrittenTooLong)
                } catch {
                    if state.ownership.phase == .lost { return .moved }
                    throw error
                }
            case .serve: break
            }
            let change = try body(&state.session)
            if change.changed {
                _ = state.ownership.changed(highestHandle: state.session.nextHandle - 1, at: now)
            } else {
                state.ownership.read()
            }
            // A plan may not name handles the store has not reserved (an instance that dies
            // would let the next one hand them out again): reserve now, before answering.
            if state.session.nextHandle - 1 > state.ownership.handleLimit {
                do throws(Problem) {
                    try writeNow(handle, &state, purpose: .reserve)
                } catch {
                    // Not answered (503): a retry with the same seq answers this plan. The change
                    // is kept and written behind like any other.
                    if state.ownership.isDirty { enqueue(handle) }
                    throw error
                }
            }
            // The answer goes out now: the lease must hold now, not only when the request was
            // admitted. If not, it is not answered (503) and kept like a failed reserve.
            guard state.ownership.mayAnswer(now: Monotonic.nanoseconds(), lostReplySince: store.health.lostReplySince) else {
                if state.ownership.isDirty { enqueue(handle) }
                throw Self.unconfirmed(handle.id)
            }
            return .done(change.result, dirty: state.ownership.isDirty)
        }
        switch outcome {
        case .done(let result, let dirty):
            handle.touch()
            if dirty { enqueue(handle) }
            return result
        case .moved:
            return nil
        }
    }

    /// The 503 of a session whose ownership the store has not confirmed since a round trip got
    /// no answer: the writer asks the store every round, so it is answered again within a flush
    /// interval and a round trip of the store answering (or moves: another instance takes it).
    private static func unconfirmed(_ id: String) -> Problem {
        Problem.unavailable(
            "session \(id): the shared store did not answer this instance, which cannot show that it still owns the session; retry shortly",
            retryAfter: 1)
    }

    private func enqueue(_ handle: SessionHandle) { writer.enqueue(handle) }

    /// The lease may have lapsed (no renewal got through for a while): renew it before answering.
    /// False when another instance has the session now.
    private func renewNow(_ handle: SessionHandle, _ state: inout SessionHandle.State) throws(Problem) -> Bool {
        let sentAt = Monotonic.nanoseconds()
        let (epoch, touched) = state.ownership.beginRenewal()
        let outcome = store.renew([(handle.id, epoch, touched, HeldSessions.layoutIDs(of: state.session))]).first ?? .failed
        switch state.ownership.renewalAnswered(outcome, sentAt: sentAt, lease: leaseNanoseconds) {
        case .confirmed:
            return true
        case .writeAgain:
            // The store lost it: write it back before answering.
            try writeNow(handle, &state, purpose: .restore)
            return true
        case .lost(let news):
            sessions.drop(handle, &state, news: news)
            return false
        case .unconfirmed, .handedOver, .releaseInDoubt, .releaseNotRun:
            throw Problem.unavailable("session \(handle.id): the shared store does not answer, and this instance's lease on the session may have lapsed; retry shortly")
        }
    }

    /// Why a request writes a session before answering.
    enum SynchronousWrite {
        /// A session opened here, written before its first answer.
        case open
        /// A plan names handles beyond the reserve recorded in the store.
        case reserve
        /// Changes answered from memory have waited too long to be written.
        case unwrittenTooLong
        /// The store lost the session's record.
        case restore
    }

    /// Writes the session now (for `purpose`); 503 when the store does not answer.
    private func writeNow(_ handle: SessionHandle, _ state: inout SessionHandle.State, purpose: SynchronousWrite) throws(Problem) {
        let sentAt = Monotonic.nanoseconds()
        guard
            let ticket = state.ownership.beginWrite(
                now: sentAt, highestHandle: state.session.nextHandle - 1, block: store.handleBlock, renewInterval: sessions.renewNanoseconds / 2,
                lostReplySince: store.health.lostReplySince)
        else {
            throw Problem.unavailable("session \(handle.id) moved to another instance; retry")
        }
        let write = sessions.write(of: handle, state, ticket: ticket)
        let outcome = store.write([write], operation: "reserve").first ?? .failed
        if outcome == .layoutMissing { sessions.republishLayouts(of: [write]) }
        switch state.ownership.writeAnswered(outcome, ticket, lease: leaseNanoseconds) {
        case .confirmed:
            return
        case .lost(let news):
            sessions.drop(handle, &state, news: news)
            throw Problem.unavailable("session \(handle.id) moved to another instance; retry")
        case .unconfirmed, .writeAgain, .handedOver, .releaseInDoubt, .releaseNotRun:
            let why: String
            switch purpose {
            case .open: why = "a new session must be written to the shared store before it is answered"
            case .reserve: why = "view handles must be reserved in the shared store"
            case .unwrittenTooLong: why = "changes answered from memory have not been written to the shared store for too long"
            case .restore: why = "the shared store lost the session, which must be written back"
            }
            let store = outcome == .failed
                ? "the shared store did not answer the write"
                : "the shared store refused the write or cannot be reached (\(self.store.health.lastReason))"
            throw Problem.unavailable("session \(handle.id): \(why); \(store); retry shortly")
        }
    }

    // MARK: Opening and ending

    /// A session opened here is written before it is answered: its next request usually reaches
    /// another instance (a proxy routes by session id, and the opening request had none), which
    /// must find it in the store. It stays owned here until that instance asks for it.
    func insert(_ handle: SessionHandle) throws(Problem) {
        handle.state.withLock { $0.ownership = .fresh() }
        try local.insert(handle)
        do {
            try handle.state.withLock { (state) throws(Problem) in try writeNow(handle, &state, purpose: .open) }
        } catch {
            handle.state.withLock { local.detach(handle, &$0) }
            throw error
        }
    }

    func end(_ id: String) throws(Problem) -> Bool {
        for _ in 0..<3 {
            let handle: SessionHandle
            do {
                // Only the owner may delete it: take it over first if need be.
                handle = try withSession(id, hint: nil) { _ in SessionChange(result: (), changed: false) }.handle
            } catch {
                if error.status == 404 { return false }
                throw error
            }
            let ended = try handle.state.withLock { (state) throws(Problem) -> Bool? in
                guard !state.closed else { return false }
                switch state.ownership.admit(now: Monotonic.nanoseconds(), lostReplySince: store.health.lostReplySince) {
                case .gone: return false
                case .moved: return nil  // handed over meanwhile: look again
                case .confirmFirst: throw Self.unconfirmed(id)
                case .renewFirst: guard try renewNow(handle, &state) else { return nil }
                case .serve, .writeFirst: break  // deleted: what is unwritten goes with it
                }
                var ownership = state.ownership
                if let epoch = ownership.delete() {
                    do {
                        _ = try store.delete(id, epoch: epoch)
                    } catch {
                        throw error.problem
                    }
                }
                state.ownership = ownership
                state.closed = true
                local.detach(handle, &state)
                return true
            }
            if let ended { return ended }
        }
        throw Problem.unavailable("session \(id) keeps moving between instances; retry")
    }

    func sweep() {
        let now = Monotonic.nanoseconds()
        for handle in local.allHandles where handle.idleNanoseconds(now: now) > local.idleNanoseconds {
            let epoch: Int64? = handle.state.withLock { state in
                guard !state.closed else { return nil }
                let epoch = state.ownership.delete()
                state.closed = true
                local.detach(handle, &state)
                return epoch
            }
            if let epoch { _ = try? store.delete(handle.id, epoch: epoch) }
        }
    }

    // MARK: Background work

    /// Serves: takes sessions over, writes behind, answers handover requests (once the
    /// ``backgroundServices`` run). Sends the heartbeat at once.
    func start() {
        guard !sessions.running.exchange(true, ordering: .relaxed) else { return }
        handover.listening.store(true, ordering: .sequentiallyConsistent)
        try? store.heartbeat()
    }

    /// The writer, then the handover side: a graceful shutdown stops the handover side first
    /// (it hands every session over), the writer last.
    var backgroundServices: [any BackgroundService] { [writer, handover] }
}
