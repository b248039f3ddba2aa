import Foundation
import Logging
import Synchronization
import ViewportCore
import ViewportRedis

/// Sessions in this process in front of a store shared by several instances (docs/api.md "Many
/// instances, one store").
///
/// - Requests are answered from memory: a change marks the session dirty, and a background
///   writer (``flushOnce()``, every `store.flushInterval`) writes the dirty ones in one pipeline
///   and renews the leases of the others. Nothing waits for the store on a request's path,
///   except: taking a session over from the store or another instance, the first request after
///   this instance's lease may have lapsed (the store was unreachable), and a plan that needs
///   handles beyond the reserve recorded in the store (rare: the writer reserves ahead).
/// - One owner at a time: a lease per session, and the epoch as fencing token in every write
///   (``StoreScripts``). A session another instance owns is asked for: the owner's
///   ``HandoverListener`` writes and releases it at once, and this instance takes it.
/// - On shutdown every session is written and released, so the next request anywhere continues it.
final class SharedSessionStore: SessionRepository {
    let local: SessionStore
    let layouts: SharedLayoutStore
    let store: RedisStateStore
    let metrics: ServiceMetrics
    let logger: Logger
    /// Nanoseconds: the lease, and how often a clean session's lease is renewed.
    let leaseNanoseconds: Int64
    let renewNanoseconds: Int64
    /// Changes answered from memory wait at most this long to be written (`store.flushInterval`
    /// + `store.timeout`, what a healthy writer takes at worst); then a request writes first, and
    /// answers 503 while the store does not take the write. Bounds what an owner cut off from the
    /// store, whose sessions another instance takes after the lease, can lose.
    let unwrittenLimit: Int64
    /// Most commands per pipeline.
    static let batchLimit = 512

    let gates = IDGates()
    private let dirty = Mutex<[SessionHandle]>([])
    /// Serving: writing behind, taking sessions over. Cleared when shutdown begins.
    let running = Atomic<Bool>(false)
    /// Answering handover requests: until shutdown has released every session.
    let listening = Atomic<Bool>(false)
    /// Whether the listener's thread runs (it may be answering a request it took).
    let listenerRunning = Atomic<Bool>(false)
    private let lastRenewScan = Atomic<Int64>(0)
    /// Owners that did not hand a session over in time, until when (monotonic ns): requests for
    /// their sessions answer 503 at once instead of waiting again.
    private let suspects = Mutex<[String: (since: Int64, until: Int64, checked: Int64)]>([:])
    private let flushDone = Mutex<Bool>(true)
    /// Requests doing store work for a session not here (``throughStore(_:_:)``), and how many
    /// may while the store is slow: as many as the threads that run such requests
    /// (`store.requestThreads`), so that the ones queued behind them answer 503 rather than wait.
    private let storeCallsWaiting = Atomic<Int>(0)
    let slowStoreCallLimit: Int

    init(
        local: SessionStore, layouts: SharedLayoutStore, store: RedisStateStore, metrics: ServiceMetrics, logger: Logger,
        storeThreads: Int = 4
    ) {
        self.slowStoreCallLimit = max(1, storeThreads)
        self.local = local
        self.layouts = layouts
        self.store = store
        self.leaseNanoseconds = store.leaseMilliseconds * 1_000_000
        self.renewNanoseconds = max(1, store.leaseMilliseconds * 1_000_000 / 4)
        self.unwrittenLimit = Int64((store.flushInterval + store.pool.commandTimeout) * 1e9)
        self.metrics = metrics
        self.logger = logger
    }

    var count: Int { local.count }
    var storeIsUp: Bool? { store.health.isUp }

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
                    guard let handle = try acquire(id) else { throw SessionStore.notFound(id) }
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

    private func enqueue(_ handle: SessionHandle) {
        guard !handle.queued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        dirty.withLock { $0.append(handle) }
    }

