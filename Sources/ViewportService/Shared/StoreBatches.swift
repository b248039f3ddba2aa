/// How a round's writes and renewals are cut into pipelines of at most `limit` commands: the
/// writes first, the renewals filling what the writes leave of each pipeline.
struct StoreBatches: Sequence, IteratorProtocol {
    /// The writes and the renewals one pipeline sends (index ranges into the round's lists).
    struct Batch: Equatable {
        var writes: Range<Int>
        var renewals: Range<Int>
        /// The round's first pipeline (the writer's heartbeat goes with it).
        var first: Bool
    }

    private let writes: Int
    private let renewals: Int
    private let limit: Int
    private var nextWrite = 0
    private var nextRenewal = 0
    /// With `atLeastOne`, one batch even when there is nothing to send (for the heartbeat).
    private var owesOne: Bool

    /// - Complexity: O(1); iterating is O(batches).
    init(writes: Int, renewals: Int = 0, limit: Int, atLeastOne: Bool = false) {
        precondition(limit > 0, "a pipeline holds at least one command")
        self.writes = writes
        self.renewals = renewals
        self.limit = limit
        self.owesOne = atLeastOne
    }

    mutating func next() -> Batch? {
        let first = nextWrite == 0 && nextRenewal == 0
        guard nextWrite < writes || nextRenewal < renewals || (first && owesOne) else { return nil }
        owesOne = false
        let writeEnd = Swift.min(writes, nextWrite + limit)
        let renewalEnd = Swift.min(renewals, nextRenewal + limit - (writeEnd - nextWrite))
        defer {
            nextWrite = writeEnd
            nextRenewal = renewalEnd
        }
        return Batch(writes: nextWrite..<writeEnd, renewals: nextRenewal..<renewalEnd, first: first)
    }
}
