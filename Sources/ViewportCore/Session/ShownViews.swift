/// A session's materialized items and their views (item → view).
///
/// Most sessions show a screenful: a dozen or two items. Those are kept as one sorted array of
/// packed pairs (item in the high 32 bits, view in the low), where a jump reads, empties and
/// refills them in order without hashing: `perf` had the hash table's walk, lookups and inserts
/// at about a tenth of a jump. A session that shows more than `orderedLimit` items (a grid of
/// small cells), or a pair that does not fit in 32 bits, moves to an ``IntMap``, whose updates
/// stay O(1) however many items are shown; it moves back once a quarter of that is left.
///
/// Iteration is in layout order while ordered, in no particular order in the hash form.
package struct ShownViews: Sendable, Sequence {
    /// Packed pairs, ascending by item, while `table` is nil.
    private var ordered: [UInt64] = []
    /// The hash form, for many items or wide pairs.
    private var table: IntMap?

    /// Most items kept in the ordered form: an insert or removal there moves up to this many
    /// 8-byte pairs.
    package static let orderedLimit = 64

    package init() {}

    package var count: Int { table?.count ?? ordered.count }
    package var isEmpty: Bool { count == 0 }
    /// Whether the pairs are in the sorted array (for tests).
    package var isOrdered: Bool { table == nil }

    @inline(__always)
    private static func fits(_ item: Int, _ view: Int) -> Bool {
        UInt(bitPattern: item) <= 0xffff_ffff && UInt(bitPattern: view) <= 0xffff_ffff
    }

    @inline(__always)
    private static func item(_ pair: UInt64) -> Int { Int(pair >> 32) }

    @inline(__always)
    private static func view(_ pair: UInt64) -> Int { Int(pair & 0xffff_ffff) }

    /// The first position in `ordered` whose item is not below `item`.
    /// - Complexity: O(log k) for k items shown.
    @inline(__always)
    private func position(of item: Int) -> Int {
        ordered.firstIndex(notBelow: UInt64(item) << 32, from: 0, count: ordered.count)
    }

    /// The view of `item`; setting nil removes it.
    /// - Complexity: O(log k) while ordered, O(1) expected in the hash form.
    package subscript(item: Int) -> Int? {
        @inline(__always) get {
            if let table { return table[item] }
            guard UInt(bitPattern: item) <= 0xffff_ffff else { return nil }
            let p = position(of: item)
            guard p < ordered.count, Self.item(ordered[p]) == item else { return nil }
            return Self.view(ordered[p])
        }
        @inline(__always) set {
            if let newValue { insert(item, newValue) } else { removeValue(forKey: item) }
        }
    }

    /// - Complexity: O(1) for an item after every shown one (as a scroll down or a refilled
    ///   jump adds them: inlined, one comparison and an append), else as `insertInPlace`.
    @inline(__always)
    private mutating func insert(_ item: Int, _ view: Int) {
        if table == nil, ordered.count < Self.orderedLimit, item >= 0, Self.fits(item, view), ordered.last.map({ Self.item($0) < item }) ?? true {
            ordered.append(UInt64(item) << 32 | UInt64(view))
            return
        }
        insertInPlace(item, view)
    }

    /// - Complexity: O(k) while ordered, O(1) expected in the hash form.
    @inline(never)
    private mutating func insertInPlace(_ item: Int, _ view: Int) {
        precondition(item >= 0, "items are non-negative")
        if table == nil {
            if Self.fits(item, view) {
                let pair = UInt64(item) << 32 | UInt64(view)
                if let last = ordered.last, Self.item(last) >= item {
                    let p = position(of: item)
                    if p < ordered.count, Self.item(ordered[p]) == item {
                        ordered[p] = pair
                        return
                    }
                    if ordered.count < Self.orderedLimit {
                        ordered.insert(pair, at: p)
                        return
                    }
                } else if ordered.count < Self.orderedLimit {
                    ordered.append(pair)
                    return
                }
            }
            moveToTable()
        }
        table?[item] = view
    }

    /// Removes `item` and answers its view, if it was shown.
    /// - Complexity: O(k) while ordered, O(1) expected in the hash form (amortized: moving back
    ///   to the ordered form is O(c) for a table of c slots, once, when the count falls to a
    ///   quarter of the limit).
    @discardableResult
    package mutating func removeValue(forKey item: Int) -> Int? {
        guard var map = table else {
            guard UInt(bitPattern: item) <= 0xffff_ffff else { return nil }
            let p = position(of: item)
            guard p < ordered.count, Self.item(ordered[p]) == item else { return nil }
            return Self.view(ordered.remove(at: p))
        }
        table = nil  // `map` is the only reference while it changes
        let removed = map.removeValue(forKey: item)
        // Checked when the count falls to the mark, not below it: a table kept for a wide pair is
        // then not scanned on every later removal.
        if map.count == Self.orderedLimit / 4 && map.allSatisfy({ Self.fits($0.key, $0.value) }) {
            ordered = map.map { UInt64($0.key) << 32 | UInt64($0.value) }.sorted()
        } else {
            table = map
        }
        return removed
    }

    /// Whether the form is ordered and its items are exactly `items` (in layout order).
    /// - Complexity: O(k).
    package func hasKeys(_ items: [Int]) -> Bool {
        guard table == nil, items.count == ordered.count else { return false }
        for (pair, item) in zip(ordered, items) where Self.item(pair) != item { return false }
        return true
    }

    /// Removes every pair, keeping the ordered form's capacity (a jump empties a session's
    /// shown views at once).
    /// - Complexity: O(1) while ordered.
    package mutating func removeAll(keepingCapacity: Bool) {
        table = nil
        ordered.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Moves every pair to the hash form.
    /// - Complexity: O(k).
    private mutating func moveToTable() {
        var map = IntMap()
        for pair in ordered { map[Self.item(pair)] = Self.view(pair) }
        ordered = []
        table = map
    }

    /// The shown items (in layout order while ordered).
    package var keys: [Int] { map(\.key) }

    package func makeIterator() -> Iterator { Iterator(ordered: ordered, table: table?.makeIterator()) }

    /// The pairs: in layout order while ordered, in no particular order in the hash form.
    package struct Iterator: IteratorProtocol {
        fileprivate let ordered: [UInt64]
        fileprivate var table: IntMap.Iterator?
        private var i = 0

        fileprivate init(ordered: [UInt64], table: IntMap.Iterator?) {
            self.ordered = ordered
            self.table = table
        }

        @inline(__always)
        package mutating func next() -> (key: Int, value: Int)? {
            if table != nil { return table?.next() }
            guard i < ordered.count else { return nil }
            let pair = ordered[i]
            i &+= 1
            return (ShownViews.item(pair), ShownViews.view(pair))
        }
    }
}
