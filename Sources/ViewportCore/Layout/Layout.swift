/// A validated, immutable layout: every item's id, frame and reuse identifier, the content size,
/// and the spatial index over the frames. Shared by every session on it.
///
/// Items are addressed by position (0-based, in layout order) everywhere in the core; ids and
/// reuse identifier names are looked up only when a plan is encoded.
///
/// A layout with stacks has versions: a session's edit (`applying(_:)`, `Layout+Edit.swift`) makes
/// a new `Layout` that shares with this one everything the edit did not change (the id table, the
/// R-trees, the stacks' unchanged nodes). A version never changes once made.
public final class Layout: Sendable {
    /// Longest item id, in bytes of UTF-8.
    public static let maxIDBytes = 256

    /// Explicit items (sent one by one), in storage order: ids, frames, reuse classes (an index
    /// into `reuseNames`, or -1 for "never reused"). When the layout has no generated sections,
    /// item `k` is explicit item `k`. The id table continues, after the explicit items, with the
    /// ids of stack and placed sections' items, in the order they were posted (`storageRuns`);
    /// a stack item's uid is its position in this table.
    let ids: ItemIDTable
    let explicitRects: RectStore
    let reuseClasses: ReuseClassStore
    /// Runs of explicit items and generated sections in layout order; empty when every item is
    /// explicit.
    let segments: [LayoutSegment]
    /// Generated sections by id, as indices into `segments`.
    let generatedSections: [String: Int]
    /// The stack sections, in layout order (`LayoutSegment.stack` indexes this).
    let stacks: [LayoutStack]
    /// Stacks by section id, as indices into `stacks`.
    let stacksByID: [String: Int]
    /// `items` sections of a layout with stacks (`LayoutSegment.placed` indexes this).
    let placedSections: [PlacedSection]
    /// The stack and placed segments by where their ids start in the id table, ascending:
    /// an id's table position finds its item by binary search.
    let storageRuns: [(storageStart: Int, segment: Int)]
    /// Ids of the items a session inserted into its stacks (PATCH); empty for a posted layout.
    let overlay: IDOverlay
    /// How the sections of a layout with stacks are stacked (nil without stacks).
    let geometry: SectionGeometry?
    /// The explicit runs of `segments` as (layout start, storage start, count), in order: storage
    /// positions map back to layout positions by binary search.
    let explicitRuns: [(start: Int, storageStart: Int, count: Int)]
    /// Sticky items (section headers that pin to the top), by their top edge (then layout order).
    public let stickyItems: [Int]
    /// The layout's axis: the `axis` its sections stack along, or the one an `items` layout names
    /// (`y` by default). Sticky items pin along it: at the top for `y`, at the left for `x`.
    public let axis: Axis
    /// The edits that made this version from the stored layout with id `digest` (nil for a
    /// stored layout).
    public let editHistory: EditHistory?
    /// Number of items.
    public let count: Int
    /// Reuse identifier names, by class, in order of first appearance.
    public let reuseNames: [String]
    public let contentSize: Size
    /// Whether `contentSize` was given (and differs from the default).
    public let hasExplicitContentSize: Bool
    public let index: SpatialIndex
    /// Content address: lowercase hex of the first 16 bytes of a SHA-256 over the canonical form.
    public let digest: String
    /// Per-axis summaries, made on first use (`axisSummary(_:)`).
    let axisCache = AxisSummaryCache()
    /// Per-axis summaries of the items outside stacks (paging mode `items` on a layout with
    /// stacks); a PATCH that moves none of them hands this cache on to the new version.
    let fixedEdgesCache: AxisSummaryCache

