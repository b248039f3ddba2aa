/// A session's sequence numbers: the last applied `seq` (0 is the opening plan) and its plan,
/// answered again on a retry.
///
/// Updates, layout changes and edits check the `seq` a client sent here: equal to the last, the
/// last plan again; the next one, go on; anything else, a conflict. A resync restarts it at the
/// client's `seq`.
struct UpdateSequence: Sendable {
    /// The last applied sequence number.
    private(set) var seq: UInt64 = 0
    /// The plan of `seq` when it is not bare (see `Plan.isBare`); nil when it is
    /// `Plan(seq: bareSeq, offset: bareOffset)`. Most updates move nothing, and recording their
    /// plan without its four empty lists saves a plan's copy and release on each: ~20 % of a small
    /// step's time was retains and releases (`perf`, `viewport-bench 100000 small`).
    private var recorded: Plan?
    private var bareSeq: UInt64 = 0
    private var bareOffset = Point.zero

    /// The plan of `seq`.
    var lastPlan: Plan { recorded ?? Plan(seq: bareSeq, offset: bareOffset) }

    init(seq: UInt64 = 0, lastPlan: Plan) {
        self.seq = seq
        record(lastPlan)
    }

    /// The last plan, when `sent` asks for it again (a retry); nil otherwise (nil for no `seq`).
    @inline(__always)
    func retry(_ sent: UInt64?) -> Plan? { sent == seq ? lastPlan : nil }

    /// Refuses a `sent` that is neither absent nor the next number.
    @inline(__always)
    func checkNext(_ sent: UInt64?) throws(SessionError) {
        if let sent, sent != seq &+ 1 { throw .sequenceConflict(current: seq, sent: sent) }
    }

    /// The last plan for a retry, nil to go on with the next number; throws on a conflict.
    @inline(__always)
    func check(_ sent: UInt64?) throws(SessionError) -> Plan? {
        if let plan = retry(sent) { return plan }
        try checkNext(sent)
        return nil
    }

    /// Takes the next sequence number.
    @inline(__always)
    mutating func advance() { seq += 1 }

    /// Records the plan of `seq`, the answer to a retry.
    @inline(__always)
    mutating func record(_ plan: Plan) {
        if plan.isBare {
            if recorded != nil { recorded = nil }
            bareSeq = plan.seq
            bareOffset = plan.offset
        } else {
            recorded = plan
        }
    }

    /// Starts again at `seq` with `plan` as its plan (a resync).
    mutating func restart(at seq: UInt64, plan: Plan) {
        self.seq = seq
        record(plan)
    }
}
