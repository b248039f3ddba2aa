/// The items of a stack in layout order, with what positions need: a persistent B+tree keyed by
/// rank whose nodes sum each lane's sizes.
///
/// An entry's *start* is the sum of `main + spacing` over the earlier entries of its lane, as a
/// `StackLength` (exact: it does not depend on the tree's shape), relative to the section's origin.
/// Within a lane, starts and ends (`start + main`) never decrease with rank.
///
/// Value semantics with structural sharing: copies share every node, and an edit copies only the
/// O(log n) nodes on its path that another copy can see (nodes this copy alone holds are changed in
/// place, so a batch of edits near one another copies each path once). Sessions on one stored
/// layout each edit their own version for memory proportional to their edits.
///
/// Order keys (see `StackTree+Keys`) give every entry a position key increasing with rank, so an
/// item's rank is found from its uid in O(log n) although ranks shift with every insert.
public struct StackTree: Sendable {
    /// Entries per leaf at most (leaves hold at least half of it, but for a root leaf).
    ///
    /// Measured on a million items (viewport-bench N stack, CPU time) with leaves of 32, 64 and
    /// 128 and nodes of 8, 16 and 32: queries and edits differ by less than the machine's noise
    /// (±15%), while a path copy costs a retain and a release per child of every copied node (half
    /// of an isolated edit's time) and the leaf's entries. 64 and 16 copy least for their depth:
    /// about 8 KB per scattered edit, 45 bytes per item.
    static let leafCapacity = 64
    /// Children per inner node at most (at least half, but for the root).
    static let branchCapacity = 16
    /// Most lanes a tree (a masonry) may have.
    public static let maxLanes = 64

    public let laneCount: Int
    /// Space between consecutive items of a lane.
    public let spacing: Double
    /// `spacing` as a length.
    let gap: StackLength
    var root: StackNode
    /// Keys of the entries whose key is not their uid's base key (see `StackTree+Keys`).
    var overrides = UIDKeyMap()
    /// The uids of the built entries, when they increased with rank: their keys follow from them.
    let baseUIDs: ClosedRange<Int32>?
    /// Base keys are `baseKeyOrigin + (uid − baseUIDs.lowerBound) << keyShift`.
    let keyShift: Int
    /// Entries given new keys to make room for inserts, over this version's history (for tests and
    /// benchmarks: it bounds the work of relabelling).
    public internal(set) var relabelledEntries = 0

    /// Builds a tree over `entries` in this order. Their `orderKey`s are assigned here. When their
    /// uids increase, keys follow from the uids and cost no memory; otherwise every entry's key is
    /// stored in the override map (correct, but about 20 more bytes an entry).
    /// - Precondition: `1 ≤ laneCount ≤ 64`, every lane below `laneCount`.
    /// - Complexity: O(n + lanes · n / 64).
    public init(entries: ContiguousArray<StackEntry> = [], laneCount: Int = 1, spacing: Double = 0) {
        precondition((1...Self.maxLanes).contains(laneCount), "lanes must be 1…\(Self.maxLanes)")
        self.laneCount = laneCount
        self.spacing = spacing
        self.gap = StackLength(spacing)
        var entries = entries
        var increasing = true
        for k in entries.indices.dropFirst() where entries[k].uid <= entries[k - 1].uid {
            increasing = false
            break
        }
        let n = entries.count
        if let first = entries.first, let last = entries.last, increasing {
            baseUIDs = first.uid...last.uid
            let shift = Self.baseShift(span: Int(last.uid) - Int(first.uid) + 1)
            keyShift = shift
            entries.withUnsafeMutableBufferPointer { buffer in
                for k in buffer.indices {
                    buffer[k].orderKey = Self.baseKeyOrigin + UInt64(Int(buffer[k].uid) - Int(first.uid)) << UInt64(shift)
                }
            }
        } else {
            baseUIDs = nil
            keyShift = Self.baseShift(span: max(1, n))
            var overrides = UIDKeyMap()
            for k in 0..<n {
                entries[k].orderKey = Self.baseKeyOrigin + UInt64(k) << UInt64(keyShift)
                overrides.set(entries[k].uid, entries[k].orderKey)
            }
            self.overrides = overrides
        }
        root = Self.build(entries[...], laneCount: laneCount, gap: gap)
    }

    /// A balanced tree over `entries`, whose keys are set: leaves as full as an even split allows.
    /// - Complexity: O(n + lanes · n / 64).
    static func build(_ entries: ArraySlice<StackEntry>, laneCount: Int, gap: StackLength) -> StackNode {
        let n = entries.count
        guard n > leafCapacity else { return StackNode(leaf: ContiguousArray(entries), laneCount: laneCount, gap: gap) }
        let pieces = (n + leafCapacity - 1) / leafCapacity
        var level = ContiguousArray<StackNode>()
        level.reserveCapacity(pieces)
        var start = entries.startIndex
        for p in 0..<pieces {
            let size = n / pieces + (p < n % pieces ? 1 : 0)
            level.append(StackNode(leaf: ContiguousArray(entries[start..<(start + size)]), laneCount: laneCount, gap: gap))
            start += size
        }
        return buildLevels(level, laneCount: laneCount)
    }

    /// Inner levels over `nodes` (all of one height) up to a single root.
    static func buildLevels(_ nodes: ContiguousArray<StackNode>, laneCount: Int) -> StackNode {
        var level = nodes
        while level.count > 1 {
            level = group(level[...], laneCount: laneCount)
        }
        return level[0]
    }

