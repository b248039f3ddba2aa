import Dispatch
import Synchronization
import Logging
import ViewportCore
import ViewportRedis

/// Writes behind what requests answered from memory: every `store.flushInterval`, one round
/// (``flushOnce()``) writes the dirty sessions, renews the leases of the others when due, sends
/// this instance's heartbeat, parks the sessions idle for `store.parkAfter`, and asks the store
/// about releases that got no answer.
///
/// A service of the process's group (``BackgroundService``), stopped last: the handover side
/// stops its rounds (``stopRounds()``) before it releases the sessions, since a write must not
/// land after a release, and the writer keeps renewing leases while the HTTP server drains.
final class StoreWriter: BackgroundService {
    let sessions: HeldSessions
    /// Most commands per pipeline.
    static let batchLimit = 512
    /// Most sessions parked per round (the rest wait for the next renewal scan).
    static let parkLimit = 128

    private let dirty = Mutex<[SessionHandle]>([])
    private let lastRenewScan = Atomic<Int64>(0)
    /// Held for one round; true once rounds have stopped.
    private let rounds = Mutex<Bool>(false)
    /// Wakes the writer between rounds when it is to stop.
    private let wake = DispatchSemaphore(value: 0)

    init(sessions: HeldSessions) {
        self.sessions = sessions
    }

    private var store: RedisStateStore { sessions.store }

    // MARK: Running

    var threadName: String { "viewportd-store-writer" }

    /// A round every flush interval (while the repository serves), until ``stop()``.
    func runBlocking() {
        while true {
            _ = wake.wait(timeout: .now() + store.flushInterval)
            // Checked and run under one lock: the handover side, once it has stopped the rounds
            // (and releases the sessions), never sees one start after that.
            let more = rounds.withLock { stopped -> Bool in
                guard !stopped else { return false }
                if sessions.running.load(ordering: .sequentiallyConsistent) { flushOnce() }
                return true
            }
            guard more else { return }
        }
    }

    /// Lets a round in progress finish, and runs no more: its writes must not land after the
    /// releases (nor its heartbeat after the heartbeat ends: askers would wait for this instance
    /// again).
    func stopRounds() {
        rounds.withLock { $0 = true }
    }

    func stop() {
        stopRounds()
        wake.signal()
    }

    // MARK: The queue

    /// Queues a session to be written in the next round (once, however often it changes).
    func enqueue(_ handle: SessionHandle) {
        guard !handle.queued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        dirty.withLock { $0.append(handle) }
    }

    // MARK: A round

