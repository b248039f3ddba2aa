/// A stack section (docs/api.md "Stacks and edits"): items with their own sizes flowing along an axis in one or
/// more lanes (a masonry), each where the previous item of its lane ends plus `spacing`.
///
/// Item `rank`'s rect, with `o` the origin, `s` the start of the item in its lane (a
/// `StackLength`, exact: the sum of `main + spacing` over the lane's earlier items) and `j` its
/// lane: along the axis at `o.main + s.value`, across it at `o.cross + j × (laneSize + spacing)`,
/// with the item's own sizes (its measured size, or the estimate until it is measured). Rects are
/// computed on demand, so a section can move (`origin`) in O(1) when one above it changes.
///
/// A value: copies share the tree, edits copy O(log n) nodes. Items are addressed by rank (their
/// position in the section) and identified by uid, which the caller maps to ids.
public struct StackSection: Sendable {
    /// The largest size, spacing or lane size accepted, in points: it keeps every position exact
    /// and finite (see `StackLength`).
    public static let maxLength = 1e12

    /// An item as given: its uid, its size if it was measured (else the estimate), its reuse class
    /// (nil: the section's).
    public struct Item: Hashable, Sendable {
        public var uid: Int32
        public var size: Size?
        public var reuseClass: Int32?
        /// The lane the item joins when the section is built (`0 ..< lanes`); nil: the shortest
        /// lane when it is added. A section written out (`GET /v1/sessions/{id}/layout`) names
        /// every item's lane, so posting it again gives the same rects although the lanes were
        /// decided with earlier sizes.
        public var lane: Int?

        public init(uid: Int32, size: Size? = nil, reuseClass: Int32? = nil, lane: Int? = nil) {
            self.uid = uid
            self.size = size
            self.reuseClass = reuseClass
            self.lane = lane
        }
    }

    /// Where inserted items go, and the lanes they join (docs/api.md "Stacks and edits").
    public enum Position: Hashable, Sendable {
        /// Before the item at this rank, in its lane.
        case before(Int)
        /// After the item at this rank, in its lane.
        case after(Int)
        /// At the start, in the lane of the first item (lane 0 when the section is empty).
        case start
        /// At the end, each item in the lane shortest when it is added.
        case end
    }

    /// The section's top-left corner in content coordinates.
    public var origin: Point
    public let axis: Axis
    public let spacing: Double
    /// The width of a lane across the axis (lane `j` is at `j × (laneSize + spacing)`).
    public let laneSize: Double
    /// The size of items not measured yet.
    public let estimate: Size?
    /// The reuse class of items that do not name one (-1: none).
    public let reuseClass: Int32
    public internal(set) var tree: StackTree

    /// Builds a section. Each item joins the lane whose end is shortest when it is added (the
    /// lowest index on a tie), with the sizes known then. `laneSize` defaults to the cross size of
    /// `estimate`, else of the first item.
    /// - Throws: `StackError` naming the field: a size, spacing or lane size that is not finite,
    ///   negative or over `maxLength`; lanes outside 1…64; an item without a size and no estimate;
    ///   a masonry whose lane size cannot be known.
    /// - Complexity: O(n log lanes).
    public init(
        origin: Point = .zero, axis: Axis = .y, spacing: Double = 0, lanes: Int = 1, laneSize: Double? = nil, estimate: Size? = nil,
        reuseClass: Int32 = -1, items: [Item]
    ) throws(StackError) {
        try Self.validate(length: spacing, field: "spacing")
        guard (1...StackTree.maxLanes).contains(lanes) else {
            throw StackError(field: "lanes", reason: "must be 1…\(StackTree.maxLanes), not \(lanes)")
        }
        if let estimate { try Self.validate(size: estimate, field: "estimate") }
        if let laneSize { try Self.validate(length: laneSize, field: "laneSize") }
        for (k, item) in items.enumerated() {
            if let size = item.size {
                try Self.validate(size: size, field: "items[\(k)].size")
            } else if estimate == nil {
                throw StackError(field: "items[\(k)].size", reason: "required when the stack has no estimate")
            }
            if let lane = item.lane, !(0..<lanes).contains(lane) {
                throw StackError(field: "items[\(k)].lane", reason: "must be 0…\(lanes - 1), not \(lane)")
            }
        }
        let cross = axis.cross
        var resolvedLaneSize = 0.0
        if let laneSize {
            resolvedLaneSize = laneSize
        } else if let estimate {
            resolvedLaneSize = cross.component(of: estimate)
        } else if let size = items.first?.size {
            resolvedLaneSize = cross.component(of: size)
        } else if lanes > 1 {
            throw StackError(field: "laneSize", reason: "required for lanes > 1 when the stack has no estimate and no items")
        }
        self.origin = origin
        self.axis = axis
        self.spacing = spacing
        self.laneSize = resolvedLaneSize
        self.estimate = estimate
        self.reuseClass = reuseClass
        var entries = ContiguousArray<StackEntry>()
        entries.reserveCapacity(items.count)
        let gap = StackLength(spacing)
        var chooser = lanes > 1 ? LaneChooser(ends: Array(repeating: .zero, count: lanes), counts: Array(repeating: 0, count: lanes), gap: gap) : nil
        for item in items {
            var entry = Self.entry(for: item, axis: axis, estimate: estimate, reuseClass: reuseClass)
            if chooser != nil { entry.lane = UInt16(chooser?.add(main: StackLength(entry.main), lane: item.lane) ?? 0) }
            entries.append(entry)
        }
        tree = StackTree(entries: entries, laneCount: lanes, spacing: spacing)
    }

