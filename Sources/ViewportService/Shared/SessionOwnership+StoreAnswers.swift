/// The store's answers to this instance's round trips for a session, as events of the ownership
/// state machine: each moves the ownership on and answers what the caller must do about it.
/// Every write, renewal, release and reclaim goes through one of these, so each rule of what an
/// answer means is written once.
extension SessionOwnership {
    /// What an answer of the store leaves the caller to do.
    enum AnswerAction: Equatable {
        /// The store took it (the lease is extended when the round trip renewed it).
        case confirmed
        /// The store does not have the session's current state (it lost the record, or a reclaim
        /// took back a session with unwritten changes): write it again.
        case writeAgain
        /// No answer (it may have run: the lease is unconfirmed), or not run (not sent, or
        /// refused): nothing changed here; the session is tried again.
        case unconfirmed
        /// Another instance owns the session: this copy must not be used again. `news` when
        /// this copy still counted as the owner (it was cut off): drop it.
        case lost(news: Bool)
        /// Released: another instance may take the session; the copy here goes.
        case handedOver
        /// The release got no answer: it may have run; nothing is answered until a reclaim says.
        case releaseInDoubt
        /// The release was not run: the session stays here as it was.
        case releaseNotRun
    }

    /// The store answered `outcome` to a write of `ticket` (not a release).
    mutating func writeAnswered(_ outcome: RedisStateStore.Outcome, _ ticket: WriteTicket, lease: Int64) -> AnswerAction {
        switch outcome {
        case .ok, .missing, .layoutMissing:
            writeSucceeded(ticket, lease: lease)
            return .confirmed
        case .lost:
            return .lost(news: writeLost())
        case .failed:
            replyLost(sentAt: ticket.sentAt)
            return .unconfirmed
        case .unsent:
            writeFailed()
            return .unconfirmed
        }
    }

    /// The store answered `outcome` to a renewal of the lease sent at `sentAt`.
    mutating func renewalAnswered(_ outcome: RedisStateStore.Outcome, sentAt: Int64, lease: Int64) -> AnswerAction {
        switch outcome {
        case .ok, .layoutMissing:
            renewalSucceeded(sentAt: sentAt, lease: lease)
            return .confirmed
        case .missing:
            storeLostTheRecord()
            return .writeAgain
        case .lost:
            return .lost(news: writeLost())
        case .failed:
            replyLost(sentAt: sentAt)
            return .unconfirmed
        case .unsent:
            return .unconfirmed
        }
    }

    /// The store answered `outcome` to a write that releases the session (a handover, shutdown).
    mutating func releaseAnswered(_ outcome: RedisStateStore.Outcome, _ ticket: WriteTicket) -> AnswerAction {
        switch outcome {
        case .ok, .missing, .layoutMissing:
            releaseSucceeded(ticket)
            return .handedOver
        case .lost:
            return .lost(news: writeLost())
        case .failed:
            releaseFailed()
            return .releaseInDoubt
        case .unsent:
            releaseNotSent()
            return .releaseNotRun
        }
    }

    /// The store answered `outcome` to a reclaim of the session from the release at `epoch`,
    /// sent at `sentAt`. An answer for another epoch, or once the session is no longer in doubt,
    /// is stale and changes nothing.
    mutating func reclaimAnswered(_ outcome: RedisStateStore.Reclaim, epoch asked: Int64, sentAt: Int64, lease: Int64) -> AnswerAction {
        guard reclaimEpoch() == asked else { return .unconfirmed }
        switch outcome {
        case .ok(let newEpoch):
            reclaimed(newEpoch: newEpoch, sentAt: sentAt, lease: lease)
            return isDirty ? .writeAgain : .confirmed
        case .missing:
            // Taken back at the epoch a reclaim gives, and written again.
            reclaimed(newEpoch: asked + 2, sentAt: sentAt, lease: lease)
            storeLostTheRecord()
            return .writeAgain
        case .lost:
            return .lost(news: writeLost())
        case .failed:
            return .unconfirmed
        }
    }
}
