import Logging
import Synchronization
import ViewportCore
import ViewportRedis

/// The sessions this instance holds in front of the shared store, and what every part of the
/// shared session store (the request path, the writer, the handover side) does with them: find
/// them, describe their writes, and drop a copy another instance owns now.
final class HeldSessions: Sendable {
    let local: SessionStore
    let layouts: SharedLayoutStore
    let store: RedisStateStore
    let metrics: ServiceMetrics
    let logger: Logger
    /// Nanoseconds: the lease, and how often a clean session's lease is renewed.
    let leaseNanoseconds: Int64
    let renewNanoseconds: Int64
    /// Nanoseconds without a request after which a held session is parked (`store.parkAfter`).
    let parkNanoseconds: Int64
    /// The work a shared store does for one session (take it over, hand it over) runs one at a
    /// time per id.
    let gates = IDGates()
    /// Serving: writing behind, taking sessions over. Cleared when shutdown begins.
    let running = Atomic<Bool>(false)

    init(
        local: SessionStore, layouts: SharedLayoutStore, store: RedisStateStore, metrics: ServiceMetrics, logger: Logger,
        parkAfter: Double = .infinity
    ) {
        self.local = local
        self.layouts = layouts
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.leaseNanoseconds = store.leaseMilliseconds * 1_000_000
        self.renewNanoseconds = max(1, store.leaseMilliseconds * 1_000_000 / 4)
        self.parkNanoseconds = parkAfter < 1e9 ? Int64(parkAfter * 1e9) : .max
    }

    /// The layouts a session's snapshot names (its expiry in the store moves theirs).
    static func layoutIDs(of session: ViewportSession) -> [String] {
        [session.layout.digest, session.lastPlan.previousLayout?.digest ?? session.layout.digest]
    }

    /// The write of `ticket` with the session's current state.
    func write(
        of handle: SessionHandle, _ state: borrowing SessionHandle.State, ticket: SessionOwnership.WriteTicket, release: Bool = false,
        replyKey: String? = nil
    ) -> RedisStateStore.Write {
        RedisStateStore.Write(
            session: handle.id, ticket: ticket, snapshot: state.session.snapshot(), layouts: Self.layoutIDs(of: state.session),
            release: release, replyKey: replyKey)
    }

    /// Another instance has the session now (the store's answer was ``SessionOwnership/AnswerAction/lost(news:)``):
    /// with `news` (this copy still counted as the owner: it was cut off), the copy goes. A
    /// refusal of a copy already released, deleted or closed changes nothing.
    func drop(_ handle: SessionHandle, _ state: inout SessionHandle.State, news: Bool) {
        guard news, !state.closed else { return }
        local.detach(handle, &state)
        logger.warning("session \(handle.id): another instance owns it now (this one was cut off for longer than its lease); dropped the local copy")
    }

    /// The store's answer to a release (a handover, a park, shutdown's), applied: a session
    /// handed over leaves memory, one another instance has now is dropped. Answers the action, for
    /// what the caller does besides (count it, tell an asker, try again).
    func released(
        _ handle: SessionHandle, _ state: inout SessionHandle.State, _ outcome: RedisStateStore.Outcome,
        _ ticket: SessionOwnership.WriteTicket
    ) -> SessionOwnership.AnswerAction {
        let action = state.ownership.releaseAnswered(outcome, ticket)
        switch action {
        case .handedOver: local.detach(handle, &state)
        case .lost(let news): drop(handle, &state, news: news)
        case .releaseInDoubt, .releaseNotRun, .confirmed, .writeAgain, .unconfirmed: break
        }
        return action
    }

    /// Writes again the layouts the store lost that these writes named.
    func republishLayouts(of writes: some Sequence<RedisStateStore.Write>) {
        for id in Set(writes.flatMap(\.layouts)) { layouts.republish(id: id) }
    }
}