    /// `nodes` split evenly into inner nodes of at most `branchCapacity` children (at least half
    /// of it when there are more than `branchCapacity`).
    static func group(_ nodes: ArraySlice<StackNode>, laneCount: Int) -> ContiguousArray<StackNode> {
        let n = nodes.count
        let pieces = (n + branchCapacity - 1) / branchCapacity
        var parents = ContiguousArray<StackNode>()
        parents.reserveCapacity(pieces)
        var start = nodes.startIndex
        for p in 0..<pieces {
            let size = n / pieces + (p < n % pieces ? 1 : 0)
            parents.append(StackNode(children: ContiguousArray(nodes[start..<(start + size)]), laneCount: laneCount))
            start += size
        }
        return parents
    }

    /// - Complexity: O(1).
    public var count: Int { root.count }
    public var isEmpty: Bool { root.count == 0 }

    /// The entry at `rank`.
    /// - Complexity: O(log n).
    public func entry(at rank: Int) -> StackEntry {
        precondition(rank >= 0 && rank < count, "rank out of range")
        var node = NodeRef(root)
        var r = rank
        while !node.isLeaf {
            node = node.read { node in
                let (i, within) = node.child(containing: r)
                r = within
                return NodeRef(node.children[i])
            }
        }
        return node.read { $0.entries[r] }
    }

    /// The start of the entry at `rank`: the sum of `main + spacing` over the earlier entries of its
    /// lane.
    /// - Complexity: O(log n).
    public func start(at rank: Int) -> StackLength { locate(rank).start }

    /// The entry at `rank` and its start.
    /// - Complexity: O(log n) (one descent, then the lane's sums of the siblings on the path).
    public func locate(_ rank: Int) -> (entry: StackEntry, start: StackLength) {
        precondition(rank >= 0 && rank < count, "rank out of range")
        return Self.locate(NodeRef(root), rank, gap: gap)
    }

    private static func locate(_ ref: NodeRef, _ rank: Int, gap: StackLength) -> (entry: StackEntry, start: StackLength) {
        ref.read { node in locate(node, rank, gap: gap) }
    }

    @inline(__always)
    private static func locate(_ node: StackNode, _ rank: Int, gap: StackLength) -> (entry: StackEntry, start: StackLength) {
        if node.isLeaf {
            return node.entries.withUnsafeBufferPointer { entries in
                let e = entries[rank]
                // Sum the shorter side of the leaf: the entries before, or those from `rank` on
                // taken back from the leaf's total.
                var sizes = StackLength.zero
                var n = 0
                if rank <= entries.count / 2 {
                    for j in 0..<rank where entries[j].lane == e.lane {
                        sizes += StackLength(entries[j].main)
                        n += 1
                    }
                    return (e, sizes + gap.times(n))
                }
                for j in rank..<entries.count where entries[j].lane == e.lane {
                    sizes += StackLength(entries[j].main)
                    n += 1
                }
                return (e, node.lanes[Int(e.lane)].sum - sizes - gap.times(n))
            }
        }
        let (i, r) = node.child(containing: rank)
        var found = locate(NodeRef(node.children[i]), r, gap: gap)
        let lane = Int(found.entry.lane)
        let laneCount = node.laneCount
        node.childLanes.withUnsafeBufferPointer { rows in
            for j in 0..<i { found.start += rows[j * laneCount + lane].sum }
        }
        return found
    }

    /// The number of entries in `lane`.
    /// - Complexity: O(1).
    public func count(inLane lane: Int) -> Int { root.lanes[lane].count }

    /// Where `lane` ends: the end of its last entry (`sum − spacing`), zero when it is empty.
    /// - Complexity: O(1).
    public func laneLength(_ lane: Int) -> StackLength {
        let s = root.lanes[lane]
        return s.count > 0 ? s.sum - gap : .zero
    }

    /// Every lane's length.
    /// - Complexity: O(lanes).
    public var laneLengths: [StackLength] { (0..<laneCount).map(laneLength) }

    /// The longest lane's length (zero when empty).
    /// - Complexity: O(lanes).
    public var length: StackLength { (0..<laneCount).map(laneLength).max() ?? .zero }

    /// The largest cross size of the entries of `lane` (0 when it is empty).
    /// - Complexity: O(1).
    public func maxCross(inLane lane: Int) -> Double { root.lanes[lane].maxCross }

    /// Calls `body` with every entry and its start, in rank order.
    /// - Complexity: O(n).
    public func forEach(_ body: (_ rank: Int, _ entry: StackEntry, _ start: StackLength) -> Void) {
        var running = ContiguousArray(repeating: StackLength.zero, count: laneCount)
        var rank = 0
        func walk(_ node: StackNode) {
            if node.isLeaf {
                for e in node.entries {
                    let lane = Int(e.lane)
                    body(rank, e, running[lane])
                    running[lane] += StackLength(e.main) + gap
                    rank += 1
                }
            } else {
                for child in node.children { walk(child) }
            }
        }
        walk(root)
    }

    /// Every entry in rank order.
    /// - Complexity: O(n).
    public var entries: [StackEntry] {
        var all: [StackEntry] = []
        all.reserveCapacity(count)
        forEach { _, e, _ in all.append(e) }
        return all
    }
}
