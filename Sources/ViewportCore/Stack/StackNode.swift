/// Totals of one lane over a subtree.
struct LaneSummary: Sendable {
    /// Σ (main + spacing) over the lane's entries: the start of the lane's next entry, relative to
    /// the first one's.
    var sum: StackLength
    /// The largest cross size among them (0 without entries).
    var maxCross: Double
    var count: Int

    static var empty: LaneSummary { LaneSummary(sum: .zero, maxCross: 0, count: 0) }
}

/// What an inner node knows of a child without reading it.
struct ChildInfo: Sendable {
    var count: Int
    var maxKey: UInt64
}

/// A node of a `StackTree`: a leaf holds entries, an inner node children; both hold per-lane
/// summaries of their subtree and the range of its order keys.
///
/// An inner node also keeps, inline, each child's entry count, last key and lane summaries, so a
/// descent reads one node per level instead of every sibling it passes (a cache miss each on a
/// large tree: measured 1 µs against 0.2 µs for a uid lookup in a million items).
///
/// Nodes are shared between versions of a tree and changed only while uniquely referenced (the
/// tree copies a shared node before changing it), so a node other versions can see never changes
/// and sharing them across threads is safe. For the same reason no two accesses to a node's
/// storage overlap, and the dynamic exclusivity checks are off (they took 11% of a range query).
final class StackNode: @unchecked Sendable {
    @exclusivity(unchecked) var entries: ContiguousArray<StackEntry>
    @exclusivity(unchecked) var children: ContiguousArray<StackNode>
    /// Per child (inner nodes): its count and last key.
    @exclusivity(unchecked) var childInfo: ContiguousArray<ChildInfo>
    /// Per child (inner nodes), its lane summaries: child `i`'s lane `j` at `i × laneCount + j`.
    @exclusivity(unchecked) var childLanes: ContiguousArray<LaneSummary>
    /// One summary per lane of the tree, over the whole subtree.
    @exclusivity(unchecked) var lanes: ContiguousArray<LaneSummary>
    /// Entries in the subtree.
    @exclusivity(unchecked) var count: Int
    /// The first and last order key of the subtree (meaningless when it is empty).
    @exclusivity(unchecked) var minKey: UInt64
    @exclusivity(unchecked) var maxKey: UInt64
    let isLeaf: Bool

    private init(
        isLeaf: Bool, entries: ContiguousArray<StackEntry>, children: ContiguousArray<StackNode>, childInfo: ContiguousArray<ChildInfo>,
        childLanes: ContiguousArray<LaneSummary>, lanes: ContiguousArray<LaneSummary>, count: Int, minKey: UInt64, maxKey: UInt64
    ) {
        self.isLeaf = isLeaf
        self.entries = entries
        self.children = children
        self.childInfo = childInfo
        self.childLanes = childLanes
        self.lanes = lanes
        self.count = count
        self.minKey = minKey
        self.maxKey = maxKey
    }

    /// A leaf over `entries`, with its summary.
    /// - Complexity: O(entries + lanes).
    convenience init(leaf entries: ContiguousArray<StackEntry>, laneCount: Int, gap: StackLength) {
        self.init(
            isLeaf: true, entries: entries, children: [], childInfo: [], childLanes: [],
            lanes: ContiguousArray(repeating: .empty, count: laneCount), count: 0, minKey: 0, maxKey: 0)
        summarizeLeaf(gap: gap)
    }

    /// An inner node over `children`, with its summary.
    /// - Complexity: O(children · lanes).
    convenience init(children: ContiguousArray<StackNode>, laneCount: Int) {
        self.init(
            isLeaf: false, entries: [], children: children, childInfo: [], childLanes: [],
            lanes: ContiguousArray(repeating: .empty, count: laneCount), count: 0, minKey: 0, maxKey: 0)
        rebuildChildren()
    }

    /// A copy sharing the children (for path copying).
    func copy() -> StackNode {
        StackNode(
            isLeaf: isLeaf, entries: entries, children: children, childInfo: childInfo, childLanes: childLanes, lanes: lanes, count: count,
            minKey: minKey, maxKey: maxKey)
    }

    var laneCount: Int { lanes.count }

    /// Entries of a leaf, children of an inner node.
    var size: Int { isLeaf ? entries.count : children.count }

    /// Recomputes a leaf's summary from its entries.
    /// - Complexity: O(entries + lanes).
    func summarizeLeaf(gap: StackLength) {
        let laneCount = lanes.count
        lanes.withUnsafeMutableBufferPointer { lanes in
            for j in 0..<laneCount { lanes[j] = .empty }
            for e in entries {
                let j = Int(e.lane)
                lanes[j].count += 1
                lanes[j].sum += StackLength(e.main) + gap
                if e.cross > lanes[j].maxCross { lanes[j].maxCross = e.cross }
            }
        }
        count = entries.count
        minKey = entries.first?.orderKey ?? 0
        maxKey = entries.last?.orderKey ?? 0
    }

