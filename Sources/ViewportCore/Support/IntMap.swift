/// A hash map from non-negative `Int` keys to `Int` values: a session's item → view tables.
///
/// Open addressing with linear probing in one array (value semantics by copy-on-write), at most
/// half full, deletion by backward shift (no tombstones, so probes stay short however keys churn).
/// Keys are mixed with a per-process random seed before the murmur3 finalizer, so a client that
/// chooses item positions cannot predict which keys collide. It replaced `Dictionary<Int, Int>`
/// on the update path, where SipHash was ~8 % of a request's CPU (`viewport-bench 10 service-load`).
///
/// Slots are 8 bytes (a 32-bit key and a 32-bit value in one word) while every key is below
/// 2^32 − 1 and every value in 0..<2^32, as item positions and view handles are in practice; the
/// first pair that does not fit moves the map to 16-byte slots for good. A session holds two of
/// these maps, and the narrow slots take ~380 bytes off a session with ~15 items shown and a few
/// views pooled (`viewport-bench 0 session-memory`).
package struct IntMap: Sendable, Sequence {
    package struct Slot: Sendable {
        /// -1 when empty.
        package var key: Int
        package var value: Int
    }

    /// Narrow slots: key in the high half, value in the low half; all ones in the high half is
    /// empty. Empty once the map is wide.
    private var narrow: [UInt64] = []
    /// Wide slots, empty while the map is narrow (a wide table is never empty: 16 slots at least).
    private var wide: [Slot] = []
    /// Number of keys.
    package private(set) var count = 0

    private static let processSeed = UInt64.random(in: .min ... .max)
    /// The process's seed, copied into each map: reading the static on every probe went through
    /// its lazy initializer's `swift_once` (1.7 % of a jump in `perf`).
    private let seed = IntMap.processSeed
    private static let emptyNarrow = UInt64.max
    private static let minimumCapacity = 16

    package init() {}

    package var isEmpty: Bool { count == 0 }

    @inline(__always)
    private var isWide: Bool { !wide.isEmpty }

    @inline(__always)
    private static func fitsNarrow(_ key: Int, _ value: Int) -> Bool {
        UInt(bitPattern: key) < 0xffff_ffff && UInt(bitPattern: value) <= 0xffff_ffff
    }

    /// - Complexity: O(1).
    @inline(__always)
    private static func home(of key: Int, mask: Int, seed: UInt64) -> Int {
        var h = UInt64(bitPattern: Int64(key)) ^ seed
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h) & mask
    }

    @inline(__always)
    fileprivate static func narrowKey(_ slot: UInt64) -> Int {
        let k = slot >> 32
        return k == 0xffff_ffff ? -1 : Int(k)
    }

    /// The slot index holding `key` in `slots` (either width: `keyOf` reads a slot's key, -1
    /// for empty), or nil.
    /// - Complexity: O(1) expected.
    @inline(__always)
    private static func find<S>(_ key: Int, in slots: [S], seed: UInt64, keyOf: (S) -> Int) -> Int? {
        let mask = slots.count - 1
        var i = home(of: key, mask: mask, seed: seed)
        while true {
            let k = keyOf(slots[i])
            if k == key { return i }
            if k < 0 { return nil }
            i = (i + 1) & mask
        }
    }

    /// The value of `key`; setting nil removes it.
    /// - Complexity: O(1) expected.
    package subscript(key: Int) -> Int? {
        @inline(__always) get {
            guard count > 0 else { return nil }
            if isWide {
                return Self.find(key, in: wide, seed: seed, keyOf: { $0.key }).map { wide[$0].value }
            }
            guard UInt(bitPattern: key) < 0xffff_ffff else { return nil }
            return Self.find(key, in: narrow, seed: seed, keyOf: Self.narrowKey).map { Int(narrow[$0] & 0xffff_ffff) }
        }
        set {
            if let newValue { insert(key, newValue) } else { removeValue(forKey: key) }
        }
    }

    /// - Complexity: O(1) expected, amortized.
    private mutating func insert(_ key: Int, _ value: Int) {
        precondition(key >= 0, "IntMap keys are non-negative")
        if !isWide, !Self.fitsNarrow(key, value) { widen() }
        if isWide {
            if (count + 1) * 2 > wide.count { wide = Self.rehashed(wide, capacity: wide.count * 2, seed: seed, empty: Slot(key: -1, value: 0), keyOf: { $0.key }) }
            let mask = wide.count - 1
            var i = Self.home(of: key, mask: mask, seed: seed)
            while true {
                let k = wide[i].key
                if k == key {
                    wide[i].value = value
                    return
                }
                if k < 0 {
                    wide[i] = Slot(key: key, value: value)
                    count += 1
                    return
                }
                i = (i + 1) & mask
            }
        }
        if (count + 1) * 2 > narrow.count { narrow = Self.rehashed(narrow, capacity: Swift.max(Self.minimumCapacity, narrow.count * 2), seed: seed, empty: Self.emptyNarrow, keyOf: Self.narrowKey) }
        let mask = narrow.count - 1
        let packed = UInt64(key) << 32 | UInt64(value)
        var i = Self.home(of: key, mask: mask, seed: seed)
        while true {
            let k = Self.narrowKey(narrow[i])
            if k == key || k < 0 {
                if k < 0 { count += 1 }
                narrow[i] = packed
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Removes `key` and answers its value, if it was there.
    /// - Complexity: O(1) expected.
    @discardableResult
    package mutating func removeValue(forKey key: Int) -> Int? {
        remove(key) { _ in true }
    }

    /// Removes the entry of `key` if its value is `value` (one probe, where a lookup then a
    /// removal took two); true if it did.
    /// - Complexity: O(1) expected.
    @discardableResult
    package mutating func removeValue(forKey key: Int, ifEqualTo value: Int) -> Bool {
        remove(key) { $0 == value } != nil
    }

    /// Removes the entry of `key` if `accepts` its value, and answers that value.
    @inline(__always)
    private mutating func remove(_ key: Int, if accepts: (Int) -> Bool) -> Int? {
        guard count > 0 else { return nil }
        if isWide {
            guard let hole = Self.find(key, in: wide, seed: seed, keyOf: { $0.key }), accepts(wide[hole].value) else { return nil }
            let removed = wide[hole].value
            Self.shiftBack(from: hole, in: &wide, seed: seed, key: { $0.key }, empty: Slot(key: -1, value: 0))
            count -= 1
            return removed
        }
        guard UInt(bitPattern: key) < 0xffff_ffff, let hole = Self.find(key, in: narrow, seed: seed, keyOf: Self.narrowKey) else { return nil }
        let removed = Int(narrow[hole] & 0xffff_ffff)
        guard accepts(removed) else { return nil }
        Self.shiftBack(from: hole, in: &narrow, seed: seed, key: Self.narrowKey, empty: Self.emptyNarrow)
        count -= 1
        return removed
    }

    /// Empties `hole` by backward shift: moves later entries of its probe run into the hole when
    /// their home position allows it, so no lookup ever has to skip a deleted slot.
    /// - Complexity: O(length of the probe run).
    @inline(__always)
    private static func shiftBack<S>(from start: Int, in slots: inout [S], seed: UInt64, key: (S) -> Int, empty: S) {
        let mask = slots.count - 1
        var hole = start
        var i = hole
        while true {
            i = (i + 1) & mask
            let k = key(slots[i])
            if k < 0 { break }
            let h = home(of: k, mask: mask, seed: seed)
            // Entry at i may move to hole if its home is not within (hole, i] (cyclically).
            let inRange = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i)
            if !inRange {
                slots[hole] = slots[i]
                hole = i
            }
        }
        slots[hole] = empty
    }

    /// `slots`' entries in a new table of `capacity` slots (either width: `keyOf` reads a slot's
    /// key, -1 for empty).
    /// - Complexity: O(capacity + slots.count).
    private static func rehashed<S>(_ slots: [S], capacity: Int, seed: UInt64, empty: S, keyOf: (S) -> Int) -> [S] {
        var table = [S](repeating: empty, count: capacity)
        let mask = capacity - 1
        for slot in slots where keyOf(slot) >= 0 {
            var i = home(of: keyOf(slot), mask: mask, seed: seed)
            while keyOf(table[i]) >= 0 { i = (i + 1) & mask }
            table[i] = slot
        }
        return table
    }

    /// Moves every entry to wide slots (a key or value that does not fit in 32 bits came).
    /// - Complexity: O(capacity).
    private mutating func widen() {
        let entries = narrow.lazy.filter { Self.narrowKey($0) >= 0 }.map { Slot(key: Self.narrowKey($0), value: Int($0 & 0xffff_ffff)) }
        wide = Self.rehashed(Array(entries), capacity: Swift.max(Self.minimumCapacity, narrow.count), seed: seed, empty: Slot(key: -1, value: 0), keyOf: { $0.key })
        narrow = []
    }

    /// Removes every entry, keeping the table's capacity (a jump empties a session's shown views
    /// at once instead of key by key).
    /// - Complexity: O(capacity).
    package mutating func removeAll(keepingCapacity: Bool) {
        guard keepingCapacity else {
            self = IntMap()
            return
        }
        guard count > 0 else { return }
        if isWide {
            for i in wide.indices { wide[i] = Slot(key: -1, value: 0) }
        } else {
            for i in narrow.indices { narrow[i] = Self.emptyNarrow }
        }
        count = 0
    }

    /// The keys, in no particular order.
    package var keys: [Int] { map(\.key) }

    package func makeIterator() -> Iterator { Iterator(narrow: narrow, wide: wide) }

    /// The entries, in no particular order.
    package struct Iterator: IteratorProtocol {
        fileprivate let narrow: [UInt64]
        fileprivate let wide: [Slot]
        private var i = 0

        fileprivate init(narrow: [UInt64], wide: [Slot]) {
            self.narrow = narrow
            self.wide = wide
        }

        package mutating func next() -> (key: Int, value: Int)? {
            // One of the two tables is empty.
            while i < wide.count {
                let slot = wide[i]
                i += 1
                if slot.key >= 0 { return (slot.key, slot.value) }
            }
            while i < narrow.count {
                let slot = narrow[i]
                i += 1
                let key = IntMap.narrowKey(slot)
                if key >= 0 { return (key, Int(slot & 0xffff_ffff)) }
            }
            return nil
        }
    }
}