    /// The lease may have lapsed (no renewal got through for a while): renew it before answering.
    /// False when another instance has the session now.
    private func renewNow(_ handle: SessionHandle, _ state: inout SessionHandle.State) throws(Problem) -> Bool {
        let sentAt = Monotonic.nanoseconds()
        let (epoch, touched) = state.ownership.beginRenewal()
        let outcome = store.renew([(handle.id, epoch, touched, Self.layoutIDs(of: state.session))]).first ?? .failed
        switch outcome {
        case .ok, .layoutMissing:
            state.ownership.renewalSucceeded(sentAt: sentAt, lease: leaseNanoseconds)
            return true
        case .missing:
            // The store lost it: write it back before answering.
            state.ownership.storeLostTheRecord()
            try writeNow(handle, &state, purpose: .restore)
            return true
        case .lost:
            lose(handle, &state)
            return false
        case .failed, .unsent:
            if outcome == .failed { state.ownership.replyLost(sentAt: sentAt) }
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
                now: sentAt, highestHandle: state.session.nextHandle - 1, block: store.handleBlock, renewInterval: renewNanoseconds / 2,
                lostReplySince: store.health.lostReplySince)
        else {
            throw Problem.unavailable("session \(handle.id) moved to another instance; retry")
        }
        let write = RedisStateStore.Write(
            session: handle.id, ticket: ticket, snapshot: state.session.snapshot(), layouts: Self.layoutIDs(of: state.session))
        let outcome = store.write([write], operation: "reserve").first ?? .failed
        if outcome == .layoutMissing { republishLayouts(of: [write]) }
        switch outcome {
        case .ok, .missing, .layoutMissing:
            state.ownership.writeSucceeded(ticket, lease: leaseNanoseconds)
        case .lost:
            lose(handle, &state)
            throw Problem.unavailable("session \(handle.id) moved to another instance; retry")
        case .failed, .unsent:
            if outcome == .failed { state.ownership.replyLost(sentAt: sentAt) }
            let why: String
            switch purpose {
            case .open: why = "a new session must be written to the shared store before it is answered"
            case .reserve: why = "view handles must be reserved in the shared store"
            case .unwrittenTooLong: why = "changes answered from memory have not been written to the shared store for too long"
            case .restore: why = "the shared store lost the session, which must be written back"
            }
            throw Problem.unavailable("session \(handle.id): \(why), which does not answer; retry shortly")
        }
    }

    /// Another instance has the session now: this copy goes.
    private func lose(_ handle: SessionHandle, _ state: inout SessionHandle.State) {
        // A write refused after this instance handed the session over (or another refusal of a
        // copy already dropped) changes nothing.
        guard state.ownership.writeLost() else { return }
        local.detach(handle, layoutID: state.session.layout.digest)
        logger.warning("session \(handle.id): another instance owns it now (this one was cut off for longer than its lease); dropped the local copy")
    }

    static func layoutIDs(of session: ViewportSession) -> [String] {
        [session.layout.digest, session.lastPlan.previousLayout?.digest ?? session.layout.digest]
    }

    // MARK: Taking a session over

