/// One instance's view of a session's ownership in a shared store, as a pure state machine:
/// events in, actions out, no I/O (the shared session store performs the actions and reports
/// their outcomes back as events). Lives in the session's handle, under its lock.
///
/// Phases:
/// ```
///   fresh ──write ok──▶ owned ──handover asked, parked──▶ handingOver ──released──▶ released
///     │                  │  ▲                          ├──not sent──▶ owned
///     │                  │  │                          └──no answer──▶ inDoubt ──reclaimed──▶ owned
///     │                  │  └── write/renew ok (lease extended)            └──lost──▶ lost
///     └────────┬─────────┴── write/renew answered "lost" (a newer owner) ──▶ lost
///              └── deleted ──▶ deleted
/// ```
/// `fresh`: opened here and never stored; nobody else can know it, so it is served from memory
/// with no lease. `owned`: this instance holds the lease at `epoch` and may answer from memory
/// until `validUntil` (a safe fraction of the lease, measured from when the last successful write
/// or renewal was sent); after that it must renew first. `released`/`lost`: another instance
/// owns it now; the local copy is stale and every request goes through the store again.
/// `inDoubt`: a release was sent and got no answer: it may have run (the session is free, or
/// another instance took it) or not. Nothing is answered until the store says which: a
/// reclaim (``beginReclaim()``) takes it back at a new epoch, which also fences the release
/// should it reach the store later, or finds it lost.
///
/// Unconfirmed: a round trip that got no answer (this session's write or renewal, or any other:
/// `lostReplySince` in ``admit(now:unwrittenLimit:lostReplySince:)``) was sent after the last
/// renewal that succeeded. The lease still holds by the clock, but the store may be cut off:
/// nothing is answered until a renewal or write sent after it succeeds (the writer sends one
/// every round), so that an owner cut off stops answering within `store.timeout` of the cut,
/// and what it answered is not answered again differently by the instance that takes over.
///
/// Writes carry `version` (counting changes; the store keeps the newest) and a handle reserve:
/// handles up to `handleLimit` are recorded in the store before a plan that uses them is
/// answered, so an owner that dies never made the next one hand out a handle twice.
struct SessionOwnership: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        case fresh
        case owned
        case handingOver
        /// A release got no answer: it may have run.
        case inDoubt
        case released
        case lost
        case deleted
    }

    private(set) var phase: Phase
    /// The fencing token: the store's epoch for this owner (1 for a session created here).
    private(set) var epoch: Int64
    /// Counts the session's changes; the store keeps the write with the highest.
    private(set) var version: UInt64
    /// The highest version the store has confirmed.
    private(set) var storedVersion: UInt64
    /// Whether the store has the session (its record exists).
    private(set) var everStored: Bool
    /// Handles up to this are reserved in the store (`Int.max` while fresh and never written).
    private(set) var handleLimit: Int
    /// Monotonic nanoseconds until which the session may be answered from memory.
    private(set) var validUntil: Int64
    /// When the last successful renewal (or write) was sent.
    private(set) var renewedAt: Int64
    /// Read since the last renewal: the store's expiry is pushed back with it.
    private(set) var touched = false
    /// Whether a write was ever sent (its reply may have been lost: the store may have it).
    private(set) var writeBegun = false
    /// Monotonic nanoseconds since which changes wait to be written (nil when none do): the
    /// oldest answered change a store outage or refusal could lose.
    private(set) var unwrittenSince: Int64?
    /// When the latest round trip of this session that got no answer (a write or a renewal whose
    /// outcome is unknown) was sent: the lease is unconfirmed until a later one succeeds.
    private(set) var lostReplySentAt: Int64 = .min

    /// A session opened on this instance.
    static func fresh() -> SessionOwnership {
        SessionOwnership(
            phase: .fresh, epoch: 1, version: 1, storedVersion: 0, everStored: false, handleLimit: .max, validUntil: .max,
            renewedAt: 0)
    }

    /// A session just acquired from the store: `epoch` from the acquisition, `version` the
    /// stored one, `handleLimit` the reserve the acquisition recorded.
    static func acquired(epoch: Int64, version: UInt64, handleLimit: Int, sentAt: Int64, lease: Int64) -> SessionOwnership {
        SessionOwnership(
            phase: .owned, epoch: epoch, version: version, storedVersion: version, everStored: true, handleLimit: handleLimit,
            validUntil: sentAt + Self.validFor(lease), renewedAt: sentAt)
    }

    /// The part of a lease this instance relies on: 3/4 of it, so that a request that checked it
    /// finishes, and clocks that drift apart by a few percent, stay inside the store's lease.
    static func validFor(_ lease: Int64) -> Int64 { lease / 4 * 3 }

    /// A session without a store (the in-process default): always answered from memory.
    static let local = SessionOwnership(
        phase: .owned, epoch: 0, version: 0, storedVersion: 0, everStored: false, handleLimit: .max, validUntil: .max, renewedAt: 0)

    // MARK: Requests

    enum Admission: Equatable {
        /// Answer from memory.
        case serve
        /// The lease may have lapsed: renew it (synchronously) before answering.
        case renewFirst
        /// Changes answered long ago are still not written (the store refuses or does not
        /// answer): write them (synchronously) before answering more, so that what another
        /// instance taking the session over could lose stays bounded.
        case writeFirst
        /// Ownership is in doubt (a release got no answer) or unconfirmed (a round trip sent
        /// since the last renewal got no answer): answer 503 at once; the writer asks the store
        /// every round.
        case confirmFirst
        /// Another instance owns it now (or is taking it): look it up in the store again.
        case moved
        /// Deleted: 404.
        case gone
    }

    /// Whether a request may be answered from this copy at `now`, with changes left unwritten at
    /// most `unwrittenLimit` nanoseconds (`store.flushInterval` + `store.timeout`: a healthy
    /// writer writes every change within that), when the latest round trip of this instance
    /// that got no answer was sent at `lostReplySince`.
    func admit(now: Int64, unwrittenLimit: Int64 = .max, lostReplySince: Int64 = .min) -> Admission {
        switch phase {
        case .fresh: return .serve
        case .owned:
            if isUnconfirmed(lostReplySince: lostReplySince) { return .confirmFirst }
            guard now < validUntil else { return .renewFirst }
            if let since = unwrittenSince, now - since >= unwrittenLimit { return .writeFirst }
            return .serve
        case .inDoubt: return .confirmFirst
        case .handingOver, .released, .lost: return .moved
        case .deleted: return .gone
        }
    }

    /// Whether an answer computed from this copy may be sent at `now`: the lease holds by the
    /// clock and nothing sent since its last confirmation went unanswered. Checked again once
    /// the answer is computed, right before it is handed to the connection: the request may
    /// have waited (for its worker, for its body) since it was admitted.
    func mayAnswer(now: Int64, lostReplySince: Int64 = .min) -> Bool {
        switch phase {
        case .fresh: return true
        case .owned: return now < validUntil && !isUnconfirmed(lostReplySince: lostReplySince)
        case .inDoubt, .handingOver, .released, .lost, .deleted: return false
        }
    }

    /// A round trip sent at or after the last successful renewal got no answer.
    func isUnconfirmed(lostReplySince: Int64) -> Bool {
        guard everStored else { return false }
        return max(lostReplySince, lostReplySentAt) >= renewedAt
    }

    /// A request changed the session at `now`; answers whether the answer must wait for a write
    /// that reserves handles up to `highestHandle` (false: answer now, the change is written
    /// behind).
    mutating func changed(highestHandle: Int, at now: Int64) -> Bool {
        version += 1
        if unwrittenSince == nil { unwrittenSince = now }
        return highestHandle > handleLimit
    }

    /// A request read the session.
    mutating func read() { touched = true }

    var isDirty: Bool { version > storedVersion && (phase == .fresh || phase == .owned) }

    // MARK: Writes

    /// What one write sends.
    struct WriteTicket: Equatable {
        var epoch: Int64
        var version: UInt64
        /// The handle reserve to record (at least the current one).
        var handleLimit: Int
        /// The store may not have the session yet: create it if missing.
        var create: Bool
        var sentAt: Int64
        /// The write renews the lease (every `renewInterval`, and while unconfirmed): only then
        /// does its success extend how long the session may be answered from memory.
        var renews = true
    }

    /// Starts a write of the current state (a flush, a synchronous reserve, a release) at `now`,
    /// with `highestHandle` the highest handle assigned so far and `block` the reserve step;
    /// nil when there is nothing this instance may write.
    ///
    /// A session never stored gets its first reserve now, before the write is confirmed: if the
    /// write did reach the store (its reply was lost), handles answered meanwhile are covered.
    ///
    /// The write renews the lease too when a renewal is due (``needsRenewal(now:interval:lostReplySince:)``
    /// with `renewInterval`; 0: every write renews), or when the store may not have the session.
    mutating func beginWrite(now: Int64, highestHandle: Int, block: Int, renewInterval: Int64 = 0, lostReplySince: Int64 = .min)
        -> WriteTicket?
    {
        guard phase == .fresh || phase == .owned || phase == .handingOver else { return nil }
        var limit = everStored ? handleLimit : highestHandle + block
        if highestHandle + block / 2 > limit { limit = highestHandle + block }
        if !everStored { handleLimit = min(handleLimit, limit) }
        writeBegun = true
        let renews = !everStored || phase != .owned || needsRenewal(now: now, interval: renewInterval, lostReplySince: lostReplySince)
        return WriteTicket(epoch: epoch, version: version, handleLimit: limit, create: !everStored, sentAt: now, renews: renews)
    }

    /// A write (or renewal) the store accepted (or found superseded by a newer one). In doubt,
    /// it proves nothing: a release sent before may still reach the store after it.
    mutating func writeSucceeded(_ ticket: WriteTicket, lease: Int64) {
        guard ticket.epoch == epoch, phase != .inDoubt else { return }
        storedVersion = max(storedVersion, ticket.version)
        // Changes made while the write was under way are no older than its start.
        if let since = unwrittenSince { unwrittenSince = storedVersion >= version ? nil : max(since, ticket.sentAt) }
        everStored = true
        handleLimit = max(handleLimit == .max ? 0 : handleLimit, ticket.handleLimit)
        if phase == .fresh { phase = .owned }
        if ticket.renews && (phase == .owned || phase == .handingOver) {
            validUntil = max(validUntil == .max ? 0 : validUntil, ticket.sentAt + Self.validFor(lease))
            renewedAt = max(renewedAt, ticket.sentAt)
        }
    }

    /// The store answered that a newer owner has the session: this copy must not be used again.
    /// Answers whether that is news, that is whether this copy still counted as the owner (it was
    /// cut off). A write the writer had taken before this instance handed the session over reaches
    /// the store after the release and is refused too: the copy is released already, and the
    /// refusal is no news (the writer's writes and a handover race that way on every handover
    /// right after a change; an audit's cluster logged "cut off" for each).
    mutating func writeLost() -> Bool {
        switch phase {
        case .fresh, .owned, .handingOver, .inDoubt:
            phase = .lost
            return true
        case .released, .lost, .deleted:
            return false
        }
    }

    /// A write that was not sent (the store is known to be unreachable) or was refused: it stays
    /// dirty and is tried again; the lease is not extended.
    mutating func writeFailed() {}

    /// A write or renewal sent at `sentAt` got no answer: it may or may not have run. The lease
    /// is unconfirmed until a round trip sent later succeeds (it stays dirty and is tried again).
    mutating func replyLost(sentAt: Int64) {
        lostReplySentAt = max(lostReplySentAt, sentAt)
    }

    /// The store lost the session's record (it restarted without persistence) while this
    /// instance owns it: the state is written again.
    mutating func storeLostTheRecord() {
        guard phase == .owned else { return }
        version += 1
    }

    // MARK: Renewals

    /// Whether the lease should be renewed at `now` (every `interval`, and at once while it is
    /// unconfirmed), when no write renews it.
    func needsRenewal(now: Int64, interval: Int64, lostReplySince: Int64 = .min) -> Bool {
        phase == .owned && everStored && (now - renewedAt >= interval || isUnconfirmed(lostReplySince: lostReplySince))
    }

    /// Starts a renewal; answers the epoch and whether the store's expiry moves too (the session
    /// was read).
    mutating func beginRenewal() -> (epoch: Int64, touched: Bool) {
        defer { touched = false }
        return (epoch, touched)
    }

    mutating func renewalSucceeded(sentAt: Int64, lease: Int64) {
        guard phase == .owned else { return }
        validUntil = max(validUntil, sentAt + Self.validFor(lease))
        renewedAt = max(renewedAt, sentAt)
    }

    // MARK: Handover

    enum HandoverAction: Equatable {
        /// Write the state and release the lease in one step, then tell the asker.
        case release(WriteTicket)
        /// Not this instance's to give: tell the asker to look again.
        case notHere
    }

    /// Another instance asks for the session. In doubt it is not this instance's to give until
    /// the reclaim says so: the asker looks again (and takes it if the release did run).
    mutating func handoverRequested(now: Int64, highestHandle: Int, block: Int) -> HandoverAction {
        guard phase == .owned, everStored, let ticket = beginWrite(now: now, highestHandle: highestHandle, block: block) else {
            return .notHere
        }
        phase = .handingOver
        return .release(ticket)
    }

    /// Idle for `store.parkAfter`: released as if another instance had asked, so that its lease
    /// needs no more renewals; its next request takes it back from the store. Only with nothing
    /// left to write and the lease confirmed (anything else is the writer's to settle first).
    mutating func beginPark(now: Int64, highestHandle: Int, block: Int, lostReplySince: Int64 = .min) -> WriteTicket? {
        guard mayPark(lostReplySince: lostReplySince),
            case .release(let ticket) = handoverRequested(now: now, highestHandle: highestHandle, block: block)
        else { return nil }
        return ticket
    }

    /// Whether an idle session may be parked now (``beginPark(now:highestHandle:block:lostReplySince:)``):
    /// owned and stored, nothing left to write, its lease confirmed.
    func mayPark(lostReplySince: Int64) -> Bool {
        phase == .owned && everStored && !isDirty && !isUnconfirmed(lostReplySince: lostReplySince)
    }

    /// The release went through: another instance may take the session.
    mutating func releaseSucceeded(_ ticket: WriteTicket) {
        storedVersion = max(storedVersion, ticket.version)
        phase = .released
    }

    /// The release got no answer: it may have run in the store (the session is free, or
    /// another instance took it already) or not. In doubt until a reclaim says which.
    mutating func releaseFailed() {
        if phase == .handingOver { phase = .inDoubt }
    }

    /// The release was not sent (the store is known to be unreachable) or the store refused it
    /// without running it: the session stays here as it was.
    mutating func releaseNotSent() {
        if phase == .handingOver { phase = .owned }
    }

    // MARK: Reclaim

    /// In doubt: the epoch the release named, to reclaim the session from (the store takes it
    /// back for this instance at `epoch + 2`, whether the release ran or not, unless another
    /// instance took it meanwhile). Nil in any other phase.
    func reclaimEpoch() -> Int64? { phase == .inDoubt ? epoch : nil }

    /// The store gave the session back at `newEpoch` (a release still on its way is refused
    /// there: it names an older epoch); the reclaim was sent at `sentAt`.
    mutating func reclaimed(newEpoch: Int64, sentAt: Int64, lease: Int64) {
        guard phase == .inDoubt else { return }
        phase = .owned
        epoch = newEpoch
        validUntil = sentAt + Self.validFor(lease)
        renewedAt = sentAt
        lostReplySentAt = .min
    }

    /// Shutdown: every session is released (a fresh one is created and released at once). One in
    /// doubt is released again at its epoch: the store refuses that if the first release ran.
    mutating func beginShutdownRelease(now: Int64, highestHandle: Int, block: Int) -> WriteTicket? {
        if phase == .inDoubt { phase = .owned }
        guard phase == .owned || phase == .fresh, let ticket = beginWrite(now: now, highestHandle: highestHandle, block: block) else {
            return nil
        }
        phase = .handingOver
        return ticket
    }

    // MARK: Deletion

    /// Deleted (DELETE, idle expiry): answers the epoch to delete it at in the store, nil when
    /// the store cannot have it (never written) or another instance owns it now.
    mutating func delete() -> Int64? {
        let mine = phase == .owned || phase == .fresh || phase == .handingOver || phase == .inDoubt
        phase = .deleted
        return mine && (everStored || writeBegun) ? epoch : nil
    }
}
