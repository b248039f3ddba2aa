import Synchronization

/// A flag that threads read and set, held by reference: the handover side owns its listener's
/// flags, and the store it belongs to shows them (an `Atomic` can only be held in place).
/// Relaxed where asked, sequentially consistent otherwise.
final class AtomicFlag: Sendable {
    private let value: Atomic<Bool>

    init(_ value: Bool) {
        self.value = Atomic(value)
    }

    func load(ordering: AtomicLoadOrdering) -> Bool {
        ordering == .relaxed ? value.load(ordering: .relaxed) : value.load(ordering: .sequentiallyConsistent)
    }

    func store(_ newValue: Bool, ordering: AtomicStoreOrdering) {
        if ordering == .relaxed {
            value.store(newValue, ordering: .relaxed)
        } else {
            value.store(newValue, ordering: .sequentiallyConsistent)
        }
    }

    func exchange(_ newValue: Bool, ordering: AtomicUpdateOrdering) -> Bool {
        ordering == .relaxed ? value.exchange(newValue, ordering: .relaxed) : value.exchange(newValue, ordering: .sequentiallyConsistent)
    }
}
