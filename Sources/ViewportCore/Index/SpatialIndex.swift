import CPrefetch

/// A static index over item rects answering "which items intersect this region" in two
/// dimensions: a run sorted along one axis when the rects allow it, else an R-tree packed
/// bottom-up with Sort-Tile-Recursive (STR).
///
/// Sorted run: most layouts are lists and feeds whose items, in layout order, start nowhere
/// before the previous one along the scroll axis. Their rects stay in that order and `reach[i]`
/// is the farthest far edge among rects `0...i` (non-decreasing), so a query binary-searches the
/// first rect that can reach its near edge and scans on until rects start past its far edge. The
/// build takes this form only when that scan passes over at most `maxSortedSlack` rects started
/// before any near edge (items beside each other, or one tall item, would make every scan long);
/// then a query costs O(log n + k + `maxSortedSlack`), with no tree to descend: on 1M items the
/// tree's scattered nodes were most of a jump's cost (cache misses).
///
/// R-tree: STR sorts the entries of a level by x into vertical slices and each slice by y, then
/// cuts runs of `fanout` entries into nodes. Lists, bars and grids pack into nodes that do not
/// overlap, so a query visits O(log n) nodes plus the ones holding results: O(log n + k).
/// Arbitrary overlapping rects stay correct; their cost grows only with how many nodes a region
/// really overlaps.
///
/// Inner node boxes and the reach are stored as `Float` rounded outward (a conservative filter at
/// half the memory and bandwidth of `Double`). Neither form keeps boxes of its own for the items:
/// each leaf is the position of its rect in the layout's `RectStore` (shared, not copied), tested
/// exactly against the closed query box, so a layout keeps every rect once. Both forms report the
/// same items (in different orders). Callers still test their own predicate.
///
/// Memory: a sorted run keeps 4.27 bytes of reach per item (with its `ReachTree`); an R-tree 4 bytes
/// of rect position per leaf and 24 bytes per inner node (about 1.5 bytes per item at fanout 16).
/// Either keeps 4 more of reported number per item for a layout with sections.
public final class SpatialIndex: @unchecked Sendable {
    // @unchecked: every buffer is written once in `init` and only read afterwards.
    /// Entries per node. 16 measured best among 8/16/32 for small strip queries on 1M items
    /// (see viewport-bench).
    public static let fanout = 16

    /// Most rects a sorted run's scan may pass that started before the query's near edge (those
    /// still reaching it, and those the reach bound cannot skip). A two-column feed needs ~6, a
    /// list ~2; a grid needs about twice its columns.
    static let maxSortedSlack = 32

    /// The rects the leaves point at.
    private let rects: RectStore
    /// The rect (position in `rects`) of each leaf, in tree order; empty for a sorted run (leaf
    /// `i` is rect `i`).
    private let leafItems: UnsafeMutableBufferPointer<Int32>
    /// What a query reports for each leaf, in tree order (in rect order for a sorted run), when
    /// that is not its rect's position (the layout positions of a layout with sections); empty
    /// otherwise.
    private let leafNumbers: UnsafeMutableBufferPointer<Int32>
    /// Inner node boxes, level 1 (parents of leaves) first, the root last; empty for a sorted run.
    private let nodeBoxes: UnsafeMutableBufferPointer<Float>
    /// Child range of each inner node: `[childStart[i], childEnd[i])`, into the leaves for nodes
    /// below `levelOneCount`, into the inner nodes otherwise.
    private let childStart: UnsafeMutableBufferPointer<Int32>
    private let childEnd: UnsafeMutableBufferPointer<Int32>
    private let levelOneCount: Int
    /// Deepest stack a traversal can need.
    private let maxStack: Int
    /// A sorted run's axis as the offset of its low edge in a box (0 x, 1 y); -1 for an R-tree.
    private let sortedAxis: Int
    /// A sorted run's farthest far edge along `sortedAxis` (rounded up to `Float`) among rects
    /// `0...i`; empty for an R-tree.
    private let reach: UnsafeMutableBufferPointer<Float>
    /// The levels above `reach` (the last reach of each block of `reachBlock`, then the last of
    /// each block of those, ...) that find a query's block (`reach` starts on a cache line and
    /// is padded with +infinity to whole blocks, so a block is one line). On 1M items, a binary
    /// search over the whole 4 MB `reach` missed the cache on most of its ~20 steps, a tenth of a
    /// random jump's cost; one over the 62,500 block ends mispredicted half its ~16 branches.
    private let reachTree: ReachTree
    /// Reaches per block: 16 `Float`s, one 64-byte cache line.
    static let reachBlock = ReachTree.width
    /// Number of items.
    public let count: Int