    /// Takes the session from the store: from no one, from a dead owner, or from a live one
    /// that hands it over on request. Nil when the store has no such session. Called with the
    /// session's gate held.
    private func acquire(_ id: String) throws(Problem) -> SessionHandle? {
        guard Self.isHexID(id) else { return nil }
        guard running.load(ordering: .relaxed) else {
            throw Problem.unavailable("viewportd is shutting down")
        }
        let replyKey = store.keys.reply(RedisStateStore.nonce(), session: id)
        // A round that does not take it saw it handed over to another instance's request, which
        // applied its update: progress, only not this request's. With three instances sending to
        // one session at once, 5 % of requests lost three rounds in a row (the first bound: a
        // 503); it tries on for as long as a lease lasts, three rounds at least.
        let deadline = Monotonic.nanoseconds() + leaseNanoseconds
        var round = 0
        while round < 3 || Monotonic.nanoseconds() < deadline {
            round += 1
            let sentAt = Monotonic.nanoseconds()
            let acquisition: RedisStateStore.Acquisition
            do {
                acquisition = try store.acquire(id, replyKey: replyKey)
            } catch {
                throw error.problem
            }
            switch acquisition {
            case .missing:
                return nil
            case .owned(let owner, let left):
                let retryAfter = Int((Double(max(left, 0)) / 1000).rounded(.up))
                if isSuspect(owner) && !heardAgain(from: owner) {
                    throw Problem.unavailable("session \(id) is held by instance \(owner), which does not answer; retry after its lease ends", retryAfter: retryAfter)
                }
                let released: Bool
                let waitStarted = Monotonic.nanoseconds()
                do {
                    released = try store.awaitHandover(replyKey: replyKey)
                } catch {
                    logger.warning("session \(id): waiting for instance \(owner) to hand it over failed after \((Monotonic.nanoseconds() - waitStarted) / 1_000_000) ms: \(error)")
                    throw error.problem
                }
                guard released else {
                    logger.warning("session \(id): instance \(owner) did not hand it over within \((Monotonic.nanoseconds() - waitStarted) / 1_000_000) ms (lease \(left) ms left)")
                    suspect(owner)
                    throw Problem.unavailable("session \(id) is held by instance \(owner), which did not hand it over; retry after its lease ends", retryAfter: retryAfter)
                }
            case .outage(let left):
                throw Problem.unavailable(
                    "session \(id): the shared store heard from no instance for a while (it was unreachable, or no instance ran); the instance that held the session may still write back what it answered meanwhile; retry shortly",
                    retryAfter: Int((Double(max(left, 0)) / 1000).rounded(.up)))
            case .acquired(let epoch, let reservedBefore, let version, let snapshot, let stolen):
                let handle = try adopt(id, epoch: epoch, reservedBefore: reservedBefore, version: version, snapshot: snapshot, sentAt: sentAt)
                metrics.countHandover(stolen ? "stolen" : "taken")
                return handle
            }
        }
        throw Problem.unavailable("session \(id) keeps moving between instances; retry")
    }

    /// Restores a session just acquired and holds it here.
    private func adopt(
        _ id: String, epoch: Int64, reservedBefore: Int, version: UInt64, snapshot: [UInt8], sentAt: Int64
    ) throws(Problem) -> SessionHandle {
        let ownership = SessionOwnership.acquired(
            epoch: epoch, version: version, handleLimit: reservedBefore + store.handleBlock, sentAt: sentAt, lease: leaseNanoseconds)
        do throws(Problem) {
            let needed: (layout: String, previous: String?)
            do {
                needed = try ViewportSession.snapshotLayouts(snapshot)
            } catch {
                throw Problem.unavailable("session \(id) in the shared store cannot be read by this instance (\(error))", retryAfter: 5)
            }
            // Released if the session is not adopted.
            guard let lease = try LayoutLease(retaining: needed.layout, in: layouts) else {
                throw Problem.unavailable("session \(id): its layout \(needed.layout) is no longer in the shared store", retryAfter: 5)
            }
            let layout = lease.layout
            let previous = try needed.previous.flatMap { (previousID) throws(Problem) in try layouts.lookup(id: previousID)?.layout }
            var session: ViewportSession
            do {
                session = try ViewportSession(restoring: snapshot) { $0 == layout.digest ? layout : ($0 == previous?.digest ? previous : nil) }
            } catch {
                throw Problem.unavailable("session \(id) in the shared store cannot be restored by this instance (\(error))", retryAfter: 5)
            }
            // Above every handle a previous owner may have handed out.
            session.reserveHandles(from: reservedBefore + 1)
            let handle = SessionHandle(id: id, session: session, ownership: ownership)
            try local.insert(handle)
            lease.transfer()
            return handle
        } catch {
            // Give it back, unchanged, so that another instance can take it.
            let ticket = SessionOwnership.WriteTicket(epoch: epoch, version: 0, handleLimit: 0, create: false, sentAt: sentAt)
            _ = store.write([RedisStateStore.Write(session: id, ticket: ticket, snapshot: [], layouts: [], release: true)], operation: "release")
            throw error
        }
    }

    private func isSuspect(_ owner: String) -> Bool {
        let now = Monotonic.nanoseconds()
        return suspects.withLock { suspects in
            guard let suspicion = suspects[owner] else { return false }
            if suspicion.until < now { suspects[owner] = nil }
            return suspicion.until >= now
        }
    }

