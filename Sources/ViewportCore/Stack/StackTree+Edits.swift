/// Edits by rank. Each copies the nodes on its path that another version shares (path copying)
/// and changes in place the ones only this version holds.
extension StackTree {
    /// Gives the entry at `rank` new sizes (its lane, uid, key and reuse class stay).
    /// - Complexity: O(log n) (O(b · log n) when the entry was its lane's widest in a node).
    public mutating func resize(at rank: Int, main: Double, cross: Double, isMeasured: Bool = true) {
        precondition(rank >= 0 && rank < count, "rank out of range")
        Self.resize(&root, rank, main: main, cross: cross, isMeasured: isMeasured, gap: gap)
    }

    @discardableResult
    private static func resize(
        _ node: inout StackNode, _ rank: Int, main: Double, cross: Double, isMeasured: Bool, gap: StackLength
    ) -> (lane: Int, delta: StackLength, oldCross: Double) {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let change: (lane: Int, delta: StackLength, oldCross: Double)
        if node.isLeaf {
            let old = node.entries[rank]
            node.entries[rank].main = main
            node.entries[rank].cross = cross
            node.entries[rank].isMeasured = isMeasured
            change = (Int(old.lane), StackLength(main) - StackLength(old.main), old.cross)
        } else {
            let (i, r) = node.child(containing: rank)
            change = resize(&node.children[i], r, main: main, cross: cross, isMeasured: isMeasured, gap: gap)
            node.refreshRow(i, lane: change.lane)
        }
        node.lanes[change.lane].sum += change.delta
        if cross >= node.lanes[change.lane].maxCross {
            node.lanes[change.lane].maxCross = cross
        } else if change.oldCross == node.lanes[change.lane].maxCross {
            node.recomputeMaxCross(lane: change.lane)
        }
        return change
    }

    /// Inserts `newEntries` (in order) at `rank`, giving them order keys next to `anchor`'s side.
    /// Their `orderKey`s are ignored; their uids must not be in the tree.
    /// - Precondition: lanes below `laneCount`.
    /// - Complexity: O(m + log n) for m entries (plus relabelling, amortized O(m log n), rare).
    public mutating func insert(contentsOf newEntries: some Collection<StackEntry>, at rank: Int, anchor: Anchor) {
        precondition(rank >= 0 && rank <= count, "rank out of range")
        let m = newEntries.count
        guard m > 0 else { return }
        let keys = makeKeys(m, at: rank, anchor: anchor)
        var run = ContiguousArray(newEntries)
        var delta = ContiguousArray(repeating: LaneSummary.empty, count: laneCount)
        for k in 0..<m {
            precondition(Int(run[k].lane) < laneCount, "lane out of range")
            run[k].orderKey = keys[k]
            let lane = Int(run[k].lane)
            delta[lane].count += 1
            delta[lane].sum += StackLength(run[k].main) + gap
            delta[lane].maxCross = max(delta[lane].maxCross, run[k].cross)
        }
        var extra = Self.insert(&root, at: rank, run[...], delta: delta, laneCount: laneCount, gap: gap)
        if !extra.isEmpty {
            extra.insert(root, at: 0)
            root = Self.buildLevels(extra, laneCount: laneCount)
        }
        for e in run { record(e.uid, e.orderKey) }
    }

    /// Inserts `run` at `rank` below `node`; returns the nodes that follow `node` when it split.
    private static func insert(
        _ node: inout StackNode, at rank: Int, _ run: ArraySlice<StackEntry>, delta: ContiguousArray<LaneSummary>, laneCount: Int,
        gap: StackLength
    ) -> ContiguousArray<StackNode> {
        if node.isLeaf {
            if node.entries.count + run.count <= leafCapacity {
                if !isKnownUniquelyReferenced(&node) { node = node.copy() }
                node.entries.insert(contentsOf: run, at: rank)
                add(delta, to: node, count: run.count)
                return []
            }
            var all = ContiguousArray<StackEntry>()
            all.reserveCapacity(node.entries.count + run.count)
            all.append(contentsOf: node.entries[..<rank])
            all.append(contentsOf: run)
            all.append(contentsOf: node.entries[rank...])
            let pieces = split(all.count, capacity: leafCapacity)
            var nodes = ContiguousArray<StackNode>()
            nodes.reserveCapacity(pieces.count)
            for piece in pieces { nodes.append(StackNode(leaf: ContiguousArray(all[piece]), laneCount: laneCount, gap: gap)) }
            node = nodes[0]
            return ContiguousArray(nodes.dropFirst())
        }
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        // The child to insert into: the first whose end is at or after `rank`.
        var r = rank
        var i = 0
        node.childInfo.withUnsafeBufferPointer { info in
            while r > info[i].count {
                r -= info[i].count
                i += 1
            }
        }
        let extra = insert(&node.children[i], at: r, run, delta: delta, laneCount: laneCount, gap: gap)
        node.refreshRow(i)
        if extra.isEmpty {
            add(delta, to: node, count: run.count)
            return []
        }
        node.replaceChildren((i + 1)..<(i + 1), with: extra)
        if node.children.count <= branchCapacity {
            add(delta, to: node, count: run.count)
            return []
        }
        let nodes = group(node.children[...], laneCount: laneCount)
        node = nodes[0]
        return ContiguousArray(nodes.dropFirst())
    }