    /// Whether the index is a sorted run (else an R-tree), for tests.
    package var isSortedRun: Bool { sortedAxis >= 0 }

    /// Builds the index over `rects`; queries report each rect's position, or `numbers[i]` for
    /// rect `i` when given.
    /// - Complexity: O(n) for a sorted run, O(n log n) for an R-tree.
    public convenience init(rects: ContiguousArray<Rect>, numbers: ContiguousArray<Int32>? = nil) {
        self.init(store: RectStore(rects), numbers: numbers)
    }

    /// Builds the index over `store`, which it keeps (its arrays are shared, not copied).
    /// `numbers`, when given, are what queries report for each rect (default: its position).
    /// - Complexity: O(n) for a sorted run, O(n log n) for an R-tree.
    init(store: RectStore, numbers: ContiguousArray<Int32>? = nil) {
        let n = store.count
        rects = store
        count = n
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
        if let run = SpatialIndex.sortedRun(boxes: boxes) {
            sortedAxis = run.axis
            reach = SpatialIndex.lineAlignedBuffer(run.reach)
            reachTree = ReachTree(reach: UnsafeBufferPointer(reach))
            leafNumbers = SpatialIndex.buffer(numbers ?? [])
            leafItems = SpatialIndex.buffer([])
            nodeBoxes = SpatialIndex.buffer([])
            childStart = SpatialIndex.buffer([])
            childEnd = SpatialIndex.buffer([])
            levelOneCount = 0
            maxStack = 0
            return
        }
        sortedAxis = -1
        reach = SpatialIndex.lineAlignedBuffer([])
        reachTree = ReachTree(reach: UnsafeBufferPointer(reach))
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
        UnsafeMutableRawPointer(reach.baseAddress)?.deallocate()
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

    /// A copy of `values` starting on a 64-byte boundary and followed by +infinity up to a whole
    /// block (a block of it when empty), so that `ReachTree.countBelow` can read any block whole
    /// (free it through its raw pointer). The buffer's count is `values.count`.
    private static func lineAlignedBuffer(_ values: ContiguousArray<Float>) -> UnsafeMutableBufferPointer<Float> {
        let capacity = max(reachBlock, ReachTree.padded(values.count))
        let raw = UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<Float>.stride, alignment: 64)
        let whole = UnsafeMutableBufferPointer(start: raw.bindMemory(to: Float.self, capacity: capacity), count: capacity)
        let buffer = UnsafeMutableBufferPointer(rebasing: whole[..<values.count])
        _ = buffer.initialize(from: values)
        UnsafeMutableBufferPointer(rebasing: whole[values.count...]).initialize(repeating: .infinity)
        return buffer
    }

    /// Bytes held by the index (the rects it reads are the layout's, not counted).
    public var memoryBytes: Int {
        (leafItems.count + leafNumbers.count + nodeBoxes.count + childStart.count + childEnd.count + ReachTree.padded(reach.count)) * 4
            + (sortedAxis >= 0 ? reachTree.memoryBytes : 0)
    }

