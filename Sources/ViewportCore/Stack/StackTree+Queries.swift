/// Queries along the axis. Within a lane, starts and ends never decrease with rank (sizes and
/// spacing are not negative), so each is a descent that skips the children with no entry of the
/// lane and uses their lane sums for the positions.
extension StackTree {
    /// A set of lanes as a bit mask (bit j: lane j).
    public typealias Lanes = UInt64

    /// Every lane of a tree with `laneCount` lanes.
    @inline(__always)
    static func allLanes(_ laneCount: Int) -> Lanes { laneCount >= 64 ? .max : (1 << UInt64(laneCount)) - 1 }

    /// The last entry of `lane` whose start satisfies `isBefore`, which must hold for a prefix of
    /// the lane (as `start <= x` does), with its rank and start.
    /// - Complexity: O(log n).
    public func last(inLane lane: Int, whereStart isBefore: (StackLength) -> Bool) -> (rank: Int, start: StackLength)? {
        guard root.lanes[lane].count > 0 else { return nil }
        let laneCount = self.laneCount
        let gap = self.gap
        var base = 0
        var acc = StackLength.zero
        var node = NodeRef(root)
        while !node.isLeaf {
            // The last child whose first entry of the lane (at `a`) satisfies the predicate.
            let chosen: (node: NodeRef, base: Int, acc: StackLength)? = node.read { node in
                var chosen: (index: Int, base: Int, acc: StackLength)? = nil
                var a = acc
                var b = base
                for i in 0..<node.childInfo.count {
                    let s = node.childLanes[i * laneCount + lane]
                    if s.count > 0 {
                        guard isBefore(a) else { break }
                        chosen = (i, b, a)
                    }
                    a += s.sum
                    b += node.childInfo[i].count
                }
                return chosen.map { (NodeRef(node.children[$0.index]), $0.base, $0.acc) }
            }
            guard let chosen else { return nil }
            (node, base, acc) = chosen
        }
        return node.read { leaf in
            var found: (rank: Int, start: StackLength)? = nil
            for (j, e) in leaf.entries.enumerated() where Int(e.lane) == lane {
                guard isBefore(acc) else { break }
                found = (base + j, acc)
                acc += StackLength(e.main) + gap
            }
            return found
        }
    }

    /// The first entry of `lane` at `rank` or after it, with its rank and start.
    /// - Complexity: O(log n).
    public func first(inLane lane: Int, from rank: Int) -> (rank: Int, start: StackLength)? {
        guard rank < count, root.lanes[lane].count > 0 else { return nil }
        return Self.first(NodeRef(root), base: 0, acc: .zero, lane: lane, from: max(rank, 0), gap: gap)
    }

    private static func first(
        _ ref: NodeRef, base: Int, acc: StackLength, lane: Int, from rank: Int, gap: StackLength
    ) -> (rank: Int, start: StackLength)? {
        ref.read { node in
            var a = acc
            if node.isLeaf {
                for (j, e) in node.entries.enumerated() where Int(e.lane) == lane {
                    if base + j >= rank { return (base + j, a) }
                    a += StackLength(e.main) + gap
                }
                return nil
            }
            let laneCount = node.laneCount
            var b = base
            for i in 0..<node.childInfo.count {
                let s = node.childLanes[i * laneCount + lane]
                let end = b + node.childInfo[i].count
                // Only the child holding `rank` can come back empty handed: the search goes on.
                if end > rank && s.count > 0, let found = first(NodeRef(node.children[i]), base: b, acc: a, lane: lane, from: rank, gap: gap) {
                    return found
                }
                a += s.sum
                b = end
            }
            return nil
        }
    }

    /// The first entry of `lane` whose end (`start + main`) is at least `low`, with its rank and
    /// start.
    /// - Complexity: O(log n).
    func first(inLane lane: Int, endingAtOrAfter low: StackLength) -> (rank: Int, start: StackLength)? {
        guard root.lanes[lane].count > 0, root.lanes[lane].sum - gap >= low else { return nil }
        let laneCount = self.laneCount
        let gap = self.gap
        var base = 0
        var acc = StackLength.zero
        var node = NodeRef(root)
        while true {
            let next: NodeRef?? = node.read { node in
                guard !node.isLeaf else { return .some(nil) }
                // The first child whose last entry of the lane ends at `acc + sum − gap` ≥ `low`.
                for i in 0..<node.childInfo.count {
                    let s = node.childLanes[i * laneCount + lane]
                    if s.count > 0 && acc + s.sum - gap >= low { return .some(NodeRef(node.children[i])) }
                    acc += s.sum
                    base += node.childInfo[i].count
                }
                return nil
            }
            guard let next else { return nil }
            guard let child = next else { break }
            node = child
        }
        return node.read { leaf in
            for (j, e) in leaf.entries.enumerated() where Int(e.lane) == lane {
                let size = StackLength(e.main)
                if acc + size >= low { return (base + j, acc) }
                acc += size + gap
            }
            return nil
        }
    }

    /// Calls `body` in rank order with every entry of `lanes` whose span `[start, start + main]`
    /// touches the closed interval `[low, high]` (zero-size entries at its edges included), with
    /// its rank and start.
    ///
    /// Each lane's matches are the lane's entries in one rank range (two descents find it); one
    /// walk over the union visits only the subtrees that hold a lane's entry in that lane's range,
    /// so a lane with many entries between another lane's matches costs nothing.
    /// - Complexity: O(lanes · log n + k) for k matches (when matches of a lane lie far apart
    ///   among other lanes' entries, up to O(log n) a match).
    public func forEach(
        touching low: StackLength, _ high: StackLength, lanes: Lanes = .max,
        _ body: (_ rank: Int, _ entry: StackEntry, _ start: StackLength) -> Void
    ) {
        var examined = 0
        forEach(touching: low, high, lanes: lanes, examined: &examined, body)
    }

