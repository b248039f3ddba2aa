import Testing

@testable import ViewportService

/// The ownership state machine, without I/O: events in, actions out.
struct SessionOwnershipTests {
    static let lease: Int64 = 2_000_000_000
    static let block = 1024

    @Test func aFreshSessionIsServedFromMemoryAndBecomesOwnedWhenItsFirstWriteSucceeds() {
        var o = SessionOwnership.fresh()
        #expect(o.admit(now: 0) == .serve)
        #expect(o.handleLimit == .max)
        #expect(o.changed(highestHandle: 50_000, at: 0) == false, "never written: no reserve needed")
        #expect(o.isDirty)
        let ticket = o.beginWrite(now: 10, highestHandle: 12, block: Self.block)
        #expect(ticket == SessionOwnership.WriteTicket(epoch: 1, version: 2, handleLimit: 12 + 1024, create: true, sentAt: 10))
        // The reserve applies from the first write on, even before it is confirmed.
        #expect(o.handleLimit == 12 + 1024)
        #expect(o.phase == .fresh)
        o.writeSucceeded(ticket!, lease: Self.lease)
        #expect(o.phase == .owned && !o.isDirty && o.everStored)
        #expect(o.validUntil == 10 + Self.lease / 4 * 3)
        #expect(o.admit(now: 10 + Self.lease / 4 * 3 - 1) == .serve)
        #expect(o.admit(now: 10 + Self.lease / 4 * 3) == .renewFirst)
    }

    @Test func handlesBeyondTheReserveNeedAWriteBeforeTheAnswerAndTheWriterReservesAhead() {
        var o = SessionOwnership.acquired(epoch: 7, version: 40, handleLimit: 2048, sentAt: 0, lease: Self.lease)
        #expect(o.changed(highestHandle: 2048, at: 0) == false)
        #expect(o.changed(highestHandle: 2049, at: 0) == true)
        // Half a block left: the next write reserves another block.
        let ticket = o.beginWrite(now: 1, highestHandle: 1600, block: Self.block)
        #expect(ticket?.handleLimit == 1600 + 1024)
        #expect(ticket?.create == false && ticket?.epoch == 7)
        #expect(o.handleLimit == 2048, "not before the store confirms")
        o.writeSucceeded(ticket!, lease: Self.lease)
        #expect(o.handleLimit == 2624)
        let quiet = o.beginWrite(now: 2, highestHandle: 1700, block: Self.block)
        #expect(quiet?.handleLimit == 2624, "enough left: no new block")
    }

    @Test func aWriteThatFailsStaysDirtyAndALostOneEndsTheCopy() {
        var o = SessionOwnership.acquired(epoch: 3, version: 5, handleLimit: 100, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 10, at: 0)
        let ticket = o.beginWrite(now: 5, highestHandle: 10, block: Self.block)!
        o.writeFailed()
        #expect(o.isDirty && o.phase == .owned)
        #expect(o.validUntil == Self.lease / 4 * 3, "a failed write does not extend the lease")
        _ = o.changed(highestHandle: 10, at: 0)
        // A write of an older version confirmed later leaves the newer change dirty.
        o.writeSucceeded(ticket, lease: Self.lease)
        #expect(o.isDirty)
        let cutOff = o.writeLost()
        #expect(cutOff, "an owned copy refused by the store was cut off")
        #expect(o.phase == .lost && o.admit(now: 6) == .moved && !o.isDirty)
        let again = o.writeLost()
        #expect(!again, "a second refusal is no news")
        #expect(o.beginWrite(now: 7, highestHandle: 10, block: Self.block) == nil)
    }

