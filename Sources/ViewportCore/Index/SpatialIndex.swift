/// A static R-tree over item rects, packed bottom-up with Sort-Tile-Recursive (STR), answering
/// "which items intersect this region" in two dimensions.
///
/// STR sorts the entries of a level by x into vertical slices and each slice by y, then cuts runs
/// of `fanout` entries into nodes. Lists, bars and grids pack into nodes that do not overlap, so a
/// query visits O(log n) nodes plus the ones holding results: O(log n + k). Arbitrary overlapping
/// rects stay correct; their cost grows only with how many nodes a region really overlaps.
///
/// Inner node boxes are stored as `Float` rounded outward (a conservative filter at half the
/// memory and bandwidth of `Double`). The leaves hold no boxes of their own: each is the position
/// of its rect in the layout's `RectStore` (shared, not copied), tested exactly against the closed
/// query box, so a layout keeps every rect once. Callers still test their own predicate.
///
/// Memory: 4 bytes of rect position per leaf (plus 4 of reported number for a layout with
/// sections), and 24 bytes per inner node: about 1.5 bytes per item at fanout 16.
public final class SpatialIndex: @unchecked Sendable {
    // @unchecked: every buffer is written once in `init` and only read afterwards.
    /// Entries per node. 16 measured best among 8/16/32 for small strip queries on 1M items
    /// (see viewport-bench).
    public static let fanout = 16

    /// The rects the leaves point at.
    private let rects: RectStore
    /// The rect (position in `rects`) of each leaf, in tree order.
    private let leafItems: UnsafeMutableBufferPointer<Int32>
    /// What a query reports for each leaf, in tree order, when that is not its rect's position
    /// (the layout positions of a layout with sections); empty otherwise.
    private let leafNumbers: UnsafeMutableBufferPointer<Int32>
    /// Inner node boxes, level 1 (parents of leaves) first, the root last.
    private let nodeBoxes: UnsafeMutableBufferPointer<Float>
    /// Child range of each inner node: `[childStart[i], childEnd[i])`, into the leaves for nodes
    /// below `levelOneCount`, into the inner nodes otherwise.
    private let childStart: UnsafeMutableBufferPointer<Int32>
    private let childEnd: UnsafeMutableBufferPointer<Int32>
    private let levelOneCount: Int
    /// Deepest stack a traversal can need.
    private let maxStack: Int

    /// Builds the index over `rects`; queries report each rect's position.
    /// - Complexity: O(n log n).
    public convenience init(rects: ContiguousArray<Rect>) {
        self.init(store: RectStore(rects))
    }

    /// Builds the index over `store`, which it keeps (its arrays are shared, not copied).
    /// `numbers`, when given, are what queries report for each rect (default: its position).
    /// - Complexity: O(n log n).
    init(store: RectStore, numbers: ContiguousArray<Int32>? = nil) {
        let n = store.count
        rects = store
        var boxes = ContiguousArray<Float>(repeating: 0, count: n * 4)
        boxes.withUnsafeMutableBufferPointer { boxes in
            for i in 0..<n {
                let r = store[i]
                boxes[i * 4] = Float.down(r.x)
                boxes[i * 4 + 1] = Float.down(r.y)
                boxes[i * 4 + 2] = Float.up(r.x + r.width)
                boxes[i * 4 + 3] = Float.up(r.y + r.height)
            }
        }
        let fanout = SpatialIndex.fanout
        var (order, parentBoxes) = SpatialIndex.pack(boxes: boxes, fanout: fanout)
        boxes = []
        leafNumbers = SpatialIndex.buffer(numbers.map { numbers in ContiguousArray(order.map { numbers[Int($0)] }) } ?? [])
        leafItems = SpatialIndex.buffer(order)

        var allBoxes = ContiguousArray<Float>()
        var allStart = ContiguousArray<Int32>()
        var allEnd = ContiguousArray<Int32>()
        // Current level: boxes and child ranges of its nodes, not yet stored.
        var levelCount = (n + fanout - 1) / fanout
        var levelStart = ContiguousArray<Int32>((0..<levelCount).map { Int32($0 * fanout) })
        var levelEnd = ContiguousArray<Int32>((0..<levelCount).map { Int32(min($0 * fanout + fanout, n)) })
        var levelBoxes = parentBoxes
        levelOneCount = levelCount
        var depth = 1
        while levelCount > 1 {
            (order, parentBoxes) = SpatialIndex.pack(boxes: levelBoxes, fanout: fanout)
            let base = allStart.count
            allBoxes.append(contentsOf: SpatialIndex.permute(levelBoxes, by: order, stride: 4))
            allStart.append(contentsOf: SpatialIndex.permute(levelStart, by: order, stride: 1))
            allEnd.append(contentsOf: SpatialIndex.permute(levelEnd, by: order, stride: 1))
            let count = levelCount
            levelCount = (count + fanout - 1) / fanout
            levelStart = ContiguousArray((0..<levelCount).map { Int32(base + $0 * fanout) })
            levelEnd = ContiguousArray((0..<levelCount).map { Int32(base + min($0 * fanout + fanout, count)) })
            levelBoxes = parentBoxes
            depth += 1
        }
        if levelCount == 1 {
            allBoxes.append(contentsOf: levelBoxes)
            allStart.append(contentsOf: levelStart)
            allEnd.append(contentsOf: levelEnd)
        }
        nodeBoxes = SpatialIndex.buffer(allBoxes)
        childStart = SpatialIndex.buffer(allStart)
        childEnd = SpatialIndex.buffer(allEnd)
        maxStack = depth * fanout + 1
    }

