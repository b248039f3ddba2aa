import Synchronization

/// Whether the shared store answers, as `/healthz` reports it: the outcome of the last round
/// trip (requests' and the flusher's, which tries at least every flush interval).
final class StoreHealth: Sendable {
    private let up = Atomic<Bool>(true)

    var isUp: Bool { up.load(ordering: .relaxed) }

    func record(ok: Bool) {
        if up.load(ordering: .relaxed) != ok { up.store(ok, ordering: .relaxed) }
    }
}