    @Test func aHandoverReleasesAnOwnedSessionAndNothingElse() {
        var fresh = SessionOwnership.fresh()
        #expect(fresh.handoverRequested(now: 0, highestHandle: 3, block: Self.block) == .notHere)
        var o = SessionOwnership.acquired(epoch: 9, version: 12, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 30, at: 0)
        guard case .release(let ticket) = o.handoverRequested(now: 1, highestHandle: 30, block: Self.block) else {
            Issue.record("an owned session is handed over")
            return
        }
        #expect(ticket.version == 13 && ticket.epoch == 9)
        #expect(o.phase == .handingOver && o.admit(now: 2) == .moved)
        o.releaseNotSent()
        #expect(o.phase == .owned, "a release never sent leaves the session here")
        guard case .release(let again) = o.handoverRequested(now: 3, highestHandle: 30, block: Self.block) else {
            Issue.record("asked again")
            return
        }
        o.releaseSucceeded(again)
        #expect(o.phase == .released && o.admit(now: 4) == .moved && !o.isDirty)
        #expect(o.handoverRequested(now: 5, highestHandle: 30, block: Self.block) == .notHere)
    }

    /// Parking releases an idle session only when nothing waits to be written and its lease is
    /// confirmed; its outcomes are a handover's.
    @Test func onlyACleanConfirmedOwnedSessionIsParked() {
        var fresh = SessionOwnership.fresh()
        #expect(fresh.beginPark(now: 0, highestHandle: 3, block: Self.block) == nil, "never stored: nothing to take it back from")
        var o = SessionOwnership.acquired(epoch: 9, version: 12, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 30, at: 0)
        #expect(o.beginPark(now: 1, highestHandle: 30, block: Self.block) == nil, "a change waits to be written")
        #expect(o.phase == .owned)
        let write = o.beginWrite(now: 2, highestHandle: 30, block: Self.block)!
        o.writeSucceeded(write, lease: Self.lease)
        #expect(o.beginPark(now: 3, highestHandle: 30, block: Self.block, lostReplySince: 2) == nil, "a round trip since the last renewal got no answer")
        guard let ticket = o.beginPark(now: 3, highestHandle: 30, block: Self.block, lostReplySince: 1) else {
            Issue.record("a clean, confirmed session is parked")
            return
        }
        #expect(ticket.version == 13 && ticket.epoch == 9)
        #expect(o.phase == .handingOver && o.admit(now: 4) == .moved, "a request meanwhile goes through the store")
        #expect(o.releaseAnswered(.unsent, ticket) == .releaseNotRun && o.phase == .owned)
        let again = o.beginPark(now: 5, highestHandle: 30, block: Self.block)!
        #expect(o.releaseAnswered(.ok, again) == .handedOver && o.phase == .released)
        #expect(o.beginPark(now: 6, highestHandle: 30, block: Self.block) == nil)
    }

    /// The writer took a ticket, then the session was handed over before its write reached the
    /// store: the store refuses that write, and the released copy was not cut off.
    @Test func aWriteRefusedAfterAHandoverIsNoNews() {
        var o = SessionOwnership.acquired(epoch: 4, version: 2, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 5, at: 0)
        let behind = o.beginWrite(now: 1, highestHandle: 5, block: Self.block)
        #expect(behind != nil)
        guard case .release(let ticket) = o.handoverRequested(now: 2, highestHandle: 5, block: Self.block) else {
            Issue.record("an owned session is handed over")
            return
        }
        o.releaseSucceeded(ticket)
        let news = o.writeLost()
        #expect(!news, "the writer's refused write is no news")
        #expect(o.phase == .released && o.admit(now: 3) == .moved)
    }