    init(
        ids: ItemIDTable, rects: RectStore, reuseClasses: ReuseClassStore, segments: [LayoutSegment],
        stacks: [LayoutStack] = [], placedSections: [PlacedSection] = [], stickyItems: [Int], reuseNames: [String], contentSize: Size,
        hasExplicitContentSize: Bool, digest: String, index: SpatialIndex?, geometry: SectionGeometry? = nil,
        overlay: IDOverlay = IDOverlay(), fixedEdgesCache: AxisSummaryCache? = nil, axis: Axis = .y,
        editHistory: EditHistory? = nil
    ) {
        self.ids = ids
        self.explicitRects = rects
        self.reuseClasses = reuseClasses
        self.segments = segments
        self.stacks = stacks
        self.placedSections = placedSections
        self.count = segments.last.map { $0.start + $0.count } ?? rects.count
        self.stickyItems = stickyItems
        self.axis = axis
        self.editHistory = editHistory
        var sections: [String: Int] = [:]
        var runs: [(start: Int, storageStart: Int, count: Int)] = []
        var storage: [(storageStart: Int, segment: Int)] = []
        for (k, segment) in segments.enumerated() {
            switch segment {
            case .generated(_, let section): sections[section.id] = k
            case .explicit(let start, let storageStart, let count): runs.append((start, storageStart, count))
            case .stack(_, _, let stack): storage.append((stacks[stack].storageStart, k))
            case .placed(_, _, let section): storage.append((placedSections[section].storageStart, k))
            }
        }
        self.generatedSections = sections
        self.explicitRuns = runs
        self.storageRuns = storage
        var byID: [String: Int] = [:]
        for (k, stack) in stacks.enumerated() { byID[stack.id] = k }
        self.stacksByID = byID
        self.reuseNames = reuseNames
        self.contentSize = contentSize
        self.hasExplicitContentSize = hasExplicitContentSize
        self.digest = digest
        self.index = index ?? SpatialIndex(store: RectStore())
        self.geometry = geometry
        self.overlay = overlay
        self.fixedEdgesCache = fixedEdgesCache ?? AxisSummaryCache()
    }

    /// Whether the layout has stack sections.
    public var hasStacks: Bool { !stacks.isEmpty }

    /// The axis the sections of a layout with stacks flow along (nil without stacks).
    public var stackAxis: Axis? { geometry?.axis }

    /// The R-tree over explicit items, numbered as layout positions.
    /// - Complexity: O(n log n).
    static func makeIndex(rects: RectStore, segments: [LayoutSegment]) -> SpatialIndex {
        guard !segments.isEmpty else { return SpatialIndex(store: rects) }
        var numbers = ContiguousArray<Int32>()
        numbers.reserveCapacity(rects.count)
        for case .explicit(let start, _, let count) in segments {
            for k in 0..<count { numbers.append(Int32(start + k)) }
        }
        return SpatialIndex(store: rects, numbers: numbers)
    }

    /// Item frames in layout order.
    public var rects: ItemRects { ItemRects(layout: self) }

    /// Whether some items are generated from `sections` (their rects are computed on demand).
    public var hasGeneratedSections: Bool { !segments.isEmpty }

    /// Where an item lives: an explicit item's storage position, or a generated section and the
    /// item's number in it.
    enum Location {
        case explicit(Int)
        case generated(GeneratedSection, Int)
        /// A stack (index into `stacks`) and the item's rank in it.
        case stack(Int, Int)
        /// A placed section (index into `placedSections`) and the item's index in it.
        case placed(Int, Int)
    }

