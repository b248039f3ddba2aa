import FuzzSupport
import ViewportCore

// The client model of FuzzSessionApply, shared with FuzzStackEdits: a client that applies plans
// to its own views and pools, knowing the layouts only from its own specs (`ModelLayout`), and the
// session state a refused update must leave as it was (`Snapshot`).

/// A layout as the model knows it: ids in layout order with their reuse identifiers.
public struct ModelLayout {
    public init() {}

    public var ids: [String] = []
    public var reuse: [String: String] = [:]
    public var sticky: Set<String> = []
    public var rects: [Rect] = []
    public var explicit = true
}


/// The client: views by item id, pools by reuse identifier.
public struct Client {
    public var layout: ModelLayout
    public var shown: [String: Int] = [:]
    var pools: [String: [Int]] = [:]
    var createdFor: [Int: String] = [:]
    var lastShown: [Int: String] = [:]
    var seen: Set<Int> = []
    var released: Set<Int> = []
    let caps: PoolCaps
    let maxPerReuse: [String: Int]

    public init(layout: ModelLayout, caps: PoolCaps) {
        self.layout = layout
        self.caps = caps
        self.maxPerReuse = caps.perReuse
    }

    func cap(_ reuse: String) -> Int? { maxPerReuse[reuse] ?? caps.max }

    public mutating func apply(_ plan: Plan, newLayout: ModelLayout?) {
        let old = layout
        let new = newLayout ?? layout
        for list in [plan.recycle.map(\.item), plan.discard.map(\.item), plan.reuse.map(\.item), plan.create.map(\.item), plan.move.map(\.item)] {
            require(list == list.sorted() && Set(list).count == list.count, "a list out of layout order or with repeats: \(list)")
        }
        // Leaving items (named in the previous layout after a layout change).
        for (entry, pooled) in plan.recycle.map({ ($0, true) }) + plan.discard.map({ ($0, false) }) {
            require(old.ids.indices.contains(entry.item), "leaving item \(entry.item) not in the layout")
            let id = old.ids[entry.item]
            require(shown[id] == entry.view, "leaving \(id) with view \(entry.view), the client shows it with \(String(describing: shown[id]))")
            shown[id] = nil
            if pooled {
                guard let reuse = createdFor[entry.view] else { fatalError("fuzz check failed: view \(entry.view) of \(id) recycled without a reuse identifier") }
                pools[reuse, default: []].append(entry.view)
            } else {
                released.insert(entry.view)
                createdFor[entry.view] = nil
            }
        }
        layout = new
        if newLayout != nil {
            // An item that is no longer in the layout is gone: a pooled view that showed it shows
            // nothing the new layout has, so an item with its id inserted later is a new item
            // (docs/api.md "Stacks and edits": inserted items have new ids) and binding it is a rebind.
            let present = Set(new.ids)
            for (view, id) in lastShown where !present.contains(id) { lastShown[view] = nil }
        }
        var kept: Set<String> = []
        for entry in plan.move {
            let id = new.ids[entry.item]
            require(shown[id] == entry.view, "moved \(id) with view \(entry.view), shown with \(String(describing: shown[id]))")
            kept.insert(id)
        }
        for entry in plan.reuse {
            require(new.ids.indices.contains(entry.item), "reused item \(entry.item) not in the layout")
            let id = new.ids[entry.item]
            require(shown[id] == nil, "\(id) entered but was shown")
            guard let reuse = new.reuse[id] else { fatalError("fuzz check failed: \(id) without a reuse identifier took pooled view \(entry.view)") }
            require(createdFor[entry.view] == reuse, "\(id) (\(reuse)) took view \(entry.view) made for \(String(describing: createdFor[entry.view]))")
            guard let at = pools[reuse]?.firstIndex(of: entry.view) else { fatalError("fuzz check failed: \(id) took view \(entry.view), which is not pooled") }
            pools[reuse]?.remove(at: at)
            require(entry.rebind == (lastShown[entry.view] != id), "rebind \(entry.rebind) for \(id) on view \(entry.view) that last showed \(String(describing: lastShown[entry.view]))")
            shown[id] = entry.view
            lastShown[entry.view] = id
        }
        for entry in plan.create {
            require(new.ids.indices.contains(entry.item), "created item \(entry.item) not in the layout")
            let id = new.ids[entry.item]
            require(shown[id] == nil, "\(id) created but was shown")
            require(entry.view > 0 && !seen.contains(entry.view), "view handle \(entry.view) used before")
            seen.insert(entry.view)
            createdFor[entry.view] = new.reuse[id]
            shown[id] = entry.view
            lastShown[entry.view] = id
        }
        // Caps apply once the plan is applied; capped views were listed under discard.
        for (reuse, views) in pools {
            if let cap = cap(reuse) { require(views.count <= cap, "pool \(reuse) holds \(views.count) views, cap \(cap)") }
            for view in views { require(!released.contains(view), "view \(view) discarded but pooled") }
        }
        require(Set(shown.values).count == shown.count, "a view shows two items: \(shown)")
    }