    /// An owner whose writes do not get through (the store refuses them, or is away) answers
    /// changes from memory only until the oldest unwritten one is `limit` old; then it writes
    /// first. An audit saw an owner answer ~90 updates its writes could not store (renewals got
    /// through, writes were refused OOM) before another instance took the session.
    @Test func changesLeftUnwrittenTooLongAreWrittenBeforeMore() {
        let limit: Int64 = 600
        var o = SessionOwnership.acquired(epoch: 2, version: 5, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        #expect(o.admit(now: 10_000, unwrittenLimit: limit) == .serve, "nothing unwritten")
        _ = o.changed(highestHandle: 3, at: 100)
        _ = o.changed(highestHandle: 3, at: 400)
        #expect(o.unwrittenSince == 100, "the oldest change counts")
        #expect(o.admit(now: 699, unwrittenLimit: limit) == .serve)
        #expect(o.admit(now: 700, unwrittenLimit: limit) == .writeFirst)
        // A failed write changes nothing; a write of everything clears it.
        let first = o.beginWrite(now: 650, highestHandle: 3, block: Self.block)!
        o.writeFailed()
        #expect(o.admit(now: 700, unwrittenLimit: limit) == .writeFirst)
        // A change while a write is under way: still unwritten after it, counted from its start.
        let second = o.beginWrite(now: 710, highestHandle: 3, block: Self.block)!
        _ = o.changed(highestHandle: 3, at: 720)
        o.writeSucceeded(second, lease: Self.lease)
        #expect(o.unwrittenSince == 710 && o.isDirty)
        #expect(o.admit(now: 1_309, unwrittenLimit: limit) == .serve)
        #expect(o.admit(now: 1_310, unwrittenLimit: limit) == .writeFirst)
        o.writeSucceeded(first, lease: Self.lease)  // an older write confirmed late
        #expect(o.unwrittenSince == 710)
        let third = o.beginWrite(now: 1_320, highestHandle: 3, block: Self.block)!
        o.writeSucceeded(third, lease: Self.lease)
        #expect(o.unwrittenSince == nil && !o.isDirty)
        #expect(o.admit(now: 5_000, unwrittenLimit: limit) == .serve)
        // The lease comes first.
        _ = o.changed(highestHandle: 3, at: 0)
        #expect(o.admit(now: 1_320 + Self.lease, unwrittenLimit: limit) == .renewFirst)
    }

    @Test func renewalsAreDueEveryIntervalAndExtendTheLease() {
        var o = SessionOwnership.acquired(epoch: 1, version: 1, handleLimit: 10, sentAt: 100, lease: Self.lease)
        #expect(!o.needsRenewal(now: 100 + 499, interval: 500))
        #expect(o.needsRenewal(now: 100 + 500, interval: 500))
        o.read()
        let (epoch, touched) = o.beginRenewal()
        #expect(epoch == 1 && touched)
        #expect(o.beginRenewal().touched == false)
        o.renewalSucceeded(sentAt: 600, lease: Self.lease)
        #expect(o.validUntil == 600 + Self.lease / 4 * 3)
        #expect(!o.needsRenewal(now: 700, interval: 500))
    }

    @Test func shutdownReleasesFreshAndOwnedSessionsAndDeletionNamesTheEpochOnlyWhenStored() {
        var fresh = SessionOwnership.fresh()
        let create = fresh.beginShutdownRelease(now: 0, highestHandle: 4, block: Self.block)
        #expect(create?.create == true && fresh.phase == .handingOver)
        var neverWritten = SessionOwnership.fresh()
        #expect(neverWritten.delete() == nil)
        var owned = SessionOwnership.acquired(epoch: 4, version: 2, handleLimit: 10, sentAt: 0, lease: Self.lease)
        #expect(owned.delete() == 4)
        #expect(owned.phase == .deleted && owned.admit(now: 0) == .gone)
        var released = SessionOwnership.acquired(epoch: 4, version: 2, handleLimit: 10, sentAt: 0, lease: Self.lease)
        if case .release(let ticket) = released.handoverRequested(now: 0, highestHandle: 1, block: Self.block) { released.releaseSucceeded(ticket) }
        #expect(released.delete() == nil, "another instance owns it: not this one's to delete")
    }

    // MARK: Ownership in doubt

    /// A release whose reply was lost may have run: the session is answered by nobody here
    /// until a reclaim says whether it did (an audit: the owner took it back as it was and
    /// answered updates while the store showed it free, then owned by another instance).
    @Test func aReleaseWithoutAnAnswerPutsTheSessionInDoubtUntilItIsReclaimed() {
        var o = SessionOwnership.acquired(epoch: 5, version: 8, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 20, at: 1)
        guard case .release(let ticket) = o.handoverRequested(now: 2, highestHandle: 20, block: Self.block) else {
            Issue.record("an owned session is handed over")
            return
        }
        o.releaseFailed()
        #expect(o.phase == .inDoubt)
        #expect(o.admit(now: 3) == .confirmFirst, "the lease still holds by the clock, but the release may have run")
        #expect(!o.mayAnswer(now: 3))
        #expect(!o.isDirty, "nothing is written at the old epoch: a late release could follow it")
        #expect(o.beginWrite(now: 3, highestHandle: 20, block: Self.block) == nil)
        #expect(!o.needsRenewal(now: Self.lease, interval: 1), "a renewal proves nothing: the release may still land after it")
        #expect(o.handoverRequested(now: 3, highestHandle: 20, block: Self.block) == .notHere)
        // A write taken before the release and confirmed after it proves nothing either.
        o.writeSucceeded(ticket, lease: Self.lease)
        #expect(o.phase == .inDoubt)
        #expect(o.reclaimEpoch() == 5)
        o.reclaimed(newEpoch: 7, sentAt: 100, lease: Self.lease)
        #expect(o.phase == .owned && o.epoch == 7)
        #expect(o.validUntil == 100 + Self.lease / 4 * 3)
        #expect(o.admit(now: 101) == .serve && o.mayAnswer(now: 101))
        #expect(o.isDirty, "the change is written at the new epoch")
        #expect(o.beginWrite(now: 102, highestHandle: 20, block: Self.block)?.epoch == 7)
        #expect(o.reclaimEpoch() == nil)
    }

    @Test func aReclaimThatFindsAnotherOwnerEndsTheCopy() {
        var o = SessionOwnership.acquired(epoch: 5, version: 8, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        guard case .release = o.handoverRequested(now: 2, highestHandle: 20, block: Self.block) else { return }
        o.releaseFailed()
        let news = o.writeLost()
        #expect(news, "the copy counted as this instance's")
        #expect(o.phase == .lost && o.admit(now: 3) == .moved && o.reclaimEpoch() == nil)
        // A reclaim answer that comes after the copy was given up changes nothing.
        o.reclaimed(newEpoch: 7, sentAt: 4, lease: Self.lease)
        #expect(o.phase == .lost)
    }

    @Test func shutdownAndDeletionOfASessionInDoubtNameItsEpoch() {
        var o = SessionOwnership.acquired(epoch: 5, version: 8, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        guard case .release = o.handoverRequested(now: 2, highestHandle: 20, block: Self.block) else { return }
        o.releaseFailed()
        // Released again at the same epoch: the store refuses it if the first release ran.
        let ticket = o.beginShutdownRelease(now: 3, highestHandle: 20, block: Self.block)
        #expect(ticket?.epoch == 5 && o.phase == .handingOver)
        var deleted = SessionOwnership.acquired(epoch: 5, version: 8, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        guard case .release = deleted.handoverRequested(now: 2, highestHandle: 20, block: Self.block) else { return }
        deleted.releaseFailed()
        #expect(deleted.delete() == 5)
    }

    /// A round trip that got no answer (this session's or any other's) was sent after the last
    /// renewal: the store may be cut off, and what this owner answers from then on may never be
    /// written while another instance takes the session after the lease. Nothing is answered
    /// until a renewal sent after it succeeds.
    @Test func aLostReplyAfterTheLastRenewalStopsAnswersUntilALaterOneSucceeds() {
        var o = SessionOwnership.acquired(epoch: 2, version: 3, handleLimit: 1024, sentAt: 100, lease: Self.lease)
        #expect(o.admit(now: 200, lostReplySince: 99) == .serve, "lost before the renewal: confirmed since")
        #expect(o.admit(now: 200, lostReplySince: 100) == .confirmFirst)
        #expect(o.admit(now: 200, lostReplySince: 150) == .confirmFirst)
        #expect(!o.mayAnswer(now: 200, lostReplySince: 150))
        #expect(o.needsRenewal(now: 101, interval: Self.lease, lostReplySince: 150), "renewed in the writer's next round")
        // The lease comes back with a renewal sent after the lost reply.
        o.renewalSucceeded(sentAt: 140, lease: Self.lease)
        #expect(o.admit(now: 200, lostReplySince: 150) == .confirmFirst, "sent before the lost reply")
        o.renewalSucceeded(sentAt: 160, lease: Self.lease)
        #expect(o.admit(now: 200, lostReplySince: 150) == .serve)
        #expect(!o.needsRenewal(now: 200, interval: Self.lease, lostReplySince: 150))
        // This session's own write without an answer, with no other lost reply.
        _ = o.changed(highestHandle: 3, at: 210)
        let ticket = o.beginWrite(now: 220, highestHandle: 3, block: Self.block)!
        o.replyLost(sentAt: ticket.sentAt)
        #expect(o.admit(now: 230) == .confirmFirst && o.isDirty)
        #expect(o.needsRenewal(now: 230, interval: Self.lease))
        let retry = o.beginWrite(now: 240, highestHandle: 3, block: Self.block)!
        o.writeSucceeded(retry, lease: Self.lease)
        #expect(o.admit(now: 250) == .serve && !o.isDirty)
        // A write that was never sent (the pool fails fast) changes nothing.
        o.writeFailed()
        #expect(o.admit(now: 260) == .serve)
    }

    /// The answer is checked again once computed: the lease must hold when it is sent.
    @Test func anAnswerIsSentOnlyWhileTheLeaseHolds() {
        let o = SessionOwnership.acquired(epoch: 2, version: 3, handleLimit: 1024, sentAt: 0, lease: Self.lease)
        let end = Self.lease / 4 * 3
        #expect(o.admit(now: end - 1) == .serve)
        #expect(o.mayAnswer(now: end - 1))
        #expect(!o.mayAnswer(now: end), "admitted just before the end, computed after it: not sent")
        #expect(SessionOwnership.fresh().mayAnswer(now: .max - 1, lostReplySince: .max - 1), "never stored: nobody else can have it")
        #expect(SessionOwnership.local.mayAnswer(now: 5, lostReplySince: 10), "no store")
    }

    @Test func aWriteRenewsTheLeaseOnlyWhenARenewalIsDueAndOnlyARenewingOneExtendsIt() {
        let interval = Self.lease / 8
        var o = SessionOwnership.acquired(epoch: 4, version: 10, handleLimit: 2048, sentAt: 0, lease: Self.lease)
        _ = o.changed(highestHandle: 10, at: 1)
        // Renewed at 0: a write soon after does not renew, and its success does not extend the lease.
        let early = o.beginWrite(now: interval - 1, highestHandle: 10, block: Self.block, renewInterval: interval)
        #expect(early?.renews == false)
        o.writeSucceeded(early!, lease: Self.lease)
        #expect(!o.isDirty)
        #expect(o.validUntil == Self.lease / 4 * 3, "a write that renewed nothing does not extend the lease")
        #expect(o.admit(now: Self.lease / 4 * 3) == .renewFirst)
        // Due: the write renews, and its success extends the lease from when it was sent.
        _ = o.changed(highestHandle: 10, at: interval)
        let due = o.beginWrite(now: interval, highestHandle: 10, block: Self.block, renewInterval: interval)
        #expect(due?.renews == true)
        o.writeSucceeded(due!, lease: Self.lease)
        #expect(o.validUntil == interval + Self.lease / 4 * 3)
        // A round trip without an answer since: the next write renews at once (it confirms the lease).
        _ = o.changed(highestHandle: 10, at: interval + 2)
        let unconfirmed = o.beginWrite(now: interval + 2, highestHandle: 10, block: Self.block, renewInterval: interval, lostReplySince: interval + 1)
        #expect(unconfirmed?.renews == true)
        // Never stored: the first write makes the record with a lease, whatever the interval.
        var fresh = SessionOwnership.fresh()
        #expect(fresh.beginWrite(now: 0, highestHandle: 0, block: Self.block, renewInterval: .max)?.renews == true)
        // Without an interval (the default) every write renews, as handovers and shutdown expect.
        #expect(o.beginWrite(now: interval + 3, highestHandle: 10, block: Self.block)?.renews == true)
    }
}
