import Logging
import Synchronization

/// Whether the shared store answers, as `/healthz` and `/readyz` report it: the outcome of the
/// last round trip (requests' and the flusher's, which tries at least every flush interval). A
/// store that answers but refuses the commands (a wrong password, missing ACL permissions, out of
/// memory, a read-only replica) counts as down. Each change is logged once: down as a warning
/// with the reason, back as a notice.
final class StoreHealth: Sendable {
    private let up = Atomic<Bool>(true)
    private let logger: Logger?

    init(logger: Logger? = nil) {
        self.logger = logger
    }

    var isUp: Bool { up.load(ordering: .relaxed) }

    func record(ok: Bool, reason: @autoclosure () -> String = "") {
        guard up.load(ordering: .relaxed) != ok, up.compareExchange(expected: !ok, desired: ok, ordering: .relaxed).exchanged else { return }
        if ok {
            logger?.notice("the shared store answers again")
        } else {
            logger?.warning("the shared store is unavailable: \(reason()); requests that need it answer 503 until it answers")
        }
    }
}