    /// Recomputes an inner node's per-child rows and its totals from its children.
    /// - Complexity: O(children · lanes).
    func rebuildChildren() {
        let laneCount = lanes.count
        childInfo.removeAll(keepingCapacity: true)
        childLanes.removeAll(keepingCapacity: true)
        childInfo.reserveCapacity(children.count)
        childLanes.reserveCapacity(children.count * laneCount)
        for child in children {
            childInfo.append(ChildInfo(count: child.count, maxKey: child.maxKey))
            childLanes.append(contentsOf: child.lanes)
        }
        summarizeInner()
    }

    /// Recomputes an inner node's totals from its per-child rows.
    /// - Complexity: O(children · lanes).
    func summarizeInner() {
        let laneCount = lanes.count
        let n = childInfo.count
        lanes.withUnsafeMutableBufferPointer { lanes in
            childLanes.withUnsafeBufferPointer { rows in
                for j in 0..<laneCount { lanes[j] = .empty }
                for i in 0..<n {
                    for j in 0..<laneCount {
                        let c = rows[i * laneCount + j]
                        guard c.count > 0 else { continue }
                        lanes[j].count += c.count
                        lanes[j].sum += c.sum
                        if c.maxCross > lanes[j].maxCross { lanes[j].maxCross = c.maxCross }
                    }
                }
            }
        }
        count = 0
        for info in childInfo { count += info.count }
        minKey = children.first?.minKey ?? 0
        maxKey = childInfo.last?.maxKey ?? 0
    }

    /// Copies child `i`'s count, last key and lane summaries into this node's rows.
    /// - Complexity: O(lanes).
    @inline(__always)
    func refreshRow(_ i: Int) {
        let child = children[i]
        childInfo[i] = ChildInfo(count: child.count, maxKey: child.maxKey)
        let laneCount = lanes.count
        child.lanes.withUnsafeBufferPointer { source in
            childLanes.withUnsafeMutableBufferPointer { rows in
                for j in 0..<laneCount { rows[i * laneCount + j] = source[j] }
            }
        }
    }

    /// Copies one lane of child `i` (and its count and last key) into this node's rows.
    @inline(__always)
    func refreshRow(_ i: Int, lane: Int) {
        let child = children[i]
        childInfo[i] = ChildInfo(count: child.count, maxKey: child.maxKey)
        childLanes[i * lanes.count + lane] = child.lanes[lane]
    }

    /// Replaces children `range` with `nodes`, rows included (totals are left to the caller).
    func replaceChildren(_ range: Range<Int>, with nodes: some Collection<StackNode>) {
        let laneCount = lanes.count
        children.replaceSubrange(range, with: nodes)
        childInfo.replaceSubrange(range, with: nodes.map { ChildInfo(count: $0.count, maxKey: $0.maxKey) })
        var rows = ContiguousArray<LaneSummary>()
        rows.reserveCapacity(nodes.count * laneCount)
        for node in nodes { rows.append(contentsOf: node.lanes) }
        childLanes.replaceSubrange((range.lowerBound * laneCount)..<(range.upperBound * laneCount), with: rows)
    }

    /// The child holding `rank` (`0 ..< count`) and the rank within it.
    /// - Complexity: O(children), reading only this node.
    @inline(__always)
    func child(containing rank: Int) -> (index: Int, rank: Int) {
        childInfo.withUnsafeBufferPointer { info in
            var r = rank
            var i = 0
            while r >= info[i].count {
                r -= info[i].count
                i += 1
            }
            return (i, r)
        }
    }

    /// The largest cross size of `lane` over the entries or children (after one of them shrank).
    /// - Complexity: O(size).
    func recomputeMaxCross(lane: Int) {
        var m = 0.0
        if isLeaf {
            for e in entries where Int(e.lane) == lane && e.cross > m { m = e.cross }
        } else {
            let laneCount = lanes.count
            for i in 0..<childInfo.count {
                let c = childLanes[i * laneCount + lane]
                if c.count > 0 && c.maxCross > m { m = c.maxCross }
            }
        }
        lanes[lane].maxCross = m
    }
}

/// An unretained reference to a node, for read-only walks of a tree the caller keeps alive (the
/// tree, borrowed for the call, holds every node). Retaining and releasing each node on the way
/// down was a fifth of a range query.
struct NodeRef {
    let unmanaged: Unmanaged<StackNode>

    @inline(__always)
    init(_ node: StackNode) { unmanaged = .passUnretained(node) }

    /// Runs `body` with the node, borrowed.
    @inline(__always)
    func read<R>(_ body: (StackNode) throws -> R) rethrows -> R { try unmanaged._withUnsafeGuaranteedRef(body) }

    @inline(__always)
    var isLeaf: Bool { read { $0.isLeaf } }

    @inline(__always)
    func child(_ i: Int) -> NodeRef { read { NodeRef($0.children[i]) } }
}
