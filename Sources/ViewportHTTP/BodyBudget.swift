import Synchronization

/// The server's shared budget of request-body bytes held in memory at once (`.collect` bodies and
/// WebSocket receive buffers, all connections together): bounds the memory that many concurrent
/// large uploads can pin, whatever their number.
final class BodyBudget: Sendable {
    /// Most bytes that may be reserved at once.
    let limit: Int
    /// Bytes reserved now.
    private let reserved = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes reserved now (for tests and metrics).
    var inUse: Int { reserved.load(ordering: .relaxed) }

    /// Takes `bytes` from the budget; false (and nothing taken) when that would pass the limit.
    func reserve(_ bytes: Int) -> Bool {
        let after = reserved.add(bytes, ordering: .relaxed).newValue
        if after > limit {
            reserved.subtract(bytes, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back what ``reserve(_:)`` took.
    func release(_ bytes: Int) {
        if bytes > 0 { reserved.subtract(bytes, ordering: .relaxed) }
    }
}
