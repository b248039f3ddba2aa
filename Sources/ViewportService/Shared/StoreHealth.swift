import Logging
import Synchronization

/// Whether the shared store answers, as `/healthz`, `/readyz` and `viewportd_store_up` report
/// it: down from a refusal (a wrong password, a missing ACL permission, `OOM`, a read-only
/// replica) until `hold` passes without one. A store that takes some commands and refuses others
/// (renewals through, writes refused) stays down, instead of reading up after every command it
/// takes (an audit: `/readyz` at 200 while every owned session answered 503). A store that does
/// not answer (a timeout, a lost connection) is down until a heartbeat sent after that failure
/// gets its answer (at most `hold`), and while a heartbeat waits for its answer for longer than
/// `stall`: `/readyz` follows the store within a heartbeat, both ways.
///
/// ``logIfChanged()`` (the writer calls it every round) logs the state when it differs from the
/// state last logged, at most once per `logInterval`: a flapping store does not flood the log,
/// and the log always comes to the current state.
final class StoreHealth: Sendable {
    /// Monotonic nanoseconds of the last failure (`.min`: none yet).
    private let lastFailure = Atomic<Int64>(.min)
    private let reason = Mutex<String>("")
    private let logger: Logger?
    /// The state last logged and when (monotonic ns).
    private let logged = Mutex<(up: Bool, at: Int64)>((true, .min / 2))
    let hold: Int64
    let logInterval: Int64
    /// A heartbeat without an answer for this long means the store does not answer now.
    let stall: Int64
    /// A heartbeat whose answer took (or takes) longer than this means the store is slow.
    let slow: Int64
    /// How long the last heartbeat that got its answer took, and the shorter of the last two.
    private let lastHeartbeatTook = Atomic<Int64>(0)
    private let lastTwoHeartbeatsTook = Atomic<Int64>(0)
    /// When the last connection-level failure happened (monotonic ns).
    private let lastUnanswered = Atomic<Int64>(.min)
    /// When the last heartbeat that got its answer was sent.
    private let lastHeartbeat = Atomic<Int64>(.min)
    /// When the heartbeat waiting for its answer was sent (`.max`: none waits).
    private let heartbeatWaiting = Atomic<Int64>(.max)

    init(logger: Logger? = nil, hold: Double = 1, logInterval: Double = 5, stall: Double = 0.25, slow: Double = 0.125) {
        self.logger = logger
        self.hold = Int64(hold * 1e9)
        self.logInterval = Int64(logInterval * 1e9)
        self.stall = Int64(stall * 1e9)
        self.slow = Int64(slow * 1e9)
    }

    /// Whether the store answers slowly: the last two heartbeats' answers took longer than
    /// `slow` (one slow answer on a busy machine is not a slow link), or the one under way has
    /// waited that long.
    func isSlow(now: Int64) -> Bool {
        if lastTwoHeartbeatsTook.load(ordering: .relaxed) > slow { return true }
        let waiting = heartbeatWaiting.load(ordering: .relaxed)
        return waiting != .max && now - waiting > slow
    }

    var isUp: Bool { isUp(now: Monotonic.nanoseconds()) }

    private func isUp(now: Int64) -> Bool {
        let failed = lastFailure.load(ordering: .relaxed)
        guard failed == .min || now - failed >= hold else { return false }
        if isUnreachable(now: now) { return false }
        let waiting = heartbeatWaiting.load(ordering: .relaxed)
        return waiting == .max || now - waiting < stall
    }

    /// Whether the store did not answer this instance lately (a timeout, a lost connection, a
    /// pool failing fast) and no heartbeat sent since has got its answer: requests that would
    /// wait for the store answer 503 at once instead (the writer's heartbeat, every flush
    /// interval, finds out when it answers again). At most `hold` after the last failure.
    func isUnreachable(now: Int64) -> Bool {
        let failed = max(lastUnanswered.load(ordering: .relaxed), lostReply.load(ordering: .relaxed))
        return failed != .min && failed >= lastHeartbeat.load(ordering: .relaxed) && now - failed < hold
    }

    /// The writer sends a heartbeat at `sentAt`.
    func heartbeatSent(at sentAt: Int64) { heartbeatWaiting.store(sentAt, ordering: .relaxed) }

    /// The heartbeat sent at `sentAt` got its answer (`answered`) or failed.
    func heartbeatEnded(sentAt: Int64, answered: Bool) {
        heartbeatWaiting.store(.max, ordering: .relaxed)
        guard answered else { return }
        lastHeartbeat.store(sentAt, ordering: .relaxed)
        let took = Monotonic.nanoseconds() - sentAt
        let before = lastHeartbeatTook.exchange(took, ordering: .relaxed)
        lastTwoHeartbeatsTook.store(min(before, took), ordering: .relaxed)
    }

    /// When the latest round trip that got no answer (a timeout, a connection lost after sending,
    /// a connection that could not be made) was started (monotonic ns; `.min`: none yet):
    /// sessions whose lease was last confirmed before that are answered only once a renewal sent
    /// later succeeds (``SessionOwnership``).
    private let lostReply = Atomic<Int64>(.min)

    var lostReplySince: Int64 { lostReply.load(ordering: .acquiring) }

    /// A round trip sent at `sentAt` got no answer.
    func recordLostReply(sentAt: Int64) {
        var current = lostReply.load(ordering: .relaxed)
        while current < sentAt {
            let (exchanged, original) = lostReply.compareExchange(expected: current, desired: sentAt, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
    }

    /// A round trip failed (`reason`: the operation and the error). Successes are not recorded:
    /// the time since the last failure is the state.
    func recordFailure(_ reason: String) {
        lastFailure.store(Monotonic.nanoseconds(), ordering: .relaxed)
        self.reason.withLock { $0 = reason }
    }

    /// A round trip got no answer or could not be made (`reason`): down until a heartbeat sent
    /// after it gets its answer.
    func recordUnanswered(_ reason: String) {
        lastUnanswered.store(Monotonic.nanoseconds(), ordering: .relaxed)
        self.reason.withLock { $0 = reason }
    }

    /// The last failure's reason (the operation and the error), for a problem's detail.
    var lastReason: String { reason.withLock { $0 } }

    /// Logs the state if it changed since the last line (down as a warning with the last
    /// failure's reason, back as a notice), at most once per `logInterval`.
    func logIfChanged() {
        guard let logger else { return }
        let now = Monotonic.nanoseconds()
        let up = isUp(now: now)
        let log = logged.withLock { logged -> Bool in
            guard logged.up != up, now - logged.at >= logInterval else { return false }
            logged = (up, now)
            return true
        }
        guard log else { return }
        if up {
            logger.notice("the shared store answers again")
        } else {
            let why = reason.withLock { $0 }
            logger.warning("the shared store is unavailable: \(why); requests that need it answer 503 until it answers")
        }
    }
}
