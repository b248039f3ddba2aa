/// A session's pooled views: a pool per reuse class, how many views they hold, the same-item index,
/// and the caps resolved for the session's layout.
///
/// It keeps its invariants itself; callers only pool and take views:
/// - `count` is the number of views in all pools;
/// - the same-item index maps (item, class) to the view of pool `class` that last showed `item`,
///   so an entering item finds its own last view without a search; an entry goes when its view
///   leaves the pool. It is kept (`indexed`) once more than ``scanLimit`` views are pooled, or
///   when a pool names an item by two views (a resync's, or a snapshot's: the index then says
///   which one an entering item takes back), until the pools are empty; before that, each pool
///   names an item by one view at most, and the pool is searched from its newest end instead;
/// - `extraNames` name the classes past the layout's own (`layout.reuseNames.count + k`): reuse
///   identifiers of pooled views that the current layout does not use (after a layout change);
/// - the caps by class are those of `caps` for the current layout's classes and `extraNames`
///   (`resolveCaps(for:)` after every layout change).
struct ReusePools: Sendable {
    /// The session's caps, by reuse identifier.
    let caps: PoolCaps
    /// Pooled views by reuse class (oldest first); classes past the end have empty pools.
    private(set) var byClass: [ReusePool] = []
    /// (item, reuse class) → the pooled view that last showed that item, keyed by
    /// ``PooledItemKey/packed``. Keyed by class too: after a layout change an item's old view may
    /// sit in another pool.
    private var sameItem = IntMap()
    /// Whether `sameItem` is kept (more than ``scanLimit`` views were pooled since the pools were
    /// last empty).
    private var indexed = false
    /// Pooled views up to which an entering item's own view is found by searching its class's
    /// pool (a few cache lines) rather than through the index: a jump pools ~10 views and takes
    /// as many, and keeping the index through each put and take was 30 hash operations, about a
    /// tenth of its time (`perf`). Past it the index is built, and kept until the
    /// pools are empty again.
    static let scanLimit = 32
    /// Views in all pools.
    private(set) var count = 0
    /// Reuse identifiers of pooled views that the current layout does not use, by class
    /// `layout.reuseNames.count + k`.
    private(set) var extraNames: [String] = []
    /// Cap per reuse class of the current layout (absent: `defaultCap`).
    private var capByClass: [Int: Int] = [:]
    private var defaultCap: Int?

    init(caps: PoolCaps) { self.caps = caps }

    /// Pools in a given state (a restored snapshot); call `resolveCaps(for:)` after.
    /// - Complexity: O(p + s) expected for p pooled views and s same-item entries.
    init(caps: PoolCaps, extraNames: [String], byClass: [ReusePool], sameItem: [(item: Int, reuseClass: Int, view: Int)]) {
        self.caps = caps
        self.extraNames = extraNames
        self.byClass = byClass
        self.count = byClass.reduce(0) { $0 + $1.count }
        // Without an index only when the given one is what the pools themselves say.
        if count > Self.scanLimit || sameItemEntries.map({ [$0.item, $0.reuseClass, $0.view] }) != sameItem
            .map({ [$0.item, $0.reuseClass, $0.view] }).sorted(by: { $0.lexicographicallyPrecedes($1) })
        {
            indexed = true
            for entry in sameItem { self.sameItem[PooledItemKey(item: entry.item, reuseClass: entry.reuseClass).packed] = entry.view }
        }
    }

    var isEmpty: Bool { count == 0 }

    /// The same-item index in key order (item, then class), for a snapshot.
    /// - Complexity: O(p log p) for p entries.
    var sameItemEntries: [(item: Int, reuseClass: Int, view: Int)] {
        let entries: [(item: Int, reuseClass: Int, view: Int)]
        if indexed {
            entries = sameItem.map { entry in
                let key = PooledItemKey(packed: entry.key)
                return (item: key.item, reuseClass: key.reuseClass, view: entry.value)
            }
        } else {
            // What the index would hold: every pooled view that names its last item.
            entries = byClass.enumerated().flatMap { c, pool in
                pool.entries.compactMap { entry in entry.lastItem.map { (item: $0, reuseClass: c, view: entry.view) } }
            }
        }
        return entries.sorted { ($0.item, $0.reuseClass) < ($1.item, $1.reuseClass) }
    }

