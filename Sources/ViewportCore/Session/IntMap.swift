/// A hash map from non-negative `Int` keys to `Int` values: a session's item → view tables.
///
/// Open addressing with linear probing in one array (value semantics by copy-on-write), at most
/// half full, deletion by backward shift (no tombstones, so probes stay short however keys churn).
/// Keys are mixed with a per-process random seed before the murmur3 finalizer, so a client that
/// chooses item positions cannot predict which keys collide. It replaced `Dictionary<Int, Int>`
/// on the update path, where SipHash was ~8 % of a request's CPU (`viewport-bench 10 service-load`).
package struct IntMap: Sendable, Sequence {
    package struct Slot: Sendable {
        /// -1 when empty.
        package var key: Int
        package var value: Int
    }

    private var slots: [Slot] = []
    /// Number of keys.
    package private(set) var count = 0

    private static let seed = UInt64.random(in: .min ... .max)

    package init() {}

    package var isEmpty: Bool { count == 0 }

    /// - Complexity: O(1) expected.
    @inline(__always)
    private func home(of key: Int) -> Int {
        var h = UInt64(bitPattern: Int64(key)) ^ Self.seed
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h) & (slots.count - 1)
    }

    /// The slot holding `key`, or nil.
    @inline(__always)
    private func find(_ key: Int) -> Int? {
        guard count > 0 else { return nil }
        let mask = slots.count - 1
        var i = home(of: key)
        while true {
            let k = slots[i].key
            if k == key { return i }
            if k < 0 { return nil }
            i = (i + 1) & mask
        }
    }

    /// The value of `key`; setting nil removes it.
    /// - Complexity: O(1) expected.
    package subscript(key: Int) -> Int? {
        get { find(key).map { slots[$0].value } }
        set {
            if let newValue { insert(key, newValue) } else { removeValue(forKey: key) }
        }
    }

    /// - Complexity: O(1) expected, amortized.
    private mutating func insert(_ key: Int, _ value: Int) {
        precondition(key >= 0, "IntMap keys are non-negative")
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var i = home(of: key)
        while true {
            let k = slots[i].key
            if k == key {
                slots[i].value = value
                return
            }
            if k < 0 {
                slots[i] = Slot(key: key, value: value)
                count += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Removes `key` and answers its value, if it was there.
    /// - Complexity: O(1) expected.
    @discardableResult
    package mutating func removeValue(forKey key: Int) -> Int? {
        guard var hole = find(key) else { return nil }
        let removed = slots[hole].value
        // Backward shift: move later entries of the probe run into the hole when their home
        // position allows it, so no lookup ever has to skip a deleted slot.
        let mask = slots.count - 1
        var i = hole
        while true {
            i = (i + 1) & mask
            let k = slots[i].key
            if k < 0 { break }
            let h = home(of: k)
            // Entry at i may move to hole if its home is not within (hole, i] (cyclically).
            let inRange = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i)
            if !inRange {
                slots[hole] = slots[i]
                hole = i
            }
        }
        slots[hole].key = -1
        count -= 1
        return removed
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(key: -1, value: 0), count: Swift.max(16, old.count * 2))
        count = 0
        for slot in old where slot.key >= 0 { insert(slot.key, slot.value) }
    }

    /// The keys, in no particular order.
    package var keys: [Int] { slots.compactMap { $0.key >= 0 ? $0.key : nil } }

    package func makeIterator() -> some IteratorProtocol<(key: Int, value: Int)> {
        slots.lazy.filter { $0.key >= 0 }.map { (key: $0.key, value: $0.value) }.makeIterator()
    }
}
