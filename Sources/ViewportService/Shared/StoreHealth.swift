import Logging
import Synchronization

/// Whether the shared store answers, as `/healthz`, `/readyz` and `viewportd_store_up` report
/// it: down from any failed round trip (no answer, or a refusal: a wrong password, a missing ACL
/// permission, `OOM`, a read-only replica) until `hold` passes without one. A store that takes
/// some commands and refuses others (renewals through, writes refused) stays down, instead of
/// reading up after every command it takes (an audit: `/readyz` at 200 while every owned
/// session answered 503).
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

    init(logger: Logger? = nil, hold: Double = 1, logInterval: Double = 5) {
        self.logger = logger
        self.hold = Int64(hold * 1e9)
        self.logInterval = Int64(logInterval * 1e9)
    }

    var isUp: Bool { isUp(now: Monotonic.nanoseconds()) }

    private func isUp(now: Int64) -> Bool {
        let failed = lastFailure.load(ordering: .relaxed)
        return failed == .min || now - failed >= hold
    }

    /// A round trip failed (`reason`: the operation and the error). Successes are not recorded:
    /// the time since the last failure is the state.
    func recordFailure(_ reason: String) {
        lastFailure.store(Monotonic.nanoseconds(), ordering: .relaxed)
        self.reason.withLock { $0 = reason }
    }

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