    /// The entry for an item (lane 0): validated sizes, or the estimate.
    private static func entry(for item: Item, axis: Axis, estimate: Size?, reuseClass: Int32) -> StackEntry {
        let size = item.size ?? estimate ?? .zero
        return StackEntry(
            uid: item.uid, main: axis.component(of: size), cross: axis.cross.component(of: size), lane: 0, isMeasured: item.size != nil,
            reuseClass: item.reuseClass ?? reuseClass)
    }

    public var count: Int { tree.count }
    public var isEmpty: Bool { tree.isEmpty }
    public var laneCount: Int { tree.laneCount }

    /// The section's main-axis origin, and its cross-axis one.
    @inline(__always) var mainOrigin: Double { axis.component(of: origin) }
    @inline(__always) var crossOrigin: Double { axis.cross.component(of: origin) }

    /// Where lane `lane` sits across the axis, in content coordinates.
    @inline(__always)
    public func laneOffset(_ lane: Int) -> Double { crossOrigin + Double(lane) * (laneSize + spacing) }

    /// The rect of an entry that starts at `start` in its lane.
    @inline(__always)
    public func rect(of entry: StackEntry, start: StackLength) -> Rect { placement.rect(of: entry, start: start) }

    /// What rects need of the section, without its tree (closures over it copy nothing counted).
    @inline(__always)
    var placement: StackPlacement {
        StackPlacement(mainOrigin: mainOrigin, crossOrigin: crossOrigin, laneStep: laneSize + spacing, isVertical: axis == .y)
    }

    /// The rect of the item at `rank`.
    /// - Complexity: O(log n).
    public func rect(at rank: Int) -> Rect {
        let (entry, start) = tree.locate(rank)
        return rect(of: entry, start: start)
    }

    /// The entry (uid, sizes, lane, reuse class, measured) at `rank`.
    /// - Complexity: O(log n).
    public func entry(at rank: Int) -> StackEntry { tree.entry(at: rank) }

    /// The rank of the item with this uid, nil when this version has none.
    /// - Complexity: O(log n).
    public func rank(ofUID uid: Int32) -> Int? { tree.rank(ofUID: uid) }

    /// The section's length along the axis: its longest lane (0 when empty), relative to `origin`.
    /// - Complexity: O(lanes).
    public var extent: Double { tree.length.value }

    /// The largest `x + width` and `y + height` of the items' rects (the origin when there are
    /// none): along the axis, the far edge of each lane's last item; across, each lane's offset
    /// plus its widest item.
    /// - Complexity: O(lanes · log n).
    public var farCorner: Point {
        var main = mainOrigin
        var cross = crossOrigin
        for lane in 0..<laneCount where tree.count(inLane: lane) > 0 {
            if let last = tree.last(inLane: lane, whereStart: { _ in true }) {
                let r = rect(of: tree.entry(at: last.rank), start: last.start)
                main = max(main, axis == .y ? r.y + r.height : r.x + r.width)
            }
            cross = max(cross, laneOffset(lane) + tree.maxCross(inLane: lane))
        }
        return axis == .y ? Point(x: cross, y: main) : Point(x: main, y: cross)
    }

    /// Calls `body` in rank order with every item (and its rect) whose rect touches the closed box
    /// — a superset of the items strictly intersecting it; callers test exactly.
    /// - Complexity: O(lanes · log n + k).
    public func forEachItem(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (_ rank: Int, _ rect: Rect) -> Void) {
        guard !isEmpty, minX <= maxX, minY <= maxY else { return }
        let (mainLow, mainHigh, crossLow, crossHigh) = axis == .y ? (minY, maxY, minX, maxX) : (minX, maxX, minY, maxY)
        var lanes: StackTree.Lanes = 0
        for lane in 0..<laneCount where tree.count(inLane: lane) > 0 {
            let at = laneOffset(lane)
            if at <= crossHigh && at + tree.maxCross(inLane: lane) >= crossLow { lanes |= 1 << UInt64(lane) }
        }
        guard lanes != 0 else { return }
        // Starts are rounded once (`start.value`) and again when added to the origin and a size:
        // widen the interval by far more than those roundings so no touching item is missed.
        let o = mainOrigin
        let slack = (abs(mainLow) + abs(mainHigh) + abs(o)) * 0x1p-40 + 0x1p-40
        let low = StackLength(mainLow - o - slack)
        let high = StackLength(mainHigh - o + slack)
        let placement = self.placement
        tree.forEach(touching: low, high, lanes: lanes) { rank, entry, start in
            let r = placement.rect(of: entry, start: start)
            if r.x <= maxX && r.x + r.width >= minX && r.y <= maxY && r.y + r.height >= minY { body(rank, r) }
        }
    }

    /// The item whose leading edge (its rect's min along the axis, in content coordinates) is
    /// nearest to `position`: on a tie the smaller edge, then the lower rank. Nil when empty
    /// (paging mode `items`).
    /// - Complexity: O(lanes · log n).
    public func nearestLeadingEdge(to position: Double) -> (rank: Int, edge: Double)? {
        let o = mainOrigin
        guard let found = tree.nearest(to: position, position: { o + $0.value }, distance: { a, b in b - a }) else { return nil }
        return (found.rank, o + found.start.value)
    }
}

/// Where a stack's entries go: the section's origin and lane step, for rects.
struct StackPlacement {
    let mainOrigin: Double
    let crossOrigin: Double
    /// `laneSize + spacing`.
    let laneStep: Double
    let isVertical: Bool

    @inline(__always)
    func rect(of entry: StackEntry, start: StackLength) -> Rect {
        let main = mainOrigin + start.value
        let cross = crossOrigin + Double(entry.lane) * laneStep
        return isVertical
            ? Rect(x: cross, y: main, width: entry.cross, height: entry.main)
            : Rect(x: main, y: cross, width: entry.main, height: entry.cross)
    }
}