    public func check(_ session: ViewportSession) {
        var visible: [String: Int] = [:]
        for entry in session.visible { visible[layout.ids[entry.item]] = entry.view }
        require(visible == shown, "the session shows \(visible), the client \(shown)")
        var sessionPools: [String: Set<Int>] = [:]
        for (reuse, views) in session.pooledViews { sessionPools[reuse] = Set(views) }
        let clientPools = pools.filter { !$0.value.isEmpty }.mapValues { Set($0) }
        require(sessionPools == clientPools, "the session pools \(sessionPools), the client \(clientPools)")
        require(session.liveViews == shown.count + pools.values.reduce(0) { $0 + $1.count }, "live views \(session.liveViews)")
    }

    /// Without loop: the items strictly intersecting the viewport at `offset` grown by `buffer`,
    /// computed from the model's own rects, plus at most one sticky header.
    public func checkRegion(offset: Point, viewport: Size, buffer: Buffer, motion: (x: Int, y: Int)) {
        // docs/api.md: along an axis the viewport moves on, `ahead` lies in the direction of motion and
        // `behind` behind it; along a still axis, max(ahead, behind) on both sides.
        func extents(_ sign: Int) -> (low: Double, high: Double) {
            let still = max(buffer.ahead, buffer.behind)
            return sign > 0 ? (buffer.behind, buffer.ahead) : sign < 0 ? (buffer.ahead, buffer.behind) : (still, still)
        }
        let ex = extents(motion.x), ey = extents(motion.y)
        let minX = offset.x - ex.low, minY = offset.y - ey.low
        let maxX = offset.x + viewport.width + ex.high, maxY = offset.y + viewport.height + ey.high
        var expected: Set<String> = []
        for (k, r) in layout.rects.enumerated() where r.x < maxX && r.x + r.width > minX && r.y < maxY && r.y + r.height > minY {
            expected.insert(layout.ids[k])
        }
        let shownIDs = Set(shown.keys)
        require(expected.isSubset(of: shownIDs), "missing \(expected.subtracting(shownIDs).sorted()) at \(offset) \(viewport) buffer \(buffer)")
        let extra = shownIDs.subtracting(expected)
        require(extra.count <= 1 && extra.isSubset(of: layout.sticky), "materialized outside the region: \(extra.sorted()) at \(offset) \(viewport) buffer \(buffer)")
    }
}

/// What a refused update must leave as it was.
public struct Snapshot: Equatable {
    public var seq: UInt64
    public var offset: Point
    public var viewport: Size
    public var visible: [PlanEntry]
    public var pools: [String]
    public var stats: SessionStats
    public var lastPlan: Plan
    public var selected: Int?
    public var pinned: PinnedHeader?
    public var digest: String

    public init(_ s: ViewportSession) {
        seq = s.seq
        offset = s.offset
        viewport = s.viewport
        visible = s.visible
        pools = s.pooledViews.map { "\($0.reuse):\($0.views)" }
        stats = s.stats
        lastPlan = s.lastPlan
        selected = s.selected
        pinned = s.pinned
        digest = s.layout.digest
    }
}