    private typealias PendingWrite = (handle: SessionHandle, write: RedisStateStore.Write)
    private typealias DueRenewal = (handle: SessionHandle, epoch: Int64, touched: Bool, layouts: [String])

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
        var pending: [PendingWrite] = []
        for handle in queued {
            handle.queued.store(false, ordering: .releasing)
            let write: RedisStateStore.Write? = handle.state.withLock { state in
                guard !state.closed, state.ownership.isDirty,
                    let ticket = state.ownership.beginWrite(
                        now: now, highestHandle: state.session.nextHandle - 1, block: store.handleBlock,
                        renewInterval: sessions.renewNanoseconds / 2, lostReplySince: lostReplySince)
                else { return nil }
                return sessions.write(of: handle, state, ticket: ticket)
            }
            if let write { pending.append((handle, write)) }
        }
        let (due, idle, doubtful) = leasesDue(now: now, writing: Set(pending.map { ObjectIdentifier($0.handle) }))
        for batch in StoreBatches(writes: pending.count, renewals: due.count, limit: Self.batchLimit, atLeastOne: true) {
            let writes = pending[batch.writes]
            let renewals = due[batch.renewals]
            if !writes.isEmpty { sessions.metrics.recordFlush(sessions: writes.count) }
            let sentAt = Monotonic.nanoseconds()
            let outcomes = store.round(
                heartbeat: batch.first, writes: writes.map(\.write), renewals: renewals.map { ($0.handle.id, $0.epoch, $0.touched, $0.layouts) })
            for ((handle, write), outcome) in zip(writes, outcomes.writes) { record(outcome, of: write, for: handle) }
            sessions.republishLayouts(of: zip(writes, outcomes.writes).filter { $0.1 == .layoutMissing }.map(\.0.write))
            for (entry, outcome) in zip(renewals, outcomes.renewals) {
                let action = entry.handle.state.withLock { state in
                    let action = state.ownership.renewalAnswered(outcome, sentAt: sentAt, lease: sessions.leaseNanoseconds)
                    if case .lost(let news) = action { sessions.drop(entry.handle, &state, news: news) }
                    return action
                }
                if action == .writeAgain { enqueue(entry.handle) }
            }
        }
        park(idle)
        reclaim(doubtful)
    }

    private func record(_ outcome: RedisStateStore.Outcome, of write: RedisStateStore.Write, for handle: SessionHandle) {
        let again = handle.state.withLock { state in
            if case .lost(let news) = state.ownership.writeAnswered(outcome, write.ticket, lease: sessions.leaseNanoseconds) {
                sessions.drop(handle, &state, news: news)
            }
            // Still dirty (a failed write, or changed meanwhile): next round.
            return !state.closed && state.ownership.isDirty
        }
        if again { enqueue(handle) }
    }

    /// The leases of the sessions no write renews this round that are due for renewal (every
    /// eighth of a lease, and in the next round for one unconfirmed since a round trip got no
    /// answer), the sessions among them to park instead (idle for `store.parkAfter`, clean and
    /// confirmed: ``park(_:)``), and the sessions whose release got no answer (to reclaim).
    private func leasesDue(now: Int64, writing: Set<ObjectIdentifier>)
        -> (due: [DueRenewal], idle: [SessionHandle], doubtful: [(handle: SessionHandle, epoch: Int64)])
    {
        let lostReplySince = store.health.lostReplySince
        let leaseNanoseconds = sessions.leaseNanoseconds
        let renewNanoseconds = sessions.renewNanoseconds
        // Every round while some lease is unconfirmed (a lost reply since the last scan), else
        // every eighth of a lease.
        let unconfirmed = lostReplySince >= lastRenewScan.load(ordering: .relaxed) - leaseNanoseconds
        guard unconfirmed || now - lastRenewScan.load(ordering: .relaxed) >= renewNanoseconds / 2 else { return ([], [], []) }
        lastRenewScan.store(now, ordering: .relaxed)
        var due: [DueRenewal] = []
        var idle: [SessionHandle] = []
        var doubtful: [(handle: SessionHandle, epoch: Int64)] = []
        for handle in sessions.local.allHandles where !writing.contains(ObjectIdentifier(handle)) {
            let renewal: (Int64, Bool, [String])? = handle.state.withLock { state in
                guard !state.closed else { return nil }
                if let epoch = state.ownership.reclaimEpoch() {
                    doubtful.append((handle, epoch))
                    return nil
                }
                guard state.ownership.needsRenewal(now: now, interval: renewNanoseconds / 2, lostReplySince: lostReplySince) else {
                    return nil
                }
                if handle.idleNanoseconds(now: now) >= sessions.parkNanoseconds, idle.count < Self.parkLimit,
                    state.ownership.mayPark(lostReplySince: lostReplySince)
                {
                    idle.append(handle)
                    return nil
                }
                let (epoch, touched) = state.ownership.beginRenewal()
                return (epoch, touched, touched ? HeldSessions.layoutIDs(of: state.session) : [])
            }
            if let (epoch, touched, layouts) = renewal { due.append((handle, epoch, touched, layouts)) }
        }
        return (due, idle, doubtful)
    }

    /// Parks sessions idle for `store.parkAfter` (``SessionOwnership/beginPark(now:highestHandle:block:lostReplySince:)``):
    /// each is written and released, in one pipeline, and leaves memory, so that its lease costs
    /// the store no more renewals. Under their gates: a request for one meanwhile finds it
    /// moved, waits for its gate, and then takes it back from the store as any instance would.
    /// Its record expires when it would have here (the rest of its idle timeout).
    private func park(_ handles: [SessionHandle]) {
        guard !handles.isEmpty else { return }
        sessions.gates.withLocks(handles.map(\.id)[...]) {
            let now = Monotonic.nanoseconds()
            let lostReplySince = store.health.lostReplySince
            var parking: [PendingWrite] = []
            var leastIdle = Int64.max
            for handle in handles {
                let write: RedisStateStore.Write? = handle.state.withLock { state in
                    // A request since the scan keeps it here (its lease is renewed next scan).
                    let idle = handle.idleNanoseconds(now: now)
                    guard !state.closed, idle >= sessions.parkNanoseconds,
                        let ticket = state.ownership.beginPark(
                            now: now, highestHandle: state.session.nextHandle - 1, block: store.handleBlock, lostReplySince: lostReplySince)
                    else { return nil }
                    leastIdle = min(leastIdle, idle)
                    return sessions.write(of: handle, state, ticket: ticket, release: true)
                }
                if let write { parking.append((handle, write)) }
            }
            guard !parking.isEmpty else { return }
            let outcomes = store.park(parking.map(\.write), expiresIn: max(1, (sessions.local.idleNanoseconds - leastIdle) / 1_000_000))
            sessions.republishLayouts(of: zip(parking, outcomes).filter { $0.1 == .layoutMissing }.map(\.0.write))
            for ((handle, write), outcome) in zip(parking, outcomes) {
                // In doubt, the next round's reclaim asks the store; not run, it is still held.
                let action = handle.state.withLock { sessions.released(handle, &$0, outcome, write.ticket) }
                if action == .handedOver { sessions.metrics.countHandover("parked") }
            }
        }
    }

    /// Asks the store whether releases that got no answer ran: each session is taken back at a
    /// new epoch, or dropped when another instance has it.
    private func reclaim(_ doubtful: [(handle: SessionHandle, epoch: Int64)]) {
        guard !doubtful.isEmpty else { return }
        let sentAt = Monotonic.nanoseconds()
        let outcomes = store.reclaim(doubtful.map { ($0.handle.id, $0.epoch) })
        for (entry, outcome) in zip(doubtful, outcomes) {
            let action = entry.handle.state.withLock { state -> SessionOwnership.AnswerAction in
                guard !state.closed else { return .unconfirmed }
                let action = state.ownership.reclaimAnswered(outcome, epoch: entry.epoch, sentAt: sentAt, lease: sessions.leaseNanoseconds)
                switch action {
                case .lost(let news): sessions.drop(entry.handle, &state, news: news)
                case .confirmed, .writeAgain:
                    if case .ok(let epoch) = outcome {
                        sessions.logger.notice("session \(entry.handle.id): its release got no answer; taken back at epoch \(epoch)")
                    }
                case .unconfirmed, .handedOver, .releaseInDoubt, .releaseNotRun: break
                }
                return action
            }
            if action == .writeAgain { enqueue(entry.handle) }
        }
    }
}