    /// Adds the summary of `m` inserted entries to `node`'s (whose children or entries hold them).
    private static func add(_ delta: ContiguousArray<LaneSummary>, to node: StackNode, count m: Int) {
        node.count += m
        node.lanes.withUnsafeMutableBufferPointer { lanes in
            for j in lanes.indices where delta[j].count > 0 {
                lanes[j].count += delta[j].count
                lanes[j].sum += delta[j].sum
                lanes[j].maxCross = max(lanes[j].maxCross, delta[j].maxCross)
            }
        }
        if node.isLeaf {
            node.minKey = node.entries.first?.orderKey ?? 0
            node.maxKey = node.entries.last?.orderKey ?? 0
        } else {
            node.minKey = node.children.first?.minKey ?? 0
            node.maxKey = node.childInfo.last?.maxKey ?? 0
        }
    }

    /// `n` items cut into the fewest pieces of at most `capacity`, as even as possible.
    static func split(_ n: Int, capacity: Int) -> [Range<Int>] {
        let pieces = (n + capacity - 1) / capacity
        var ranges: [Range<Int>] = []
        var start = 0
        for p in 0..<pieces {
            let size = n / pieces + (p < n % pieces ? 1 : 0)
            ranges.append(start..<(start + size))
            start += size
        }
        return ranges
    }

    /// Removes and returns the entry at `rank`.
    /// - Complexity: O(log n) (O(b · log n) when nodes underflow and merge with a neighbour).
    @discardableResult
    public mutating func remove(at rank: Int) -> StackEntry {
        precondition(rank >= 0 && rank < count, "rank out of range")
        let removed = Self.remove(&root, rank, laneCount: laneCount, gap: gap)
        while !root.isLeaf && root.children.count == 1 { root = root.children[0] }
        overrides.remove(removed.uid)
        return removed
    }

    private static func remove(_ node: inout StackNode, _ rank: Int, laneCount: Int, gap: StackLength) -> StackEntry {
        if !isKnownUniquelyReferenced(&node) { node = node.copy() }
        let removed: StackEntry
        if node.isLeaf {
            removed = node.entries.remove(at: rank)
        } else {
            let (i, r) = node.child(containing: rank)
            removed = remove(&node.children[i], r, laneCount: laneCount, gap: gap)
            node.refreshRow(i, lane: Int(removed.lane))
            let child = node.children[i]
            if child.size < (child.isLeaf ? leafCapacity : branchCapacity) / 2 {
                rebalance(node, at: i, laneCount: laneCount, gap: gap)
            }
        }
        node.count -= 1
        let lane = Int(removed.lane)
        node.lanes[lane].count -= 1
        node.lanes[lane].sum -= StackLength(removed.main) + gap
        if removed.cross == node.lanes[lane].maxCross { node.recomputeMaxCross(lane: lane) }
        if node.isLeaf {
            node.minKey = node.entries.first?.orderKey ?? 0
            node.maxKey = node.entries.last?.orderKey ?? 0
        } else {
            node.minKey = node.children.first?.minKey ?? 0
            node.maxKey = node.childInfo.last?.maxKey ?? 0
        }
        return removed
    }

    /// Merges the underfull child `i` of `node` with a neighbour, or shares their entries evenly
    /// when together they are more than one node holds.
    private static func rebalance(_ node: StackNode, at i: Int, laneCount: Int, gap: StackLength) {
        guard node.children.count > 1 else { return }
        let j = i + 1 < node.children.count ? i + 1 : i - 1
        let (l, r) = (min(i, j), max(i, j))
        let left = node.children[l]
        let right = node.children[r]
        var merged = ContiguousArray<StackNode>()
        if left.isLeaf {
            let all = left.entries + right.entries
            for piece in split(all.count, capacity: leafCapacity) {
                merged.append(StackNode(leaf: ContiguousArray(all[piece]), laneCount: laneCount, gap: gap))
            }
        } else {
            let all = left.children + right.children
            for piece in split(all.count, capacity: branchCapacity) {
                merged.append(StackNode(children: ContiguousArray(all[piece]), laneCount: laneCount))
            }
        }
        node.replaceChildren(l..<(r + 1), with: merged)
    }
}