    /// Calls `body` with every item whose rect touches the closed box `[minX, maxX] × [minY, maxY]`,
    /// and its rect (a superset of the items strictly intersecting it; the caller filters exactly).
    /// `start`: from ``prefetchQuery(minX:minY:)`` for the same near edge, saves a search.
    /// - Complexity: O(log n + k) for layouts whose items do not pile up on each other (a sorted
    ///   run: O(log n + k + `maxSortedSlack`) for queries spanning the layout across its axis).
    @inline(__always)
    public func forEachCandidate(
        minX: Double, minY: Double, maxX: Double, maxY: Double, start: QueryStart? = nil, _ body: (Int, Rect) -> Void
    ) {
        if rects.form == .floats {
            rects.floats.withUnsafeBufferPointer { f in
                visit(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start, rect: { k in
                    let b = k &* 4
                    return Rect(x: Double(f[b]), y: Double(f[b &+ 1]), width: Double(f[b &+ 2]), height: Double(f[b &+ 3]))
                }, address: { k in f.baseAddress.map { UnsafeRawPointer($0 + k &* 4) } }, body)
            }
        } else if rects.form == .floatsWithBases {
            forEachCompactCandidateWithBases(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start, body)
        } else {
            rects.wide.withUnsafeBufferPointer { d in
                visit(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start, rect: { k in
                    let b = k &* 4
                    return Rect(x: d[b], y: d[b &+ 1], width: d[b &+ 2], height: d[b &+ 3])
                }, address: { k in d.baseAddress.map { UnsafeRawPointer($0 + k &* 4) } }, body)
            }
        }
    }

    /// `forEachCandidate` over the compact store with bases (a layout past 2^24 pt): out of line,
    /// so that the common forms' code stays as small as it was.
    @inline(never)
    private func forEachCompactCandidateWithBases(
        minX: Double, minY: Double, maxX: Double, maxY: Double, start: QueryStart?, _ body: (Int, Rect) -> Void
    ) {
        rects.floats.withUnsafeBufferPointer { f in
            let address = { (k: Int) in f.baseAddress.map { UnsafeRawPointer($0 + k &* 4) } }
            guard sortedAxis >= 0 else {
                // An R-tree past 2^24 pt (rare: a tall layout that is not a list) reads each rect
                // through the store.
                visit(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start, rect: { k in rects[k] }, address: address, body)
                return
            }
            guard minX <= maxX, minY <= maxY else { return }
            let first = firstReaching(Float.down(sortedAxis == 0 ? minX : minY), start: start, prefetch: address)
            scanCompactRun(from: first, minX: minX, minY: minY, maxX: maxX, maxY: maxY, floats: f, body)
        }
    }

    /// A sorted run's scan over the compact store with bases, from rect `first`: block by block (of
    /// `RectStore.blockSize`), the query moves into the block's offsets, widened by a few ulps
    /// so that no rect the closed-box test keeps is missed (a hair more may come: callers test
    /// exactly), and the rects are tested as stored; only the ones reported move back out
    /// (`base + offset`, exact). Moving each rect out before its test instead (two more
    /// additions on the scan's path) made small steps 20 % slower.
    @inline(__always)
    private func scanCompactRun(
        from first: Int, minX: Double, minY: Double, maxX: Double, maxY: Double, floats f: UnsafeBufferPointer<Float>,
        _ body: (Int, Rect) -> Void
    ) {
        let numbers = leafNumbers
        let axis = sortedAxis
        let n = count
        // The build found the run sorted by `Float.down` of the low edges, and a rect whose low
        // edge is at or past `stop` has `Float.down(low) > Float.up(far edge)`: all after it too.
        let stop = Double(Float.up(axis == 0 ? maxX : maxY).nextUp)
        var k = first
        while k < n {
            let block = k &>> RectStore.blockShift
            let end = min((block &+ 1) &<< RectStore.blockShift, n)
            let bx = rects.wide[block &* 2]
            let by = rects.wide[block &* 2 &+ 1]
            // `above(a - b)` is not below the exact difference (nor `below(a, b)` above it, less
            // any rounding of a far edge's sum): what passes exactly passes here.
            let highX = Self.above(maxX - bx)
            let highY = Self.above(maxY - by)
            let lowX = Self.below(minX, minus: bx)
            let lowY = Self.below(minY, minus: by)
            let past = Self.above(stop - (axis == 0 ? bx : by))
            while k < end {
                let b = k &* 4
                let x = Double(f[b])
                let y = Double(f[b &+ 1])
                let w = Double(f[b &+ 2])
                let h = Double(f[b &+ 3])
                if (axis == 0 ? x : y) >= past { return }
                if x <= highX && x + w >= lowX && y <= highY && y + h >= lowY {
                    body(numbers.isEmpty ? k : Int(numbers[k]), Rect(x: bx + x, y: by + y, width: w, height: h))
                }
                k &+= 1
            }
        }
    }

