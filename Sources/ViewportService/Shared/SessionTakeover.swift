import Foundation
import Synchronization
import ViewportCore
import Logging
import ViewportRedis

/// Takes sessions over from the shared store for requests of this instance: from no one, from a
/// dead owner, or from a live one that hands it over on request; restores each and holds it
/// here. Remembers owners that did not hand a session over in time.
final class SessionTakeover: Sendable {
    let sessions: HeldSessions
    /// Owners that did not hand a session over in time, until when (monotonic ns): requests for
    /// their sessions answer 503 at once instead of waiting again.
    private let suspects = Mutex<[String: (since: Int64, until: Int64, checked: Int64)]>([:])

    init(sessions: HeldSessions) {
        self.sessions = sessions
    }

    private var store: RedisStateStore { sessions.store }

    /// Takes the session from the store. Nil when the store has no such session. Called with the
    /// session's gate held.
    func acquire(_ id: String) throws(Problem) -> SessionHandle? {
        guard SharedSessionStore.isHexID(id) else { return nil }
        guard sessions.running.load(ordering: .relaxed) else {
            throw Problem.unavailable("viewportd is shutting down")
        }
        let replyKey = store.keys.reply(RedisStateStore.nonce(), session: id)
        // A round that does not take it saw it handed over to another instance's request, which
        // applied its update: progress, only not this request's. With three instances sending to
        // one session at once, 5 % of requests lost three rounds in a row (the first bound: a
        // 503); it tries on for as long as a lease lasts, three rounds at least.
        let deadline = Monotonic.nanoseconds() + sessions.leaseNanoseconds
        var round = 0
        // A lease's and an outage's wait are timed (``whenToRetry(_:timed:)``) once per request.
        var timedLease = false
        var timedOutage = false
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
                let retryAfter = Self.seconds(left)
                if isSuspect(owner) && !heardAgain(from: owner) {
                    throw Problem.unavailable("session \(id) is held by instance \(owner), which does not answer; retry after its lease ends", retryAfter: retryAfter)
                }
                let released: Bool
                let waitStarted = Monotonic.nanoseconds()
                do {
                    released = try store.awaitHandover(replyKey: replyKey)
                } catch {
                    sessions.logger.warning(
                        "session \(id): waiting for instance \(owner) to hand it over failed after \((Monotonic.nanoseconds() - waitStarted) / 1_000_000) ms: \(error)")
                    throw error.problem
                }
                guard released else {
                    let waited = (Monotonic.nanoseconds() - waitStarted) / 1_000_000
                    sessions.logger.warning(
                        "session \(id): instance \(owner) did not hand it over within \(waited) ms (lease \(left) ms left)")
                    suspect(owner)
                    // The lease's end counted from now, not from before the wait; the retry
                    // comes when it ends (then a take may start a grace: the outage below).
                    guard let retryAfter = try whenToRetry(left - waited, timed: &timedLease) else { continue }
                    throw Problem.unavailable(
                        "session \(id) is held by instance \(owner), which did not hand it over; retry after its lease ends",
                        retryAfter: retryAfter)
                }
            case .outage(let left):
                guard let retryAfter = try whenToRetry(left, timed: &timedOutage) else { continue }
                throw Problem.unavailable(
                    "session \(id): the shared store heard from no instance for a while (it was unreachable, or no instance ran); the instance that held the session may still write back what it answered meanwhile; retry shortly",
                    retryAfter: retryAfter)
            case .acquired(let epoch, let reservedBefore, let version, let snapshot, let stolen):
                let handle = try adopt(id, epoch: epoch, reservedBefore: reservedBefore, version: version, snapshot: snapshot, sentAt: sentAt)
                sessions.metrics.countHandover(stolen ? "stolen" : "taken")
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
            epoch: epoch, version: version, handleLimit: reservedBefore + store.handleBlock, sentAt: sentAt, lease: sessions.leaseNanoseconds)
        do throws(Problem) {
            let needed: (layout: String, previous: String?)
            do {
                needed = try ViewportSession.snapshotLayouts(snapshot)
            } catch {
                throw Problem.unavailable("session \(id) in the shared store cannot be read by this instance (\(error))", retryAfter: 5)
            }
            let layouts = sessions.layouts
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
            // Not inserted, the handle and its lease go: the layout is released.
            let handle = SessionHandle(id: id, session: session, layoutLease: lease, ownership: ownership)
            try sessions.local.insert(handle)
            return handle
        } catch {
            // Give it back, unchanged, so that another instance can take it.
            let ticket = SessionOwnership.WriteTicket(epoch: epoch, version: 0, handleLimit: 0, create: false, sentAt: sentAt)
            _ = store.write([RedisStateStore.Write(session: id, ticket: ticket, snapshot: [], layouts: [], release: true)], operation: "release")
            throw error
        }
    }

    // MARK: Waits

    /// A wait in whole seconds (`Retry-After`), rounded up.
    private static func seconds(_ milliseconds: Int64) -> Int { Int((Double(max(milliseconds, 0)) / 1000).rounded(.up)) }

    /// The `Retry-After` of a wait the store reported (ms), timed by ``waitToWholeSeconds(_:)``
    /// unless `timed` says it was already (then set); nil: the wait is over, try again now.
    private func whenToRetry(_ milliseconds: Int64, timed: inout Bool) throws(Problem) -> Int? {
        guard !timed, let whole = try waitToWholeSeconds(milliseconds) else { return Self.seconds(milliseconds) }
        timed = true
        return whole == 0 ? nil : whole
    }

    /// Whether a request is waiting in ``waitToWholeSeconds(_:)``: one at a time, since each
    /// holds one of the threads that run requests' store work.
    private let waiting = Atomic<Bool>(false)

    /// Waits out the part of a wait the store reported (`milliseconds`: a lease's or a grace's
    /// rest) that whole seconds of `Retry-After` would overshoot, when that part is at most the
    /// wait for a handover: the client's retry then comes when the store's rules let it through,
    /// not up to a second later. Answers the whole seconds left (0: none, try again now), or nil
    /// when it did not wait (that part is too long, or another request waits already).
    private func waitToWholeSeconds(_ milliseconds: Int64) throws(Problem) -> Int? {
        let rest = max(milliseconds, 0) % 1000
        guard rest > 0, Double(rest) / 1000 <= store.handoverWait,
            waiting.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else { return nil }
        defer { waiting.store(false, ordering: .releasing) }
        // One millisecond more: the store counts whole milliseconds.
        usleep(useconds_t(rest + 1) * 1000)
        guard sessions.running.load(ordering: .relaxed) else { throw Problem.unavailable("viewportd is shutting down") }
        return Int(max(milliseconds, 0) / 1000)
    }

    // MARK: Suspects

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
        suspects.withLock { $0[owner] = (since: now, until: now + sessions.leaseNanoseconds, checked: now) }
    }
}
