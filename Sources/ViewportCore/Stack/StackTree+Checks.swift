/// Structural checks, for tests.
extension StackTree {
    /// What is wrong with the tree's structure, empty when nothing: node fill and depth, the
    /// summaries against their entries, keys increasing, and every uid's key and rank found.
    /// - Complexity: O(n log n).
    func structuralProblems() -> [String] {
        var problems: [String] = []
        var leafDepth: Int? = nil
        var lastKey: UInt64? = nil
        func check(_ node: StackNode, depth: Int, isRoot: Bool) {
            let expected = node.isLeaf
                ? StackNode(leaf: node.entries, laneCount: laneCount, gap: gap)
                : StackNode(children: node.children, laneCount: laneCount)
            if expected.count != node.count { problems.append("count \(node.count), entries say \(expected.count)") }
            if node.count > 0 && (expected.minKey != node.minKey || expected.maxKey != node.maxKey) {
                problems.append("key range \(node.minKey)…\(node.maxKey), entries say \(expected.minKey)…\(expected.maxKey)")
            }
            if !node.isLeaf {
                if node.childInfo.map(\.count) != expected.childInfo.map(\.count) || node.childInfo.map(\.maxKey) != expected.childInfo.map(\.maxKey) {
                    problems.append("child rows: counts or keys differ from the children's")
                }
                for (a, b) in zip(node.childLanes, expected.childLanes) where a.count != b.count || a.sum != b.sum || a.maxCross != b.maxCross {
                    problems.append("child rows: lanes \(a), children say \(b)")
                    break
                }
            }
            for lane in 0..<laneCount {
                let a = node.lanes[lane]
                let b = expected.lanes[lane]
                if a.count != b.count || a.sum != b.sum || a.maxCross != b.maxCross {
                    problems.append("lane \(lane): \(a), entries say \(b)")
                }
            }
            if node.isLeaf {
                if leafDepth == nil { leafDepth = depth }
                if leafDepth != depth { problems.append("leaves at depths \(leafDepth ?? -1) and \(depth)") }
                if !isRoot && node.entries.count < Self.leafCapacity / 2 { problems.append("leaf of \(node.entries.count) entries") }
                if node.entries.count > Self.leafCapacity { problems.append("leaf of \(node.entries.count) entries") }
                for e in node.entries {
                    if let lastKey, e.orderKey <= lastKey { problems.append("key \(e.orderKey) after \(lastKey)") }
                    lastKey = e.orderKey
                    if Int(e.lane) >= laneCount { problems.append("lane \(e.lane) of uid \(e.uid)") }
                }
            } else {
                let n = node.children.count
                if (isRoot && n < 2) || (!isRoot && n < Self.branchCapacity / 2) || n > Self.branchCapacity {
                    problems.append("inner node of \(n) children")
                }
                for child in node.children { check(child, depth: depth + 1, isRoot: false) }
            }
        }
        check(root, depth: 0, isRoot: true)
        var rank = 0
        forEach { r, e, _ in
            if orderKey(ofUID: e.uid) != e.orderKey { problems.append("uid \(e.uid): key \(String(describing: orderKey(ofUID: e.uid))), entry has \(e.orderKey)") }
            if self.rank(ofUID: e.uid) != r { problems.append("uid \(e.uid) at rank \(r) found at \(String(describing: self.rank(ofUID: e.uid)))") }
            rank += 1
        }
        for (uid, _) in overrides.all() where self.rank(ofUID: uid) == nil { problems.append("override for uid \(uid), not in the tree") }
        return problems
    }

    /// Entries a range query examines in leaves (for tests of its cost).
    func examinedEntries(touching low: StackLength, _ high: StackLength, lanes: Lanes = .max) -> Int {
        var examined = 0
        forEach(touching: low, high, lanes: lanes, examined: &examined) { _, _, _ in }
        return examined
    }

    /// Nodes of this tree that `other` does not share (what an edit allocated).
    func nodesNotShared(with other: StackTree) -> Int {
        var theirs = Set<ObjectIdentifier>()
        func collect(_ node: StackNode) {
            theirs.insert(ObjectIdentifier(node))
            for child in node.children { collect(child) }
        }
        collect(other.root)
        var count = 0
        func walk(_ node: StackNode) {
            guard !theirs.contains(ObjectIdentifier(node)) else { return }
            count += 1
            for child in node.children { walk(child) }
        }
        walk(root)
        return count
    }
}
