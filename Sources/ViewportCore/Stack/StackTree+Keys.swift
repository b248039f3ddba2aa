/// Order keys: uid → rank in O(log n).
///
/// Every entry has a 64-bit key, strictly increasing with rank, so a uid's rank is found by
/// descending the tree by key (nodes know their key ranges). Built entries get *base keys*
/// computed from their uids with wide gaps (`2⁶² + (uid − first) · 2^shift`, the shift as large
/// as the build's uid span allows: 2⁴² for a million items), so they cost no memory. Inserted
/// entries take keys between their neighbours' and are recorded in a persistent uid → key map, as
/// is every entry whose key relabelling changed.
///
/// Choosing keys: a run of `m` entries goes into the gap `(a, b)` between its neighbours' keys, a
/// step `s = min(2³², (b − a) / 2(m + 1))` apart, next to its anchor (after the entry before it,
/// or before the entry after it), leaving most of the gap for the next insert at the same place:
/// appending after the last new item, at the end or at the start takes 2³² a time from a gap of
/// 2⁴² or more. When a gap has no room, the smallest aligned key block around the insertion point
/// that is sparse enough is relabelled evenly (Bender, Cole, Demaine, Farach-Colton and Zito, "Two
/// simplified algorithms for maintaining order in a list", 2002): a block of 2ⁱ keys may hold at
/// most (2/T)ⁱ entries, T = 1.4, so relabelling costs amortized O(log n) entries an insert, each
/// a path-copied tree update and a map update.
extension StackTree {
    /// Which neighbour a run of inserted entries stays close to (in key space).
    public enum Anchor: Sendable {
        /// The entry before the run (inserted after an item, or at the end).
        case previous
        /// The entry after the run (inserted before an item, or at the start).
        case next
    }

    static let baseKeyOrigin: UInt64 = 1 << 62
    /// The largest step between the keys of inserted entries.
    static let preferredStep: UInt64 = 1 << 32
    /// (2/T)^i for T = 1.4: how many entries a key block of 2^i may hold after relabelling.
    static let densityLimits: [Double] = {
        var limits = [1.0]
        for _ in 1...64 { limits.append(limits[limits.count - 1] * (2 / 1.4)) }
        return limits
    }()

    /// The base key shift for `span` consecutive uids: the largest that keeps keys below 2⁶³.
    static func baseShift(span: Int) -> Int {
        62 - (64 - UInt64(max(1, span) - 1).leadingZeroBitCount)
    }

    /// The key a uid has when it has no override.
    @inline(__always)
    func baseKey(_ uid: Int32) -> UInt64? {
        guard let base = baseUIDs, base.contains(uid) else { return nil }
        return Self.baseKeyOrigin + UInt64(Int(uid) - Int(base.lowerBound)) << UInt64(keyShift)
    }

    /// The order key of the entry with this uid, if it is in this version (otherwise a key or nil).
    /// - Complexity: O(log₃₂ uid).
    func orderKey(ofUID uid: Int32) -> UInt64? { overrides[uid] ?? baseKey(uid) }

    /// The rank of the entry with this uid; nil when no entry of this version has it.
    /// - Complexity: O(log n).
    public func rank(ofUID uid: Int32) -> Int? {
        guard let key = orderKey(ofUID: uid), !isEmpty, key >= root.minKey, key <= root.maxKey else { return nil }
        var node = NodeRef(root)
        var base = 0
        while !node.isLeaf {
            node = node.read { node in
                var i = 0
                let last = node.childInfo.count - 1
                while i < last && node.childInfo[i].maxKey < key {
                    base += node.childInfo[i].count
                    i += 1
                }
                return NodeRef(node.children[i])
            }
        }
        return node.read { leaf in
            let k = Self.firstIndex(in: leaf.entries, keyAtLeast: key)
            guard k < leaf.entries.count, leaf.entries[k].orderKey == key, leaf.entries[k].uid == uid else { return nil }
            return base + k
        }
    }

    /// The first rank whose key is at least `key` (`count` when none is).
    /// - Complexity: O(log n).
    func lowerBound(key: UInt64) -> Int {
        guard !isEmpty else { return 0 }
        var node = NodeRef(root)
        var base = 0
        while !node.isLeaf {
            node = node.read { node in
                var i = 0
                let last = node.childInfo.count - 1
                while i < last && node.childInfo[i].maxKey < key {
                    base += node.childInfo[i].count
                    i += 1
                }
                return NodeRef(node.children[i])
            }
        }
        return base + node.read { Self.firstIndex(in: $0.entries, keyAtLeast: key) }
    }

