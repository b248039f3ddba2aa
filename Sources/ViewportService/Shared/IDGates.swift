import Synchronization

/// One lock per id, made on demand and dropped when unused: the work a shared store does for one
/// session (take it over, fetch a layout, hand it over) runs one at a time per id, while other
/// ids proceed.
final class IDGates: Sendable {
    private final class Gate: Sendable {
        let lock = Mutex<Void>(())
    }

    /// Each gate and how many threads hold or wait for it.
    private let gates = Mutex<[String: (gate: Gate, users: Int)]>([:])

    func withLock<R, E: Error>(_ id: String, _ body: () throws(E) -> R) throws(E) -> R {
        let gate = gates.withLock { gates in
            let entry = gates[id] ?? (Gate(), 0)
            gates[id] = (entry.gate, entry.users + 1)
            return entry.gate
        }
        defer {
            gates.withLock { gates in
                guard let entry = gates[id] else { return }
                gates[id] = entry.users > 1 ? (entry.gate, entry.users - 1) : nil
            }
        }
        let result: Result<R, E> = gate.lock.withLock { _ in
            do throws(E) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// ``withLock(_:_:)`` for several ids at once, taken in order. Only one thread takes more
    /// than one gate (the writer, parking sessions), so no two wait for each other's.
    func withLocks<R>(_ ids: ArraySlice<String>, _ body: () -> R) -> R {
        guard let first = ids.first else { return body() }
        return withLock(first) { withLocks(ids.dropFirst(), body) }
    }
}
