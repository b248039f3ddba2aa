/// A validated, immutable layout: every item's id, frame and reuse identifier, the content size,
/// and the spatial index over the frames. Shared by every session on it.
///
/// Items are addressed by position (0-based, in layout order) everywhere in the core; ids and
/// reuse identifier names are looked up only when a plan is encoded.
public final class Layout: Sendable {
    /// Longest item id, in bytes of UTF-8.
    public static let maxIDBytes = 256

    let ids: ItemIDTable
    /// Item frames in layout order.
    public let rects: ContiguousArray<Rect>
    /// Reuse class of every item: an index into `reuseNames`, or -1 for "never reused".
    let reuseClasses: ContiguousArray<Int32>
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
        ids: ItemIDTable, rects: ContiguousArray<Rect>, reuseClasses: ContiguousArray<Int32>,
        reuseNames: [String], contentSize: Size, hasExplicitContentSize: Bool, digest: String
    ) {
        self.ids = ids
        self.rects = rects
        self.reuseClasses = reuseClasses
        self.reuseNames = reuseNames
        self.contentSize = contentSize
        self.hasExplicitContentSize = hasExplicitContentSize
        self.digest = digest
        self.index = SpatialIndex(rects: rects)
    }

    public var count: Int { rects.count }

    public func id(at item: Int) -> String { ids.string(at: item) }

    /// Calls `body` with the raw UTF-8 bytes of an item's id (no `String` is made).
    public func withIDBytes<R>(at item: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try ids.withBytes(at: item, body)
    }

    /// Position of the item with this id.
    /// - Complexity: O(1) expected.
    public func item(withID id: String) -> Int? { ids.index(of: id) }

    /// Position of the item whose id has these UTF-8 bytes.
    /// - Complexity: O(1) expected.
    public func item(withIDBytes id: UnsafeRawBufferPointer) -> Int? { ids.index(ofBytes: id) }

    /// Reuse class of an item, or -1 when its view is never reused.
    @inline(__always)
    public func reuseClass(of item: Int) -> Int { Int(reuseClasses[item]) }

    /// The reuse identifier of an item, nil when it has none.
    public func reuseName(of item: Int) -> String? {
        let c = reuseClasses[item]
        return c < 0 ? nil : reuseNames[Int(c)]
    }

    /// The class of a reuse identifier name, if some item uses it.
    public func reuseClass(named name: String) -> Int? { reuseNames.firstIndex(of: name) }

    /// Same items in the same order and the same content size (API.md "identical").
    public func isIdentical(to other: Layout) -> Bool {
        if self === other { return true }
        return rects.count == other.rects.count && contentSize == other.contentSize
            && reuseNames.count == other.reuseNames.count && ids.bytes == other.ids.bytes
            && ids.offsets == other.ids.offsets && reuseClasses == other.reuseClasses
            && reuseNames == other.reuseNames && zip(rects, other.rects).allSatisfy(==)
    }

    /// Every item materialized in `region`, in layout order.
    /// - Complexity: O(log n + k log k).
    public func items(in region: Region) -> [Int] {
        var found: [Int] = []
        index.forEachCandidate(minX: region.minX, minY: region.minY, maxX: region.maxX, maxY: region.maxY) { item in
            if region.intersects(rects[item]) { found.append(item) }
        }
        found.sort()
        return found
    }

    /// Approximate bytes held by this layout and its index.
    public var memoryBytes: Int {
        ids.memoryBytes + rects.capacity * MemoryLayout<Rect>.stride + reuseClasses.capacity * 4 + index.memoryBytes
    }
}