    /// Whether a suspect owner's heartbeat reached the store since it was suspected (it was cut
    /// off for a moment and is back): then it is asked again, instead of its sessions answering
    /// 503 until its lease ends. Asked of the store at most once per flush interval per owner.
    private func heardAgain(from owner: String) -> Bool {
        let now = Monotonic.nanoseconds()
        let check: Int64? = suspects.withLock { suspects in
            guard var suspicion = suspects[owner], now - suspicion.checked >= Int64(store.flushInterval * 1e9) else { return nil }
            suspicion.checked = now
            suspects[owner] = suspicion
            return suspicion.since
        }
        guard let since = check, let ago = try? store.heardFrom(owner) else { return false }
        guard now - ago * 1_000_000 > since else { return false }
        suspects.withLock { $0[owner] = nil }
        return true
    }

    private func suspect(_ owner: String) {
        let now = Monotonic.nanoseconds()
        suspects.withLock { $0[owner] = (since: now, until: now + leaseNanoseconds, checked: now) }
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
            // The caller releases the layout of a session it could not open.
            local.detach(handle, layoutID: nil)
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
                local.detach(handle, layoutID: state.session.layout.digest)
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
                local.detach(handle, layoutID: state.session.layout.digest)
                return epoch
            }
            if let epoch { _ = try? store.delete(handle.id, epoch: epoch) }
        }
    }

    // MARK: Background work

    func start() {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        listening.store(true, ordering: .relaxed)
        try? store.heartbeat()
        let writer = Thread { [self] in
            while running.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: store.flushInterval)
                // Checked and marked under one lock: a shutdown that found no round in progress
                // (and releases the sessions) never sees one start after that.
                let proceed = flushDone.withLock { done in
                    guard running.load(ordering: .sequentiallyConsistent) else { return false }
                    done = false
                    return true
                }
                guard proceed else { break }
                flushOnce()
                flushDone.withLock { $0 = true }
            }
        }
        writer.name = "viewportd-store-writer"
        let listener = HandoverListener(sessions: self)
        listenerRunning.store(true, ordering: .sequentiallyConsistent)
        let listenerThread = Thread {
            listener.run()
            self.listenerRunning.store(false, ordering: .sequentiallyConsistent)
        }
        listenerThread.name = "viewportd-handover"
        writer.start()
        listenerThread.start()
    }

    /// One round of the writer: the heartbeat, the dirty sessions, and the leases due for
    /// renewal, in one pipeline (more only past ``batchLimit`` commands). A write renews its
    /// session's lease only when a renewal is due (every eighth of a lease), not every flush.
    func flushOnce() {
        store.health.logIfChanged()
        let now = Monotonic.nanoseconds()
        let lostReplySince = store.health.lostReplySince
        let queued = dirty.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        var pending: [(handle: SessionHandle, write: RedisStateStore.Write)] = []
        for handle in queued {
            handle.queued.store(false, ordering: .releasing)
            let write: RedisStateStore.Write? = handle.state.withLock { state in
                guard !state.closed, state.ownership.isDirty,
                    let ticket = state.ownership.beginWrite(
                        now: now, highestHandle: state.session.nextHandle - 1, block: store.handleBlock, renewInterval: renewNanoseconds / 2,
                        lostReplySince: lostReplySince)
                else { return nil }
                return RedisStateStore.Write(
                    session: handle.id, ticket: ticket, snapshot: state.session.snapshot(), layouts: Self.layoutIDs(of: state.session))
            }
            if let write { pending.append((handle, write)) }
        }
        let (due, doubtful) = leasesDue(now: now, writing: Set(pending.map { ObjectIdentifier($0.handle) }))
        var writeStart = 0
        var renewStart = 0
        var first = true
        while first || writeStart < pending.count || renewStart < due.count {
            let writes = Array(pending[writeStart..<min(pending.count, writeStart + Self.batchLimit)])
            writeStart += writes.count
            let renewals = Array(due[renewStart..<min(due.count, renewStart + Self.batchLimit - writes.count)])
            renewStart += renewals.count
            if !writes.isEmpty { metrics.recordFlush(sessions: writes.count) }
            let sentAt = Monotonic.nanoseconds()
            let outcomes = store.round(
                heartbeat: first, writes: writes.map(\.write), renewals: renewals.map { ($0.handle.id, $0.epoch, $0.touched, $0.layouts) })
            first = false
            for ((handle, write), outcome) in zip(writes, outcomes.writes) { record(outcome, of: write, for: handle) }
            republishLayouts(of: zip(writes, outcomes.writes).filter { $0.1 == .layoutMissing }.map(\.0.write))
            for (entry, outcome) in zip(renewals, outcomes.renewals) {
                entry.handle.state.withLock { state in
                    switch outcome {
                    case .ok, .layoutMissing: state.ownership.renewalSucceeded(sentAt: sentAt, lease: leaseNanoseconds)
                    case .lost: if !state.closed { lose(entry.handle, &state) }
                    case .missing: state.ownership.storeLostTheRecord()
                    case .failed: state.ownership.replyLost(sentAt: sentAt)
                    case .unsent: break
                    }
                }
                if outcome == .missing { enqueue(entry.handle) }
            }
        }
        reclaim(doubtful)
    }

    private func record(_ outcome: RedisStateStore.Outcome, of write: RedisStateStore.Write, for handle: SessionHandle) {
        handle.state.withLock { state in
            switch outcome {
            case .ok, .missing, .layoutMissing:
                state.ownership.writeSucceeded(write.ticket, lease: leaseNanoseconds)
            case .lost:
                if !state.closed { lose(handle, &state) }
            case .failed:
                state.ownership.replyLost(sentAt: write.ticket.sentAt)
            case .unsent:
                state.ownership.writeFailed()
            }
        }
        // Still dirty (a failed write, or changed meanwhile): next round.
        if handle.state.withLock({ !$0.closed && $0.ownership.isDirty }) { enqueue(handle) }
    }

    /// Writes again the layouts the store lost that these writes named.
    private func republishLayouts(of writes: [RedisStateStore.Write]) {
        for id in Set(writes.flatMap(\.layouts)) { layouts.republish(id: id) }
    }

    /// The leases of the sessions no write renews this round that are due for renewal (every
    /// eighth of a lease, and in the next round for one unconfirmed since a round trip got no
    /// answer), and the sessions whose release got no answer (to reclaim).
    private func leasesDue(now: Int64, writing: Set<ObjectIdentifier>)
        -> (due: [(handle: SessionHandle, epoch: Int64, touched: Bool, layouts: [String])], doubtful: [(handle: SessionHandle, epoch: Int64)])
    {
        let lostReplySince = store.health.lostReplySince
        // Every round while some lease is unconfirmed (a lost reply since the last scan), else
        // every eighth of a lease.
        let unconfirmed = lostReplySince >= lastRenewScan.load(ordering: .relaxed) - leaseNanoseconds
        guard unconfirmed || now - lastRenewScan.load(ordering: .relaxed) >= renewNanoseconds / 2 else { return ([], []) }
        lastRenewScan.store(now, ordering: .relaxed)
        var due: [(handle: SessionHandle, epoch: Int64, touched: Bool, layouts: [String])] = []
        var doubtful: [(handle: SessionHandle, epoch: Int64)] = []
        for handle in local.allHandles where !writing.contains(ObjectIdentifier(handle)) {
            let renewal: (Int64, Bool, [String])? = handle.state.withLock { state in
                guard !state.closed else { return nil }
                if let epoch = state.ownership.reclaimEpoch() {
                    doubtful.append((handle, epoch))
                    return nil
                }
                guard state.ownership.needsRenewal(now: now, interval: renewNanoseconds / 2, lostReplySince: lostReplySince) else {
                    return nil
                }
                let (epoch, touched) = state.ownership.beginRenewal()
                return (epoch, touched, touched ? Self.layoutIDs(of: state.session) : [])
            }
            if let (epoch, touched, layouts) = renewal { due.append((handle, epoch, touched, layouts)) }
        }
        return (due, doubtful)
    }

    /// Asks the store whether releases that got no answer ran: each session is taken back at a
    /// new epoch, or dropped when another instance has it.
    private func reclaim(_ doubtful: [(handle: SessionHandle, epoch: Int64)]) {
        guard !doubtful.isEmpty else { return }
        let sentAt = Monotonic.nanoseconds()
        let outcomes = store.reclaim(doubtful.map { ($0.handle.id, $0.epoch) })
        for (entry, outcome) in zip(doubtful, outcomes) {
            let restore = entry.handle.state.withLock { state -> Bool in
                guard !state.closed, state.ownership.reclaimEpoch() == entry.epoch else { return false }
                switch outcome {
                case .ok(let epoch):
                    state.ownership.reclaimed(newEpoch: epoch, sentAt: sentAt, lease: leaseNanoseconds)
                    logger.notice("session \(entry.handle.id): its release got no answer; taken back at epoch \(epoch)")
                    return state.ownership.isDirty
                case .missing:
                    state.ownership.reclaimed(newEpoch: entry.epoch + 2, sentAt: sentAt, lease: leaseNanoseconds)
                    state.ownership.storeLostTheRecord()
                    return true
                case .lost:
                    lose(entry.handle, &state)
                    return false
                case .failed:
                    return false
                }
            }
            if restore { enqueue(entry.handle) }
        }
    }

    /// Hands every session over: written and released in pipelines (a few tries while the store
    /// answers), then this instance's heartbeat ends and every handover request still in its
    /// inbox is answered.
    func shutdown() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        // Let a round in progress finish: its writes must not land after the releases (nor its
        // heartbeat after the heartbeat ends: askers would wait for this instance again).
        Self.wait(atMost: 5) { !flushDone.withLock({ $0 }) }
        var remaining = local.allHandles
        var handedOver = 0
        for attempt in 0..<5 where !remaining.isEmpty {
            if attempt > 0 { usleep(200_000) }
            let now = Monotonic.nanoseconds()
            var writes: [(handle: SessionHandle, write: RedisStateStore.Write)] = []
            for handle in remaining {
                let write: RedisStateStore.Write? = handle.state.withLock { state in
                    guard !state.closed,
                        let ticket = state.ownership.beginShutdownRelease(
                            now: now, highestHandle: state.session.nextHandle - 1, block: store.handleBlock)
                    else { return nil }
                    return RedisStateStore.Write(
                        session: handle.id, ticket: ticket, snapshot: state.session.snapshot(), layouts: Self.layoutIDs(of: state.session),
                        release: true)
                }
                if let write { writes.append((handle, write)) }
            }
            var failed: [SessionHandle] = []
            var start = 0
            while start < writes.count {
                let chunk = Array(writes[start..<min(writes.count, start + Self.batchLimit)])
                start += chunk.count
                let outcomes = store.write(chunk.map(\.write), operation: "release")
                republishLayouts(of: zip(chunk, outcomes).filter { $0.1 == .layoutMissing }.map(\.0.write))
                for ((handle, write), outcome) in zip(chunk, outcomes) {
                    handle.state.withLock { state in
                        switch outcome {
                        case .ok, .missing, .layoutMissing:
                            state.ownership.releaseSucceeded(write.ticket)
                            local.detach(handle, layoutID: state.session.layout.digest)
                            handedOver += 1
                        case .lost:
                            lose(handle, &state)
                        case .failed:
                            state.ownership.releaseFailed()
                            failed.append(handle)
                        case .unsent:
                            state.ownership.releaseNotSent()
                            failed.append(handle)
                        }
                    }
                }
            }
            remaining = failed
        }
        if !remaining.isEmpty {
            logger.error("shutdown: \(remaining.count) session(s) could not be written to the shared store; their changes since the last write are lost")
        }
        // Without this instance's heartbeat an asker no longer asks it (it takes a session this
        // instance could not release at once), so no request reaches the inbox from now on.
        store.endHeartbeat()
        answerLeftoverHandoverRequests()
        logger.info("shutdown: \(handedOver) session(s) handed over to the shared store")
    }

    /// Stops the listener and answers every handover request still in the inbox. An instance
    /// that asked while a session was still held here (its release had not landed yet) waits
    /// for an answer, and the listener takes one request at a time: unanswered, the asker would
    /// time out and answer 503 for a session that is free.
    private func answerLeftoverHandoverRequests() {
        listening.store(false, ordering: .sequentiallyConsistent)
        if listenerRunning.load(ordering: .sequentiallyConsistent) {
            // Woken from its wait, it finishes the request it may have taken and ends.
            store.wakeListener()
            Self.wait(atMost: HandoverListener.wait + 2 * store.pool.commandTimeout + store.handoverWait) {
                listenerRunning.load(ordering: .sequentiallyConsistent)
            }
        }
        let left: [(session: String, replyKey: String)]
        do {
            left = try store.takeHandoverRequests()
        } catch {
            logger.warning("shutdown: the handover requests left could not be read (\(error)); their askers time out and answer 503")
            return
        }
        // Released sessions are no longer here: each asker is told to look again and finds it
        // free; one this instance still holds (its release failed) gets one more try.
        for (session, replyKey) in left { handOver(session, replyKey: replyKey) }
    }

    /// Polls `condition` every millisecond while it holds, for at most `seconds`.
    private static func wait(atMost seconds: Double, while condition: () -> Bool) {
        let deadline = Monotonic.nanoseconds() + Int64(seconds * 1e9)
        while condition() && Monotonic.nanoseconds() < deadline { usleep(1_000) }
    }

    // MARK: Handover

    /// Another instance asks for a session: write it and release it (one script, which also
    /// answers the asker), unless it is not this instance's to give.
    func handOver(_ id: String, replyKey: String) {
        // The asker waits up to `store.handoverWait`: say when half of it went here.
        let asked = Monotonic.nanoseconds()
        defer {
            let took = (Monotonic.nanoseconds() - asked) / 1_000_000
            if Double(took) >= store.handoverWait * 500 { logger.warning("session \(id): handing it over took \(took) ms") }
        }
        // The gate: a request of this instance taking the session over (or just took it and is
        // applying its update) finishes first.
        gates.withLock(id) {
            guard let handle = local.get(id) else {
                tell(replyKey)
                return
            }
            // Being released by shutdown: answer once that is done (the asker then finds it free).
            Self.wait(atMost: store.handoverWait) { handle.state.withLock { $0.ownership.phase == .handingOver } }
            handle.state.withLock { state in
                let action = state.ownership.handoverRequested(
                    now: Monotonic.nanoseconds(), highestHandle: state.session.nextHandle - 1, block: store.handleBlock)
                guard case .release(let ticket) = action, !state.closed else {
                    tell(replyKey)
                    return
                }
                let write = RedisStateStore.Write(
                    session: id, ticket: ticket, snapshot: state.session.snapshot(), layouts: Self.layoutIDs(of: state.session),
                    release: true, replyKey: replyKey)
                let outcome = store.write([write], operation: "handover").first ?? .failed
                if outcome == .layoutMissing { republishLayouts(of: [write]) }
                switch outcome {
                case .ok, .missing, .layoutMissing:
                    state.ownership.releaseSucceeded(ticket)
                    local.detach(handle, layoutID: state.session.layout.digest)
                    metrics.countHandover("given")
                case .lost:
                    lose(handle, &state)
                    tell(replyKey)
                case .failed:
                    // It may have run: answer nothing until the store says (``reclaim(_:)``).
                    state.ownership.releaseFailed()
                    logger.warning("session \(id): its release got no answer; in doubt until the shared store says whether it ran")
                case .unsent:
                    state.ownership.releaseNotSent()
                }
            }
        }
    }

    /// Tells an asker to look again (the session is not here).
    private func tell(_ replyKey: String) {
        _ = try? store.pool.pipeline([
            .init("RPUSH", replyKey, "released"), .init("PEXPIRE", replyKey, 10_000),
        ])
    }
}