    deinit {
        leafItems.deallocate()
        leafNumbers.deallocate()
        nodeBoxes.deallocate()
        childStart.deallocate()
        childEnd.deallocate()
    }

    private static func buffer<T>(_ values: ContiguousArray<T>) -> UnsafeMutableBufferPointer<T> {
        let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: values.count)
        _ = buffer.initialize(from: values)
        return buffer
    }

    public var count: Int { leafItems.count }

    /// Bytes held by the index (the rects it reads are the layout's, not counted).
    public var memoryBytes: Int {
        (leafItems.count + leafNumbers.count + nodeBoxes.count + childStart.count + childEnd.count) * 4
    }

    /// Calls `body` with every item whose rect touches the closed box `[minX, maxX] × [minY, maxY]`,
    /// and its rect (a superset of the items strictly intersecting it; the caller filters exactly).
    /// - Complexity: O(log n + k) for layouts whose items do not pile up on each other.
    @inline(__always)
    public func forEachCandidate(
        minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int, Rect) -> Void
    ) {
        let items = leafItems
        let numbers = leafNumbers
        /// Leaf `i`'s report: its number, or its rect's position.
        @inline(__always) func number(_ i: Int, _ k: Int) -> Int { numbers.isEmpty ? k : Int(numbers[i]) }
        if rects.isCompact {
            rects.floats.withUnsafeBufferPointer { f in
                forEachLeafRange(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { start, end in
                    for i in start..<end {
                        let k = Int(items[i])
                        let b = k &* 4
                        let x = Double(f[b])
                        let y = Double(f[b &+ 1])
                        let w = Double(f[b &+ 2])
                        let h = Double(f[b &+ 3])
                        if x <= maxX && x + w >= minX && y <= maxY && y + h >= minY {
                            body(number(i, k), Rect(x: x, y: y, width: w, height: h))
                        }
                    }
                }
            }
        } else {
            rects.doubles.withUnsafeBufferPointer { d in
                forEachLeafRange(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { start, end in
                    for i in start..<end {
                        let k = Int(items[i])
                        let r = d[k]
                        if r.x <= maxX && r.x + r.width >= minX && r.y <= maxY && r.y + r.height >= minY { body(number(i, k), r) }
                    }
                }
            }
        }
    }

    /// Calls `body(start, end)` with the leaf range of every level-one node whose box touches the
    /// closed box.
    /// - Complexity: O(log n + k/fanout) for layouts whose items do not pile up on each other.
    @inline(__always)
    private func forEachLeafRange(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int, Int) -> Void) {
        guard !childStart.isEmpty, minX <= maxX, minY <= maxY else { return }
        let qMinX = Float.down(minX)
        let qMinY = Float.down(minY)
        let qMaxX = Float.up(maxX)
        let qMaxY = Float.up(maxY)
        let root = childStart.count - 1
        let levelOne = levelOneCount
        let nodes = nodeBoxes
        let starts = childStart
        let ends = childEnd
        // The root's own box is checked like any child.
        let r = root * 4
        guard nodes[r] <= qMaxX, nodes[r + 2] >= qMinX, nodes[r + 1] <= qMaxY, nodes[r + 3] >= qMinY else { return }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: maxStack) { stack in
            stack[0] = root
            var top = 1
            while top > 0 {
                top -= 1
                let node = stack[top]
                let start = Int(starts[node])
                let end = Int(ends[node])
                if node < levelOne {
                    body(start, end)
                } else {
                    for c in start..<end {
                        let b = c &* 4
                        if nodes[b] <= qMaxX && nodes[b &+ 2] >= qMinX && nodes[b &+ 1] <= qMaxY && nodes[b &+ 3] >= qMinY {
                            stack[top] = c
                            top &+= 1
                        }
                    }
                }
            }
        }
    }

    // MARK: Packing

    private struct SortEntry {
        var key: UInt64
        var index: Int32
    }

    /// STR order of `boxes` (4 floats each) and the boxes of the nodes cut from that order.
    private static func pack(boxes: ContiguousArray<Float>, fanout: Int) -> (ContiguousArray<Int32>, ContiguousArray<Float>) {
        let count = boxes.count / 4
        let nodeCount = (count + fanout - 1) / fanout
        let sliceCount = max(1, Int(Double(nodeCount).squareRoot().rounded(.up)))
        let sliceSize = fanout * ((nodeCount + sliceCount - 1) / sliceCount)

        func center(_ i: Int, _ axis: Int) -> Float {
            let lo = boxes[i * 4 + axis]
            let hi = boxes[i * 4 + axis + 2]
            let c = lo / 2 + hi / 2
            return c.isFinite ? c : (lo.isFinite ? lo : hi)
        }
        var entries = ContiguousArray<SortEntry>()
        entries.reserveCapacity(count)
        for i in 0..<count {
            entries.append(SortEntry(key: UInt64(center(i, 0).orderedBits) << 32 | UInt64(center(i, 1).orderedBits), index: Int32(i)))
        }
        entries.sort { $0.key < $1.key }
        var sliceStart = 0
        while sliceStart < count {
            let sliceEnd = min(sliceStart + sliceSize, count)
            for p in sliceStart..<sliceEnd {
                let i = Int(entries[p].index)
                entries[p].key = UInt64(center(i, 1).orderedBits) << 32 | UInt64(center(i, 0).orderedBits)
            }
            entries[sliceStart..<sliceEnd].sort { $0.key < $1.key }
            sliceStart = sliceEnd
        }
        let order = ContiguousArray(entries.map(\.index))
        var parents = ContiguousArray<Float>(repeating: 0, count: nodeCount * 4)
        for node in 0..<nodeCount {
            var minX = Float.infinity
            var minY = Float.infinity
            var maxX = -Float.infinity
            var maxY = -Float.infinity
            for p in (node * fanout)..<min(node * fanout + fanout, count) {
                let i = Int(order[p]) * 4
                minX = min(minX, boxes[i])
                minY = min(minY, boxes[i + 1])
                maxX = max(maxX, boxes[i + 2])
                maxY = max(maxY, boxes[i + 3])
            }
            parents[node * 4] = minX
            parents[node * 4 + 1] = minY
            parents[node * 4 + 2] = maxX
            parents[node * 4 + 3] = maxY
        }
        return (order, parents)
    }

    private static func permute<T>(_ values: ContiguousArray<T>, by order: ContiguousArray<Int32>, stride: Int) -> ContiguousArray<T> {
        var out = ContiguousArray<T>()
        out.reserveCapacity(values.count)
        for old in order {
            let base = Int(old) * stride
            for k in 0..<stride { out.append(values[base + k]) }
        }
        return out
    }
}

extension Float {
    /// The largest float not above `value` (a conservative lower bound).
    @inline(__always)
    static func down(_ value: Double) -> Float {
        let f = Float(value)
        return Double(f) > value ? f.nextDown : f
    }

    /// The smallest float not below `value` (a conservative upper bound).
    @inline(__always)
    static func up(_ value: Double) -> Float {
        let f = Float(value)
        return Double(f) < value ? f.nextUp : f
    }

    /// Bits that sort like the float itself (negative values flipped).
    var orderedBits: UInt32 {
        let bits = bitPattern
        return bits & 0x8000_0000 != 0 ? ~bits : bits | 0x8000_0000
    }
}
