/// Walks a tree's entries in rank order, one call at a time (`forEach` takes a closure; two
/// layouts compared item by item need two walks side by side).
struct StackCursor {
    private var path: [(node: StackNode, next: Int)] = []
    private var leaf: StackNode?
    private var index = 0
    private var running: [StackLength]
    private let gap: StackLength

    init(_ tree: StackTree) {
        running = Array(repeating: .zero, count: tree.laneCount)
        gap = tree.gap
        descend(from: tree.root)
    }

    /// Goes down the leftmost path under `node` to a leaf.
    private mutating func descend(from node: StackNode) {
        var node = node
        while !node.isLeaf {
            path.append((node, 1))
            guard let first = node.children.first else { return }
            node = first
        }
        leaf = node
        index = 0
    }

    /// The next entry and its start, nil after the last.
    /// - Complexity: O(1) amortized.
    mutating func next() -> (entry: StackEntry, start: StackLength)? {
        while true {
            if let leaf, index < leaf.entries.count {
                let e = leaf.entries[index]
                index += 1
                let lane = Int(e.lane)
                let start = running[lane]
                running[lane] += StackLength(e.main) + gap
                return (e, start)
            }
            leaf = nil
            // Up to the first ancestor with a child left, then down its leftmost path.
            while let last = path.last, last.next >= last.node.children.count { path.removeLast() }
            guard let top = path.last else { return nil }
            path[path.count - 1].next += 1
            descend(from: top.node.children[top.next])
        }
    }
}