    /// The segment holding `item`.
    /// - Complexity: O(log s) for s segments.
    @inline(__always)
    func segmentIndex(of item: Int) -> Int {
        var lo = 0
        var hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].start <= item { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// - Complexity: O(log s) for s segments; O(1) without generated sections.
    @inline(__always)
    func locate(_ item: Int) -> Location {
        if segments.isEmpty { return .explicit(item) }
        switch segments[segmentIndex(of: item)] {
        case .explicit(let start, let storageStart, _): return .explicit(storageStart + item - start)
        case .generated(let start, let section): return .generated(section, item - start)
        case .stack(let start, _, let stack): return .stack(stack, item - start)
        case .placed(let start, _, let section): return .placed(section, item - start)
        }
    }

    /// The frame of an item.
    /// - Complexity: O(1) for explicit items, O(log n) in a stack.
    @inline(__always)
    public func rect(at item: Int) -> Rect {
        if segments.isEmpty { return explicitRects[item] }
        switch locate(item) {
        case .explicit(let k): return explicitRects[k]
        case .generated(let section, let k): return section.rect(k)
        case .stack(let stack, let rank): return stacks[stack].section.rect(at: rank)
        case .placed(let section, let k): return placedSections[section].rect(k)
        }
    }

    public func id(at item: Int) -> String { withIDBytes(at: item) { String(decoding: $0, as: UTF8.self) } }

    /// ``withIDBytes(at:_:)`` without a generic result: called from another module, the generic
    /// one looks up type metadata on every call (seen in plan encoding profiles).
    public func forIDBytes(at item: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        // An explicit layout's ids without the generic, rethrowing path: callgrind had ~200
        // instructions an id through it (a jump's plan encodes ~26), ~45 this way.
        if segments.isEmpty { return ids.forBytes(at: item, body) }
        withIDBytes(at: item, body)
    }

    /// Calls `body` with the raw UTF-8 bytes of an item's id (no `String` is made).
    public func withIDBytes<R>(at item: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch locate(item) {
        case .explicit(let k):
            return try ids.withBytes(at: k, body)
        case .placed(let section, let k):
            return try ids.withBytes(at: placedSections[section].storageStart + k, body)
        case .stack(let stack, let rank):
            return try withIDBytes(uid: stacks[stack].section.entry(at: rank).uid, body)
        case .generated(let section, let k):
            return try Self.withGeneratedID(section: section.id, k, body)
        }
    }

    /// Calls `body` with the UTF-8 bytes of generated item `<section>-<k>`, spelled into a stack
    /// buffer (ids are at most 256 bytes).
    static func withGeneratedID<R>(section: String, _ k: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Layout.maxIDBytes + 24) { buffer in
            var length = 0
            for byte in section.utf8 {
                buffer[length] = byte
                length += 1
            }
            buffer[length] = UInt8(ascii: "-")
            length += 1
            var digits = 1
            var rest = k
            while rest >= 10 {
                rest /= 10
                digits += 1
            }
            rest = k
            for position in stride(from: length + digits - 1, through: length, by: -1) {
                buffer[position] = UInt8(48 + rest % 10)
                rest /= 10
            }
            length += digits
            return try body(UnsafeRawBufferPointer(UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<length])))
        }
    }

    /// Position of the item with this id.
    /// - Complexity: O(1) expected; O(log n) for an item of a stack.
    public func item(withID id: String) -> Int? {
        var id = id
        return id.withUTF8 { item(withIDBytes: UnsafeRawBufferPointer($0)) }
    }

    /// The id of a stack item by uid: in the id table, or inserted by a session (the overlay).
    func withIDBytes<R>(uid: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if Int(uid) < ids.count { return try ids.withBytes(at: Int(uid), body) }
        let id = overlay.entry(uid)?.id ?? []
        return try id.withUnsafeBytes(body)
    }

    /// Position of the item whose id has these UTF-8 bytes.
    /// - Complexity: O(1) expected; O(log n) for an item of a stack.
    public func item(withIDBytes id: UnsafeRawBufferPointer) -> Int? {
        if let (uid, stack) = overlay.find(id) { return position(ofUID: uid, inStack: stack) }
        if let k = ids.index(ofBytes: id) { return segments.isEmpty ? k : position(ofStorage: k) }
        // `<section>-<k>`: split at the last "-".
        return generatedItem(withIDBytes: id)
    }

    /// The position of the stack item with this uid, nil when this version has none.
    /// - Complexity: O(log n).
    func position(ofUID uid: Int32, inStack stack: Int) -> Int? {
        guard let rank = stacks[stack].section.rank(ofUID: uid) else { return nil }
        return stackStart(stack) + rank
    }

    /// The layout position of a stack's first item.
    /// - Complexity: O(s) for s segments (stacks are few).
    func stackStart(_ stack: Int) -> Int {
        for case .stack(let start, _, let k) in segments where k == stack { return start }
        preconditionFailure("every stack has a segment")
    }

    /// The position of the item whose id is entry `k` of the id table (nil: a stack item this
    /// version removed).
    /// - Complexity: O(log r) for r runs; O(log n) for a stack item.
    func position(ofStorage k: Int) -> Int? {
        if segments.isEmpty { return k }
        if k < explicitRects.count || storageRuns.isEmpty { return explicitPosition(ofStorage: k) }
        var lo = 0
        var hi = storageRuns.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if storageRuns[mid].storageStart <= k { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        switch segments[storageRuns[lo - 1].segment] {
        case .stack(let start, _, let stack):
            return stacks[stack].section.rank(ofUID: Int32(k)).map { start + $0 }
        case .placed(let start, let count, let section):
            let j = k - placedSections[section].storageStart
            return j < count ? start + j : nil
        case .explicit, .generated:
            return nil
        }
    }

    /// The generated item this id spells (`<section>-<k>`), ignoring explicit ids.
    func generatedItem(withIDBytes id: UnsafeRawBufferPointer) -> Int? {
        guard !generatedSections.isEmpty, let dash = id.lastIndex(of: UInt8(ascii: "-")) else { return nil }
        let digits = id[(dash + 1)...]
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        let number = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: id[..<dash]), as: UTF8.self)
        guard let segment = generatedSections[name], number < segments[segment].count else { return nil }
        return segments[segment].start + number
    }

    /// The layout position of explicit item `k` (storage order).
    /// - Complexity: O(log r) for r runs of explicit items.
    func explicitPosition(ofStorage k: Int) -> Int? {
        var lo = 0
        var hi = explicitRuns.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if explicitRuns[mid].storageStart <= k { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let run = explicitRuns[lo - 1]
        return k < run.storageStart + run.count ? run.start + k - run.storageStart : nil
    }

    /// Reuse class of an item, or -1 when its view is never reused.
    @inline(__always)
    public func reuseClass(of item: Int) -> Int {
        if segments.isEmpty { return Int(reuseClasses[item]) }
        switch locate(item) {
        case .explicit(let k): return Int(reuseClasses[k])
        case .generated(let section, _): return Int(section.reuseClass)
        case .stack(let stack, let rank): return Int(stacks[stack].section.entry(at: rank).reuseClass)
        case .placed(let section, let k): return Int(placedSections[section].reuseClasses[k])
        }
    }

    /// Starts loading the reuse class of an item of the explicit items (a layout without
    /// sections), so that a later `poolClass(of:)` finds it in the cache.
    @inline(__always)
    func prefetchClass(of item: Int) {
        if segments.isEmpty { reuseClasses.prefetch(item) }
    }

    /// Starts loading what a query of `region` and a plan of its items read first, on an explicit
    /// layout in a sorted run: the index's block of reaches at the region's near edge, the rects
    /// there, and the reuse classes and id offsets of the items that start there; answers where a
    /// query from that edge starts (for ``forEachItem(minX:minY:maxX:maxY:start:_:)``), nil for
    /// other layouts. A jump calls it before it finds its leaving items, so that these misses (on
    /// a 1M-item layout, a random place is not in the cache) load during that work instead of one
    /// after the other in the query.
    func prefetchItems(in region: Region) -> QueryStart? {
        guard segments.isEmpty, let (start, first) = index.prefetchQuery(minX: region.minX, minY: region.minY) else { return nil }
        reuseClasses.prefetch(first)
        ids.prefetchOffset(at: first)
        return start
    }

    /// Starts loading where an explicit item's id is stored (its entry of the id offsets): the
    /// planner calls it for a jump's first entering item, whose id the plan's encoder reads
    /// soon after (on a 1M-item layout a random item's id missed the cache twice: offset, then
    /// bytes).
    @inline(__always)
    public func prefetchID(of item: Int) {
        if segments.isEmpty { ids.prefetchOffset(at: item) }
    }

    /// Starts loading an explicit item's id bytes (after `prefetchID(of:)` has had time to load
    /// the offset): the encoder calls it before the entries it writes first.
    @inline(__always)
    public func prefetchIDBytes(of item: Int) {
        if segments.isEmpty { ids.prefetchBytes(at: item) }
    }

    /// The reuse class of an item, nil when its view is never reused.
    @inline(__always)
    func poolClass(of item: Int) -> Int? {
        let c = reuseClass(of: item)
        return c >= 0 ? c : nil
    }

    /// The reuse identifier of an item, nil when it has none.
    public func reuseName(of item: Int) -> String? {
        let c = reuseClass(of: item)
        return c < 0 ? nil : reuseNames[c]
    }

    /// Calls `body` with every item (and its rect) whose box touches the closed box — a superset
    /// of the items strictly intersecting it; callers test exactly. Explicit items come from the
    /// R-tree, generated ones by arithmetic.
    /// - Complexity: O(log n + k) for layouts whose items do not pile up on each other, plus
    ///   O(s) for s generated sections.
    @inline(__always)
    public func forEachItem(minX: Double, minY: Double, maxX: Double, maxY: Double, start: QueryStart? = nil, _ body: (Int, Rect) -> Void) {
        // The index reports explicit items with their rects (read from `explicitRects`).
        index.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY, start: start, body)
        if segments.isEmpty { return }
        for segment in segments {
            switch segment {
            case .explicit: break
            case .generated(let start, let section):
                section.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { k in body(start + k, section.rect(k)) }
            case .stack(let start, _, let stack):
                stacks[stack].section.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { rank, r in body(start + rank, r) }
            case .placed(let start, _, let k):
                let section = placedSections[k]
                section.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { j in body(start + j, section.rect(j)) }
            }
        }
    }

    /// The class of a reuse identifier name, if some item uses it.
    public func reuseClass(named name: String) -> Int? { reuseNames.firstIndex(of: name) }

    /// Same items in the same order and the same content size, and for a layout with stacks the
    /// same sections (docs/api.md "Identity and ids").
    /// - Complexity: O(n).
    public func isIdentical(to other: Layout) -> Bool {
        if self === other { return true }
        guard count == other.count, contentSize == other.contentSize, hasStacks == other.hasStacks else { return false }
        if let mine = sectionsGeometry, let theirs = other.sectionsGeometry {
            var a = BinaryWriter()
            var b = BinaryWriter()
            encodeSections(mine, into: &a)
            other.encodeSections(theirs, into: &b)
            guard a.bytes == b.bytes else { return false }
        }
        if segments.isEmpty && other.segments.isEmpty {
            // Both explicit: compare the packed arrays (reuse classes are numbered by first
            // appearance, so identical layouts number them alike).
            return reuseNames == other.reuseNames && reuseClasses == other.reuseClasses && ids.offsets == other.ids.offsets
                && ids.bytes == other.ids.bytes && explicitRects == other.explicitRects
        }
        var mine = OrderCursor(self)
        var theirs = OrderCursor(other)
        while let a = mine.next() {
            guard let b = theirs.next(), a.rect == b.rect, reuseName(ofClass: a.reuseClass) == other.reuseName(ofClass: b.reuseClass),
                withIDBytes(of: a, { x in other.withIDBytes(of: b) { y in x.elementsEqual(y) } })
            else { return false }
        }
        return true
    }

    /// The reuse identifier of a reuse class, nil for -1.
    func reuseName(ofClass c: Int) -> String? { c < 0 ? nil : reuseNames[c] }

    /// Every item materialized in `region`, in layout order.
    /// - Complexity: O(log n + k log k).
    public func items(in region: Region) -> [Int] {
        var found: [Int] = []
        forEachItem(minX: region.minX, minY: region.minY, maxX: region.maxX, maxY: region.maxY) { item, rect in
            if region.intersects(rect) { found.append(item) }
        }
        found.sort()
        return found
    }

    /// Every item materialized in `region` with its rect, in layout order.
    /// - Complexity: O(log n + k log k).
    public func itemsAndRects(in region: Region) -> [(item: Int, rect: Rect)] {
        var found: [(item: Int, rect: Rect)] = []
        forEachItem(minX: region.minX, minY: region.minY, maxX: region.maxX, maxY: region.maxY) { item, rect in
            if region.intersects(rect) { found.append((item, rect)) }
        }
        found.sort { $0.item < $1.item }
        return found
    }

    /// Approximate bytes held by this layout and its index (a stack's tree not counted).
    public var memoryBytes: Int {
        ids.memoryBytes + explicitRects.memoryBytes + reuseClasses.memoryBytes + index.memoryBytes
    }

    /// Sticky items (explicit ones as given, and those of placed sections) by their leading edge
    /// along `axis` (where they pin), then layout order.
    /// - Complexity: O(k log k) for k sticky items.
    static func stickyItems(explicit: [(item: Int, rect: Rect)], segments: [LayoutSegment], placed: [PlacedSection], axis: Axis) -> [Int] {
        var all = explicit.map { (item: $0.item, edge: axis.leadingEdge(of: $0.rect)) }
        for case .placed(let start, _, let k) in segments {
            for j in placed[k].sticky { all.append((start + j, axis.leadingEdge(of: placed[k].rect(j)))) }
        }
        return all.sorted { ($0.edge, $0.item) < ($1.edge, $1.item) }.map(\.item)
    }
}