    /// A `Double` not below the exact value of the difference that rounded to `difference` (the
    /// next one up: rounding to nearest moves less than that).
    @inline(__always)
    static func above(_ difference: Double) -> Double { difference.nextUp }

    /// A bound for an offset's far edge against a near edge `value` moved by `-base`: for an
    /// offset `o` and size `s` with `fl(base + o + s) >= value` (the test on the rect moved out,
    /// each sum rounded), `fl(o + s) >= below(value, minus: base)`. The rounding of each of
    /// those sums is within 2^-53 of its magnitude, and near the bound every magnitude is within
    /// a few times `|value| + |base|`: 2^-50 of that covers them (farther rects pass anyway).
    @inline(__always)
    static func below(_ value: Double, minus base: Double) -> Double {
        (value - base) - (abs(value) + abs(base)) * 0x1p-50
    }

    /// `forEachCandidate` over rects read by `rect(k)` (the store's `Float`s or `Double`s), which
    /// start at `address(k)`.
    @inline(__always)
    private func visit(
        minX: Double, minY: Double, maxX: Double, maxY: Double, start: QueryStart?, rect: (Int) -> Rect, address: (Int) -> UnsafeRawPointer?,
        _ body: (Int, Rect) -> Void
    ) {
        let numbers = leafNumbers
        if sortedAxis >= 0 {
            guard minX <= maxX, minY <= maxY else { return }
            let axis = sortedAxis
            let n = count
            let first = firstReaching(Float.down(axis == 0 ? minX : minY), start: start, prefetch: address)
            let far = Float.up(axis == 0 ? maxX : maxY)
            var k = first
            while k < n {
                let r = rect(k)
                // The build found the run sorted by `Float.down` of the low edges: stop by the same.
                if Float.down(axis == 0 ? r.x : r.y) > far { break }
                if r.x <= maxX && r.x + r.width >= minX && r.y <= maxY && r.y + r.height >= minY {
                    body(numbers.isEmpty ? k : Int(numbers[k]), r)
                }
                k &+= 1
            }
            return
        }
        let items = leafItems
        forEachLeafRange(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { start, end in
            for i in start..<end {
                let k = Int(items[i])
                let r = rect(k)
                if r.x <= maxX && r.x + r.width >= minX && r.y <= maxY && r.y + r.height >= minY {
                    body(numbers.isEmpty ? k : Int(numbers[i]), r)
                }
            }
        }
    }

    /// Starts loading what a query whose box starts at (`minX`, `minY`) reads first in a sorted
    /// run, its block of reaches and that block's rects, and answers where that query starts
    /// (pass it to ``forEachCandidate(minX:minY:maxX:maxY:start:_:)``), with the block's first
    /// position; nil for an R-tree, a run with reported numbers, or a box past every reach. A
    /// caller with other work to do before the query overlaps these cache misses with it.
    /// - Complexity: O(log n).
    public func prefetchQuery(minX: Double, minY: Double) -> (start: QueryStart, first: Int)? {
        guard sortedAxis >= 0, leafNumbers.isEmpty, let reaches = reach.baseAddress else { return nil }
        let near = Float.down(sortedAxis == 0 ? minX : minY)
        let block = reachTree.firstBlock(reaching: near)
        guard block < reachTree.blockCount else { return nil }
        let first = block &* Self.reachBlock
        viewportd_prefetch(reaches + first)
        let end = min(first &+ Self.reachBlock, count)
        if rects.isCompact {
            rects.floats.withUnsafeBufferPointer { f in
                guard let base = f.baseAddress else { return }
                Self.prefetchLines(from: UnsafeRawPointer(base + first &* 4), to: UnsafeRawPointer(base + end &* 4))
            }
        } else {
            rects.wide.withUnsafeBufferPointer { d in
                guard let base = d.baseAddress else { return }
                Self.prefetchLines(from: UnsafeRawPointer(base + first &* 4), to: UnsafeRawPointer(base + end &* 4))
            }
        }
        return (QueryStart(index: ObjectIdentifier(self), near: near, block: block), first)
    }

    /// Prefetches every cache line of `[from, to)`.
    @inline(__always)
    private static func prefetchLines(from: UnsafeRawPointer, to: UnsafeRawPointer) {
        var line = UnsafeRawPointer(bitPattern: UInt(bitPattern: from) & ~63) ?? from
        while line < to {
            viewportd_prefetch(line)
            line += 64
        }
    }

    /// A sorted run's first rect whose reach gets to `near` (reach never decreases): no rect
    /// before it touches a query whose near edge is `near`. Found in two steps: the first block
    /// whose last reach gets there (from `reachTree`; `hint`'s block when it is this index's for
    /// the same edge), then the first reach in that block (counted in its line).
    /// - Complexity: O(log n).
    ///
    /// Once the block is known, the loads of its rects (which the scan reads next) start while
    /// the block's own reaches load: on a random jump over 1M items both miss the cache, and
    /// waiting for them one after the other was a tenth of the jump.
    @inline(__always)
    private func firstReaching(_ near: Float, start hint: QueryStart?, prefetch address: (Int) -> UnsafeRawPointer?) -> Int {
        guard let reaches = reach.baseAddress else { return count }
        if let hint, hint.near == near, hint.index == ObjectIdentifier(self) {
            // `prefetchQuery` found this block and started loading its rects already.
            let start = hint.block &* Self.reachBlock
            return start &+ ReachTree.countBelow(near, in: reaches + start)
        }
        let block = reachTree.firstBlock(reaching: near)
        guard block < reachTree.blockCount else { return count }
        let start = block &* Self.reachBlock
        let length = min(Self.reachBlock, count &- start)
        if let first = address(start), let last = address(start &+ length &- 1) {
            Self.prefetchLines(from: first, to: last + 1)
        }
        // The block's padding (+infinity) is not below `near`: the count stays inside it.
        return start &+ ReachTree.countBelow(near, in: reaches + start)
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

    /// The axis (0 x, 1 y) and reach array of a sorted run over `boxes` in their order, when one
    /// qualifies: low edges never decrease along the axis, and no query's scan passes more than
    /// `maxSortedSlack` leaves started before its near edge. Of both axes, the one with less slack.
    ///
    /// A query from near edge `v` scans from `L(v)`, the first leaf whose reach gets to `v`; the
    /// leaves before `U(v)`, the first one starting after `v`, started before `v`. For `v` from a
    /// leaf's low edge `low[i]` up to the next, `U(v) ≤ i + 1` and `L(v) ≥ L(low[i])`, so the
    /// slack is at most `max over i of i + 1 - L(low[i])`, found with one pass (both grow with i).
    /// - Complexity: O(n).
    private static func sortedRun(boxes: ContiguousArray<Float>) -> (axis: Int, reach: ContiguousArray<Float>)? {
        let n = boxes.count / 4
        var best: (axis: Int, reach: ContiguousArray<Float>, slack: Int)?
        for axis in [1, 0] {
            var reach = ContiguousArray<Float>()
            reach.reserveCapacity(n)
            var sorted = true
            var far = -Float.infinity
            for i in 0..<n {
                let low = boxes[i * 4 + axis]
                // `!(low >= previous)` also refuses NaN.
                if i > 0 && !(low >= boxes[(i - 1) * 4 + axis]) {
                    sorted = false
                    break
                }
                far = max(far, boxes[i * 4 + axis + 2])
                reach.append(far)
            }
            guard sorted else { continue }
            var slack = 0
            var j = 0
            for i in 0..<n {
                let low = boxes[i * 4 + axis]
                while j < i && reach[j] < low { j += 1 }
                slack = max(slack, i + 1 - j)
                if slack > maxSortedSlack { break }
            }
            if slack <= maxSortedSlack && slack < (best?.slack ?? .max) { best = (axis, reach, slack) }
        }
        return best.map { (axis: $0.axis, reach: $0.reach) }
    }

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
