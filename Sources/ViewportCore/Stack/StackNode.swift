/// Totals of one lane over a subtree.
struct LaneSummary: Sendable {
    /// Σ (main + spacing) over the lane's entries: the start of the lane's next entry, relative to
    /// the first one's.
    var sum: StackLength
    /// The largest cross size among them (0 without entries).
    var maxCross: Double
    var count: Int

    static let empty = LaneSummary(sum: .zero, maxCross: 0, count: 0)
}

/// A node of a `StackTree`: a leaf holds entries, an inner node children; both hold per-lane
/// summaries of their subtree and the range of its order keys.
///
/// Nodes are shared between versions of a tree and changed only while uniquely referenced (the
/// tree copies a shared node before changing it), so a node other versions can see never changes
/// and sharing them across threads is safe.
final class StackNode: @unchecked Sendable {
    var entries: ContiguousArray<StackEntry>
    var children: ContiguousArray<StackNode>
    /// One summary per lane of the tree.
    var lanes: ContiguousArray<LaneSummary>
    /// Entries in the subtree.
    var count: Int
    /// The first and last order key of the subtree (meaningless when it is empty).
    var minKey: UInt64
    var maxKey: UInt64
    let isLeaf: Bool

    private init(
        isLeaf: Bool, entries: ContiguousArray<StackEntry>, children: ContiguousArray<StackNode>, lanes: ContiguousArray<LaneSummary>,
        count: Int, minKey: UInt64, maxKey: UInt64
    ) {
        self.isLeaf = isLeaf
        self.entries = entries
        self.children = children
        self.lanes = lanes
        self.count = count
        self.minKey = minKey
        self.maxKey = maxKey
    }

    /// A leaf over `entries`, with its summary.
    /// - Complexity: O(entries + lanes).
    convenience init(leaf entries: ContiguousArray<StackEntry>, laneCount: Int, gap: StackLength) {
        self.init(
            isLeaf: true, entries: entries, children: [], lanes: ContiguousArray(repeating: .empty, count: laneCount), count: 0, minKey: 0,
            maxKey: 0)
        summarize(gap: gap)
    }

    /// An inner node over `children`, with its summary.
    /// - Complexity: O(children · lanes).
    convenience init(children: ContiguousArray<StackNode>, laneCount: Int) {
        self.init(
            isLeaf: false, entries: [], children: children, lanes: ContiguousArray(repeating: .empty, count: laneCount), count: 0,
            minKey: 0, maxKey: 0)
        summarize(gap: .zero)
    }

    /// A copy sharing the children (for path copying).
    func copy() -> StackNode {
        StackNode(isLeaf: isLeaf, entries: entries, children: children, lanes: lanes, count: count, minKey: minKey, maxKey: maxKey)
    }

    /// Entries of a leaf, children of an inner node.
    var size: Int { isLeaf ? entries.count : children.count }

    /// Recomputes the summary from the entries or the children's summaries.
    /// - Complexity: O(entries + lanes) for a leaf, O(children · lanes) for an inner node.
    func summarize(gap: StackLength) {
        let laneCount = lanes.count
        lanes.withUnsafeMutableBufferPointer { lanes in
            for j in 0..<laneCount { lanes[j] = .empty }
            if isLeaf {
                for e in entries {
                    let j = Int(e.lane)
                    lanes[j].count += 1
                    lanes[j].sum += StackLength(e.main) + gap
                    if e.cross > lanes[j].maxCross { lanes[j].maxCross = e.cross }
                }
            } else {
                for child in children {
                    child.lanes.withUnsafeBufferPointer { c in
                        for j in 0..<laneCount where c[j].count > 0 {
                            lanes[j].count += c[j].count
                            lanes[j].sum += c[j].sum
                            if c[j].maxCross > lanes[j].maxCross { lanes[j].maxCross = c[j].maxCross }
                        }
                    }
                }
            }
        }
        if isLeaf {
            count = entries.count
            minKey = entries.first?.orderKey ?? 0
            maxKey = entries.last?.orderKey ?? 0
        } else {
            count = 0
            for child in children { count += child.count }
            minKey = children.first?.minKey ?? 0
            maxKey = children.last?.maxKey ?? 0
        }
    }

    /// The largest cross size of `lane` over the entries or children (after one of them shrank).
    /// - Complexity: O(size).
    func recomputeMaxCross(lane: Int) {
        var m = 0.0
        if isLeaf {
            for e in entries where Int(e.lane) == lane && e.cross > m { m = e.cross }
        } else {
            for child in children where child.lanes[lane].count > 0 && child.lanes[lane].maxCross > m { m = child.lanes[lane].maxCross }
        }
        lanes[lane].maxCross = m
    }
}
