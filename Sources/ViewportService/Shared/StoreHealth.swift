import Logging
import Synchronization

/// Whether the shared store answers, as `/healthz` and `/readyz` report it: the outcome of the
/// last round trip (requests' and the flusher's, which tries at least every flush interval). A
/// store that answers but refuses the commands (a wrong password, missing ACL permissions, out of
/// memory, a read-only replica) counts as down. Changes are logged (down as a warning with the
/// reason, back as a notice), at most one line per `logInterval`: a store that refuses some
/// commands and takes others flips at every round trip.
final class StoreHealth: Sendable {
    private let up = Atomic<Bool>(true)
    private let logger: Logger?
    /// The state last logged and when (monotonic ns).
    private let logged = Mutex<(up: Bool, at: Int64)>((true, .min / 2))
    static let logInterval: Int64 = 5_000_000_000

    init(logger: Logger? = nil) {
        self.logger = logger
    }

    var isUp: Bool { up.load(ordering: .relaxed) }

    func record(ok: Bool, reason: @autoclosure () -> String = "") {
        guard up.load(ordering: .relaxed) != ok, up.compareExchange(expected: !ok, desired: ok, ordering: .relaxed).exchanged,
            let logger
        else { return }
        let now = Monotonic.nanoseconds()
        let log = logged.withLock { logged -> Bool in
            guard logged.up != ok, now - logged.at >= Self.logInterval else { return false }
            logged = (ok, now)
            return true
        }
        guard log else { return }
        if ok {
            logger.notice("the shared store answers again")
        } else {
            logger.warning("the shared store is unavailable: \(reason()); requests that need it answer 503 until it answers")
        }
    }
}
