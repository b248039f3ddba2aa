/// Collects items one by one (as a decoder reads them) and validates them into a `Layout`.
///
/// Validation happens as items arrive, so a bad item fails fast with its position and id.
public struct LayoutBuilder: Sendable {
    private var ids = ItemIDTable()
    private var rects = ContiguousArray<Rect>()
    private var reuseClasses = ContiguousArray<Int32>()
    private var reuseNames: [String] = []
    private var reuseLookup: [String: Int32] = [:]
    private var contentSize: Size?
    private let maxItems: Int

    public init(expectedCount: Int = 0, maxItems: Int = .max) {
        self.maxItems = maxItems
        let reserve = min(expectedCount, maxItems)
        ids.reserve(items: reserve, bytes: reserve * 8)
        rects.reserveCapacity(reserve)
        reuseClasses.reserveCapacity(reserve)
    }

    public var count: Int { rects.count }

    /// Adds an item given its id as UTF-8 bytes. `reuse` nil or empty: the view is never reused.
    public mutating func append<ID: Collection<UInt8>>(idUTF8 id: ID, rect: Rect, reuse: String?) throws(LayoutError) {
        let index = rects.count
        guard index < maxItems else { throw .tooManyItems(count: index + 1, limit: maxItems) }
        let length = id.count
        guard length > 0 else { throw .emptyID(index: index) }
        guard length <= Layout.maxIDBytes else { throw .idTooLong(index: index, bytes: length) }
        guard rect.isFinite else { throw .nonFiniteRect(index: index, id: String(decoding: id, as: UTF8.self)) }
        guard rect.width >= 0, rect.height >= 0 else {
            throw .negativeSize(index: index, id: String(decoding: id, as: UTF8.self))
        }
        guard (rect.x + rect.width).isFinite, (rect.y + rect.height).isFinite else {
            throw .extentOverflow(index: index, id: String(decoding: id, as: UTF8.self))
        }
        ids.append(id)
        rects.append(rect)
        reuseClasses.append(reuseClass(for: reuse))
    }

    public mutating func append(id: String, rect: Rect, reuse: String? = nil) throws(LayoutError) {
        try append(idUTF8: id.utf8, rect: rect, reuse: reuse)
    }

    /// Sets an explicit content size (the default is the items' bounding extent from the origin).
    public mutating func setContentSize(_ size: Size) throws(LayoutError) {
        guard size.isValidExtent else { throw .invalidContentSize(size) }
        contentSize = size
    }

    /// Validates ids for uniqueness and builds the layout with its index and digest.
    /// - Complexity: O(n log n).
    public consuming func build() throws(LayoutError) -> Layout {
        if let (first, second) = ids.buildLookup() {
            throw .duplicateID(id: ids.string(at: second), first: first, second: second)
        }
        var maxX = 0.0
        var maxY = 0.0
        for r in rects {
            maxX = max(maxX, r.x + r.width)
            maxY = max(maxY, r.y + r.height)
        }
        let defaultSize = Size(width: maxX, height: maxY)
        let size = contentSize ?? defaultSize
        let digest = Self.digest(ids: ids, rects: rects, classes: reuseClasses, names: reuseNames, contentSize: size)
        return Layout(
            ids: ids, rects: rects, reuseClasses: reuseClasses, reuseNames: reuseNames, contentSize: size,
            hasExplicitContentSize: size != defaultSize, digest: digest)
    }

    private mutating func reuseClass(for name: String?) -> Int32 {
        guard let name, !name.isEmpty else { return -1 }
        if let known = reuseLookup[name] { return known }
        let next = Int32(reuseNames.count)
        reuseNames.append(name)
        reuseLookup[name] = next
        return next
    }

    /// SHA-256 over a canonical serialization: per item its id (length-prefixed), rect (IEEE bits,
    /// -0 as 0) and reuse name (length-prefixed, empty for none), then the content size.
    private static func digest(
        ids: ItemIDTable, rects: ContiguousArray<Rect>, classes: ContiguousArray<Int32>, names: [String],
        contentSize: Size
    ) -> String {
        var sha = SHA256()
        var scratch: [UInt8] = []
        scratch.reserveCapacity(1 << 16)
        func flush() {
            scratch.withUnsafeBytes { sha.update($0) }
            scratch.removeAll(keepingCapacity: true)
        }
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { scratch.append(contentsOf: $0) } }
        func put(_ d: Double) { put((d == 0 ? 0 : d).bitPattern) }
        let nameBytes = names.map { Array($0.utf8) }
        put(UInt64(rects.count))
        for i in 0..<rects.count {
            put(UInt32(ids.byteCount(at: i)))
            ids.withBytes(at: i) { scratch.append(contentsOf: $0) }
            let r = rects[i]
            put(r.x)
            put(r.y)
            put(r.width)
            put(r.height)
            let c = classes[i]
            if c < 0 {
                put(UInt32(0))
            } else {
                put(UInt32(nameBytes[Int(c)].count))
                scratch.append(contentsOf: nameBytes[Int(c)])
            }
            if scratch.count >= 1 << 16 - 600 { flush() }
        }
        put(contentSize.width)
        put(contentSize.height)
        flush()
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in sha.finalize().prefix(16) {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