    static func firstIndex(in entries: ContiguousArray<StackEntry>, keyAtLeast key: UInt64) -> Int {
        var lo = 0
        var hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].orderKey < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Records `key` as the key of `uid` (an override unless it is the uid's base key).
    mutating func record(_ uid: Int32, _ key: UInt64) {
        if baseKey(uid) == key { overrides.remove(uid) } else { overrides.set(uid, key) }
    }

    /// Keys for `m` entries to be inserted at `rank`, relabelling existing entries when their
    /// neighbours leave no room.
    /// - Complexity: O(m + log n), amortized O(m log n) with relabelling.
    mutating func makeKeys(_ m: Int, at rank: Int, anchor: Anchor) -> ContiguousArray<UInt64> {
        let n = count
        if n == 0 {
            // Like a build: spread around 2⁶².
            let shift = Self.baseShift(span: m)
            return ContiguousArray((0..<m).map { Self.baseKeyOrigin + UInt64($0) << UInt64(shift) })
        }
        let a: UInt64 = rank > 0 ? entry(at: rank - 1).orderKey : 0
        let b: UInt64 = rank < n ? entry(at: rank).orderKey : .max
        if b - a - 1 >= UInt64(m) { return Self.spread(m, between: a, and: b, anchor: anchor) }
        return relabel(making: m, at: rank, around: rank > 0 ? a : b)
    }

    /// `m` keys in `(a, b)` (which has room for them), next to the anchor.
    static func spread(_ m: Int, between a: UInt64, and b: UInt64, anchor: Anchor) -> ContiguousArray<UInt64> {
        let gap = b - a
        let slots = UInt64(m) + 1
        var step = min(preferredStep, gap / (2 * slots))
        if step == 0 { step = gap / slots }
        var keys = ContiguousArray<UInt64>()
        keys.reserveCapacity(m)
        for j in 1...UInt64(m) {
            keys.append(anchor == .previous ? a + step * j : b - step * (slots - j))
        }
        return keys
    }

    /// Gives the entries of the smallest sparse enough key block around `point` (the key next to
    /// rank `rank`) evenly spread keys, leaving room for `m` new entries at `rank`; returns
    /// their keys.
    mutating func relabel(making m: Int, at rank: Int, around point: UInt64) -> ContiguousArray<UInt64> {
        let n = count
        for i in 1...64 {
            let blockStart: UInt64 = i == 64 ? 0 : point & ~((UInt64(1) << UInt64(i)) - 1)
            let blockEnd = UInt128(blockStart) + (UInt128(1) << i)
            let lo = lowerBound(key: blockStart)
            let hi = blockEnd > UInt128(UInt64.max) ? n : lowerBound(key: UInt64(blockEnd))
            let total = hi - lo + m
            guard Double(total) <= Self.densityLimits[i] else { continue }
            // Usable keys: the block without 0 and UInt64.max.
            let low = UInt128(max(blockStart, 1))
            let high = min(blockEnd - 1, UInt128(UInt64.max - 1))
            let width = high - low + 1
            guard width >= UInt128(total) else { continue }
            let t = UInt128(total)
            func key(_ j: Int) -> UInt64 { UInt64(low + (UInt128(2 * j + 1) * width) / (2 * t)) }
            let before = rank - lo
            setKeys(ranks: lo..<hi) { r in key(r < rank ? r - lo : r - lo + m) }
            relabelledEntries += hi - lo
            return ContiguousArray((0..<m).map { key(before + $0) })
        }
        preconditionFailure("more entries than 64-bit order keys can hold")
    }

    /// Sets the keys of the entries at `ranks` (keeping them increasing) and records them.
    /// - Complexity: O(ranks + log n), path copying.
    mutating func setKeys(ranks: Range<Int>, _ key: (Int) -> UInt64) {
        guard !ranks.isEmpty else { return }
        var changed: [(Int32, UInt64)] = []
        changed.reserveCapacity(ranks.count)
        Self.setKeys(&root, base: 0, ranks: ranks, key: key, changed: &changed)
        for (uid, k) in changed { record(uid, k) }
    }

    private static func setKeys(_ node: inout StackNode, base: Int, ranks: Range<Int>, key: (Int) -> UInt64, changed: inout [(Int32, UInt64)]) {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        if node.isLeaf {
            let from = max(ranks.lowerBound - base, 0)
            let to = min(ranks.upperBound - base, node.entries.count)
            for j in from..<to {
                let k = key(base + j)
                node.entries[j].orderKey = k
                changed.append((node.entries[j].uid, k))
            }
            node.minKey = node.entries.first?.orderKey ?? 0
            node.maxKey = node.entries.last?.orderKey ?? 0
            return
        }
        var b = base
        for i in node.children.indices {
            let c = node.childInfo[i].count
            if b < ranks.upperBound && b + c > ranks.lowerBound {
                setKeys(&node.children[i], base: b, ranks: ranks, key: key, changed: &changed)
                node.childInfo[i].maxKey = node.children[i].maxKey
            }
            b += c
        }
        node.minKey = node.children.first?.minKey ?? 0
        node.maxKey = node.childInfo.last?.maxKey ?? 0
    }
}
