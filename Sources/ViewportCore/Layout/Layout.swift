/// A validated, immutable layout: every item's id, frame and reuse identifier, the content size,
/// and the spatial index over the frames. Shared by every session on it.
///
/// Items are addressed by position (0-based, in layout order) everywhere in the core; ids and
/// reuse identifier names are looked up only when a plan is encoded.
public final class Layout: Sendable {
    /// Longest item id, in bytes of UTF-8.
    public static let maxIDBytes = 256

    /// Explicit items (sent one by one), in storage order: ids, frames, reuse classes (an index
    /// into `reuseNames`, or -1 for "never reused"). When the layout has no generated sections,
    /// item `k` is explicit item `k`.
    let ids: ItemIDTable
    let explicitRects: ContiguousArray<Rect>
    let reuseClasses: ContiguousArray<Int32>
    /// Runs of explicit items and generated sections in layout order; empty when every item is
    /// explicit.
    let segments: [LayoutSegment]
    /// Generated sections by id, as indices into `segments`.
    let generatedSections: [String: Int]
    /// The explicit runs of `segments` as (layout start, storage start, count), in order: storage
    /// positions map back to layout positions by binary search.
    let explicitRuns: [(start: Int, storageStart: Int, count: Int)]
    /// Sticky items (section headers that pin to the viewport's leading edge along `axis`), by
    /// their leading edge along it (then layout order).
    public let stickyItems: [Int]
    /// The layout's axis: the `axis` its sections stack along, or the one an `items` layout names
    /// (`y` by default). Sticky items pin along it: at the top for `y`, at the left for `x`.
    public let axis: Axis
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

    init(
        ids: ItemIDTable, rects: ContiguousArray<Rect>, reuseClasses: ContiguousArray<Int32>, segments: [LayoutSegment],
        stickyItems: [Int], reuseNames: [String], contentSize: Size, hasExplicitContentSize: Bool, digest: String,
        index: SpatialIndex?, axis: Axis = .y
    ) {
        self.ids = ids
        self.explicitRects = rects
        self.reuseClasses = reuseClasses
        self.segments = segments
        self.count = segments.last.map { $0.start + $0.count } ?? rects.count
        self.stickyItems = stickyItems
        self.axis = axis
        var sections: [String: Int] = [:]
        for (k, segment) in segments.enumerated() {
            if case .generated(_, let section) = segment { sections[section.id] = k }
        }
        self.generatedSections = sections
        var runs: [(start: Int, storageStart: Int, count: Int)] = []
        for case .explicit(let start, let storageStart, let count) in segments { runs.append((start, storageStart, count)) }
        self.explicitRuns = runs
        self.reuseNames = reuseNames
        self.contentSize = contentSize
        self.hasExplicitContentSize = hasExplicitContentSize
        self.digest = digest
        self.index = index ?? SpatialIndex(rects: [])
    }

    /// The R-tree over explicit items, numbered as layout positions.
    /// - Complexity: O(n log n).
    static func makeIndex(rects: ContiguousArray<Rect>, segments: [LayoutSegment]) -> SpatialIndex {
        guard !segments.isEmpty else { return SpatialIndex(rects: rects) }
        var numbers = ContiguousArray<Int32>()
        numbers.reserveCapacity(rects.count)
        for case .explicit(let start, _, let count) in segments {
            for k in 0..<count { numbers.append(Int32(start + k)) }
        }
        return SpatialIndex(rects: rects, numbers: numbers)
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
    }

    /// - Complexity: O(log s) for s segments; O(1) without generated sections.
    @inline(__always)
    func locate(_ item: Int) -> Location {
        if segments.isEmpty { return .explicit(item) }
        var lo = 0
        var hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].start <= item { lo = mid } else { hi = mid - 1 }
        }
        switch segments[lo] {
        case .explicit(let start, let storageStart, _): return .explicit(storageStart + item - start)
        case .generated(let start, let section): return .generated(section, item - start)
        }
    }

    /// The frame of an item.
    @inline(__always)
    public func rect(at item: Int) -> Rect {
        if segments.isEmpty { return explicitRects[item] }
        switch locate(item) {
        case .explicit(let k): return explicitRects[k]
        case .generated(let section, let k): return section.rect(k)
        }
    }

    public func id(at item: Int) -> String { withIDBytes(at: item) { String(decoding: $0, as: UTF8.self) } }

    /// ``withIDBytes(at:_:)`` without a generic result: called from another module, the generic
    /// one looks up type metadata on every call (seen in plan encoding profiles).
    public func forIDBytes(at item: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        withIDBytes(at: item, body)
    }

    /// Calls `body` with the raw UTF-8 bytes of an item's id (no `String` is made).
    public func withIDBytes<R>(at item: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch locate(item) {
        case .explicit(let k):
            return try ids.withBytes(at: k, body)
        case .generated(let section, let k):
            // `<section>-<k>`, spelled into a stack buffer (ids are at most 256 bytes).
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Layout.maxIDBytes + 24) { buffer in
                var length = 0
                for byte in section.id.utf8 {
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
    }

    /// Position of the item with this id.
    /// - Complexity: O(1) expected.
    public func item(withID id: String) -> Int? {
        var id = id
        return id.withUTF8 { item(withIDBytes: UnsafeRawBufferPointer($0)) }
    }

    /// Position of the item whose id has these UTF-8 bytes.
    /// - Complexity: O(1) expected.
    public func item(withIDBytes id: UnsafeRawBufferPointer) -> Int? {
        if let k = ids.index(ofBytes: id) { return segments.isEmpty ? k : explicitPosition(ofStorage: k) }
        // `<section>-<k>`: split at the last "-".
        return generatedItem(withIDBytes: id)
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
        }
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
    public func forEachItem(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int, Rect) -> Void) {
        if segments.isEmpty {
            explicitRects.withUnsafeBufferPointer { rects in
                index.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { item in body(item, rects[item]) }
            }
            return
        }
        index.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { item in body(item, rect(at: item)) }
        for case .generated(let start, let section) in segments {
            section.forEachCandidate(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { k in body(start + k, section.rect(k)) }
        }
    }

    /// The class of a reuse identifier name, if some item uses it.
    public func reuseClass(named name: String) -> Int? { reuseNames.firstIndex(of: name) }

    /// Same items in the same order and the same content size (API.md "identical").
    /// - Complexity: O(n).
    public func isIdentical(to other: Layout) -> Bool {
        if self === other { return true }
        guard count == other.count, contentSize == other.contentSize else { return false }
        if segments.isEmpty && other.segments.isEmpty {
            // Both explicit: compare the packed arrays (reuse classes are numbered by first
            // appearance, so identical layouts number them alike).
            return reuseNames == other.reuseNames && reuseClasses == other.reuseClasses && ids.offsets == other.ids.offsets
                && ids.bytes == other.ids.bytes && explicitRects == other.explicitRects
        }
        for item in 0..<count {
            guard rect(at: item) == other.rect(at: item), reuseName(of: item) == other.reuseName(of: item),
                withIDBytes(at: item, { a in other.withIDBytes(at: item) { b in a.elementsEqual(b) } })
            else { return false }
        }
        return true
    }

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

    /// Approximate bytes held by this layout and its index.
    public var memoryBytes: Int {
        ids.memoryBytes + explicitRects.capacity * MemoryLayout<Rect>.stride + reuseClasses.capacity * 4 + index.memoryBytes
    }
}