    // MARK: Caps and names

    /// Resolves the caps by class for `layout`'s identifiers and for `extraNames` (a per-identifier
    /// cap holds for its pool after a layout change too).
    /// - Complexity: O(r · (n + x)) for r per-identifier caps, n reuse identifiers of `layout` and x
    ///   extra names.
    mutating func resolveCaps(for layout: Layout) {
        defaultCap = caps.max
        capByClass = [:]
        for (name, cap) in caps.perReuse {
            if let c = layout.reuseClass(named: name) {
                capByClass[c] = cap
            } else if let k = extraNames.firstIndex(of: name) {
                capByClass[layout.reuseNames.count + k] = cap
            }
        }
    }

    /// Whether any class has a cap (without, `trim` never drops a view).
    var hasCaps: Bool { defaultCap != nil || !capByClass.isEmpty }

    /// The cap of a class, nil for none.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func cap(of reuseClass: Int) -> Int? { capByClass[reuseClass] ?? defaultCap }

    /// The name of a reuse class of `layout`, or of one kept from an earlier layout.
    func name(ofClass c: Int, in layout: Layout) -> String {
        c < layout.reuseNames.count ? layout.reuseNames[c] : extraNames[c - layout.reuseNames.count]
    }

    // MARK: Pooling and taking views

    /// Pools `view`, which last showed `lastItem` (nil: an item the layout no longer has), in
    /// the pool of `reuseClass`, as pooled by plan `seq`.
    /// - Complexity: O(1) expected, amortized.
    @inline(__always)
    mutating func put(view: Int, lastItem: Int?, reuseClass c: Int, pooledAt seq: UInt64) {
        byClass.push(ReusePool.Entry(view: view, lastItem: lastItem, pooledAt: seq), reuseClass: c)
        if indexed, let lastItem { sameItem[PooledItemKey(item: lastItem, reuseClass: c).packed] = view }
        count += 1
        if !indexed && count > Self.scanLimit { buildIndex() }
    }

    /// Builds the same-item index from the pools.
    /// - Complexity: O(p) expected for p pooled views.
    private mutating func buildIndex() {
        sameItem = IntMap()
        for (c, pool) in byClass.enumerated() {
            for entry in pool.entries {
                if let item = entry.lastItem { sameItem[PooledItemKey(item: item, reuseClass: c).packed] = entry.view }
            }
        }
        indexed = true
    }

    /// Drops the same-item index once the pools are empty (a jump's few views are searched).
    @inline(__always)
    private mutating func dropIndexIfEmpty() {
        if indexed && count == 0 {
            sameItem = IntMap()
            indexed = false
        }
    }

    /// Whether a pooled view may have last shown an item in `range`: false when none did, so a
    /// plan's entering items skip their searches for their own views (a jump's entering items
    /// are all elsewhere, and searching the pool for each was a fifth of its plan, `perf`).
    /// Always true with the index, whose lookups cost no search.
    /// - Complexity: O(p) for p pooled views (at most ``scanLimit`` without the index).
    func mayHoldItems(in range: ClosedRange<Int>) -> Bool {
        guard !indexed else { return true }
        for pool in byClass {
            for entry in pool.entries {
                if let item = entry.lastItem, range.contains(item) { return true }
            }
        }
        return false
    }

    /// Takes the pooled view of class `c` that last showed `item`, if there is one.
    /// - Complexity: O(1) expected to find it with the index, O(pool size) without (at most
    ///   ``scanLimit``); O(pool size) to take it out (it is usually near the newest end).
    @inline(__always)
    mutating func takeView(lastShowing item: Int, reuseClass c: Int) -> Int? {
        guard indexed else {
            guard c < byClass.count, let entry = byClass[c].take(lastShowing: item) else { return nil }
            count -= 1
            return entry.view
        }
        let key = PooledItemKey(item: item, reuseClass: c).packed
        // One probe: removed first, put back in the (inconsistent, never seen) case that its
        // pool does not hold the view.
        guard let view = sameItem.removeValue(forKey: key) else { return nil }
        guard c < byClass.count, byClass[c].take(view: view) != nil else {
            sameItem[key] = view
            return nil
        }
        count -= 1
        dropIndexIfEmpty()
        return view
    }