    /// `forEach(touching:)`, counting the entries it examines in leaves.
    func forEach(
        touching low: StackLength, _ high: StackLength, lanes: Lanes, examined: inout Int,
        _ body: (_ rank: Int, _ entry: StackEntry, _ start: StackLength) -> Void
    ) {
        guard low <= high, !isEmpty else { return }
        let laneCount = self.laneCount
        withUnsafeTemporaryAllocation(of: LaneRange.self, capacity: laneCount) { ranges in
            var active: Lanes = 0
            var from = Int.max
            var to = -1
            var mask = lanes & Self.allLanes(laneCount)
            while mask != 0 {
                let lane = mask.trailingZeroBitCount
                mask &= mask - 1
                guard let first = first(inLane: lane, endingAtOrAfter: low),
                    let last = last(inLane: lane, whereStart: { $0 <= high }), first.rank <= last.rank
                else { continue }
                ranges[lane] = LaneRange(from: first.rank, to: last.rank, start: first.start)
                active |= 1 << UInt64(lane)
                from = min(from, first.rank)
                to = max(to, last.rank)
            }
            guard active != 0 else { return }
            var walk = RangeWalk(ranges: ranges.baseAddress.unsafelyUnwrapped, active: active, from: from, to: to, gap: gap)
            walk.visit(NodeRef(root), base: 0, body)
            examined = walk.examined
        }
    }

    /// The entry whose start is nearest to `x` (on a tie, the smaller start, then the lower rank),
    /// with its rank and start. Nil when the tree is empty.
    /// - Complexity: O(lanes · log n).
    public func nearestStart(to x: StackLength) -> (rank: Int, start: StackLength)? {
        nearest(to: x, position: { $0 }, distance: { a, b in b - a })
    }

    /// `nearestStart` in another coordinate: `position` maps a start to it (never decreasing),
    /// `distance(a, b)` is `b − a` there for `a <= b`.
    /// - Complexity: O(lanes · log n).
    func nearest<P: Comparable>(
        to target: P, position: (StackLength) -> P, distance: (P, P) -> P
    ) -> (rank: Int, start: StackLength)? {
        var best: (rank: Int, start: StackLength, at: P, distance: P)? = nil
        for lane in 0..<laneCount where root.lanes[lane].count > 0 {
            let below = last(inLane: lane) { position($0) < target }
            var candidates: [(rank: Int, start: StackLength)] = []
            if let above = first(inLane: lane, from: (below?.rank ?? -1) + 1) { candidates.append(above) }
            if let below {
                // The lane's first entry with that position (zero sizes repeat starts).
                let at = position(below.start)
                if let earliest = first(inLane: lane, from: (last(inLane: lane) { position($0) < at }?.rank ?? -1) + 1) {
                    candidates.append(earliest)
                }
            }
            for c in candidates {
                let at = position(c.start)
                let d = at < target ? distance(at, target) : distance(target, at)
                if let b = best, (b.distance, b.at, b.rank) <= (d, at, c.rank) { continue }
                best = (c.rank, c.start, at, d)
            }
        }
        return best.map { ($0.rank, $0.start) }
    }
}

/// One lane's matches of a range query: its entries at ranks `from ... to`, the first at `start`.
struct LaneRange {
    var from: Int
    var to: Int
    var start: StackLength
}

/// The walk of `StackTree.forEach(touching:)` over the union of the lanes' rank ranges.
struct RangeWalk {
    let ranges: UnsafeMutablePointer<LaneRange>
    let active: StackTree.Lanes
    let from: Int
    let to: Int
    let gap: StackLength
    /// Entries looked at in leaves.
    var examined = 0

    /// Whether child `i` of `node`, at ranks `base ..< base + its count`, holds an entry of a lane
    /// inside that lane's range.
    @inline(__always)
    func holdsMatches(_ node: StackNode, _ i: Int, base: Int) -> Bool {
        let end = base + node.childInfo[i].count
        guard end > from && base <= to else { return false }
        let laneCount = node.laneCount
        var mask = active
        while mask != 0 {
            let lane = mask.trailingZeroBitCount
            mask &= mask - 1
            let range = ranges[lane]
            if end > range.from && base <= range.to && node.childLanes[i * laneCount + lane].count > 0 { return true }
        }
        return false
    }

    mutating func visit(_ ref: NodeRef, base: Int, _ body: (Int, StackEntry, StackLength) -> Void) {
        ref.read { node in
            if node.isLeaf {
                let lo = max(from - base, 0)
                let hi = min(to - base + 1, node.entries.count)
                guard lo < hi else { return }
                examined += hi - lo
                for j in lo..<hi {
                    let e = node.entries[j]
                    let lane = Int(e.lane)
                    guard active & (1 << UInt64(lane)) != 0 else { continue }
                    let rank = base + j
                    guard rank >= ranges[lane].from && rank <= ranges[lane].to else { continue }
                    body(rank, e, ranges[lane].start)
                    ranges[lane].start += StackLength(e.main) + gap
                }
                return
            }
            var b = base
            for i in 0..<node.childInfo.count {
                if b > to { return }
                if holdsMatches(node, i, base: b) { visit(NodeRef(node.children[i]), base: b, body) }
                b += node.childInfo[i].count
            }
        }
    }
}