    /// Takes the most recently pooled view of class `c`, if any.
    /// - Complexity: O(1) expected.
    @inline(__always)
    mutating func takeNewest(reuseClass c: Int) -> ReusePool.Entry? {
        guard c < byClass.count, let entry = byClass[c].popNewest() else { return nil }
        forget(entry, reuseClass: c)
        count -= 1
        dropIndexIfEmpty()
        return entry
    }

    /// Drops, in each of `classes` over its cap, the oldest views pooled by plan `seq` down to the
    /// cap, and answers the views dropped.
    /// - Complexity: O(pool size) per class over its cap.
    mutating func trim(_ classes: [Int], pooledAt seq: UInt64) -> Set<Int> {
        var dropped: Set<Int> = []
        for c in classes {
            guard let limit = cap(of: c), byClass[c].count > limit else { continue }
            for entry in byClass[c].trim(excess: byClass[c].count - limit, pooledAt: seq) {
                forget(entry, reuseClass: c)
                count -= 1
                dropped.insert(entry.view)
            }
        }
        dropIndexIfEmpty()
        return dropped
    }

    /// Drops the same-item index entry of a view leaving its pool.
    @inline(__always)
    private mutating func forget(_ entry: ReusePool.Entry, reuseClass c: Int) {
        guard indexed, let item = entry.lastItem else { return }
        sameItem.removeValue(forKey: PooledItemKey(item: item, reuseClass: c).packed, ifEqualTo: entry.view)
    }

    // MARK: Whole-state changes

    /// Empties every pool (a resync), keeping the caps.
    /// - Complexity: O(1) (the old storage is released).
    mutating func removeAll() {
        byClass = []
        sameItem = IntMap()
        indexed = false
        count = 0
        extraNames = []
    }

    /// Adopts a client's pool of class `c` (a resync after `removeAll()`): `views` with the items
    /// they last showed, oldest first, as pooled by plan `seq`. The class gets a pool even when
    /// `views` is empty. An item named by several views is taken back by the newest (the index
    /// says so: the pools keep it from then on).
    /// - Complexity: O(v) expected for v views, plus O(c) for a class c past the end.
    mutating func adopt(_ views: [ResyncState.PooledView], reuseClass c: Int, pooledAt seq: UInt64) {
        if byClass.count <= c { byClass.append(contentsOf: repeatElement(ReusePool(), count: c - byClass.count + 1)) }
        for pooled in views {
            byClass[c].push(ReusePool.Entry(view: pooled.view, lastItem: pooled.item, pooledAt: seq))
            if indexed, let item = pooled.item { sameItem[PooledItemKey(item: item, reuseClass: c).packed] = pooled.view }
            count += 1
        }
        let items = views.compactMap(\.item)
        if !indexed && (count > Self.scanLimit || Set(items).count < items.count) { buildIndex() }
    }

    /// Renumbers the pools to `remap.new`: pools carry over by reuse identifier (`remap`'s classes,
    /// whose extra names become `extraNames`), and the views' last items and the same-item index
    /// follow their items (nil when gone).
    /// - Complexity: O(p) for p pooled views.
    mutating func remap(_ remap: inout ItemRemap) {
        var newPools: [ReusePool] = []
        for (c, pool) in byClass.enumerated() {
            let mapped = remap.reuseClass(ofOld: c)
            for var entry in pool.entries {
                // Within one pool, one entry at most names an item (it would have taken its view
                // back), so the rebuilt index stays one to one.
                entry.lastItem = entry.lastItem.flatMap { remap.position($0) }
                newPools.push(entry, reuseClass: mapped)
            }
        }
        byClass = newPools
        if indexed { buildIndex() }
        extraNames = remap.extraNames
    }
}

extension [ReusePool] {
    /// Pools `entry` in the pool of `reuseClass`, adding empty pools up to it.
    /// - Complexity: O(1) amortized, plus O(c) the first time a class c past the end is used.
    fileprivate mutating func push(_ entry: ReusePool.Entry, reuseClass c: Int) {
        if c >= count { append(contentsOf: repeatElement(ReusePool(), count: c - count + 1)) }
        self[c].push(entry)
    }
}
