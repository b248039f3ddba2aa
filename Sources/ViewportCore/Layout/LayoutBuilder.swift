import Crypto

/// Collects items one by one (as a decoder reads them) and validates them into a `Layout`.
///
/// Validation happens as items arrive, so a bad item fails fast with its position and id.
public struct LayoutBuilder: Sendable {
    private var ids = ItemIDTable()
    private var rects = ContiguousArray<Rect>()
    private var reuseClasses = ContiguousArray<Int32>()
    private var reuseNames: [String] = []
    private var reuseLookup: [String: Int32] = [:]
    private var lastReuse: (name: String, reuseClass: Int32)?
    private var contentSize: Size?
    private let maxItems: Int
    /// Runs of explicit items and generated sections; only kept once a section is generated.
    private var segments: [LayoutSegment] = []
    private var generatedCount = 0
    /// Sticky items with their rects.
    private var sticky: [(item: Int, rect: Rect)] = []
    /// The layout's axis (sticky items pin along it).
    private var axis = Axis.y
    /// Added to the items' extent for the default content size (a section stack's trailing insets).
    private var trailingPadding = Size.zero

    public init(expectedCount: Int = 0, maxItems: Int = .max) {
        self.maxItems = maxItems
        let reserve = min(expectedCount, maxItems)
        ids.reserve(items: reserve, bytes: reserve * 8)
        rects.reserveCapacity(reserve)
        reuseClasses.reserveCapacity(reserve)
    }

    /// Items so far, explicit and generated.
    public var count: Int { rects.count + generatedCount }

    /// Adds an item given its id as UTF-8 bytes. `reuse` nil or empty: the view is never reused.
    /// A `sticky` item is a section header that pins to the viewport's leading edge along the
    /// layout's axis (the top for `y`) while its section is on screen.
    public mutating func append<ID: Collection<UInt8>>(idUTF8 id: ID, rect: Rect, reuse: String?, sticky: Bool = false) throws(LayoutError) {
        let index = count
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
        if !segments.isEmpty {
            if case .explicit(let start, let storageStart, let n) = segments[segments.count - 1] {
                segments[segments.count - 1] = .explicit(start: start, storageStart: storageStart, count: n + 1)
            } else {
                segments.append(.explicit(start: index, storageStart: rects.count, count: 1))
            }
        }
        if sticky { self.sticky.append((index, rect)) }
        ids.append(id)
        rects.append(rect)
        reuseClasses.append(reuseClass(for: reuse))
    }

    public mutating func append(id: String, rect: Rect, reuse: String? = nil, sticky: Bool = false) throws(LayoutError) {
        try append(idUTF8: id.utf8, rect: rect, reuse: reuse, sticky: sticky)
    }

    /// Adds a generated section: `count` items `<id>-<k>` whose rects `shape` computes from
    /// `origin` (see `GeneratedSection`). It takes memory for its description, not per item.
    /// Returns the section's far corner (its largest `x + width` and `y + height`).
    @discardableResult
    public mutating func appendSection(
        id: String, count: Int, shape: GeneratedSection.Shape, origin: Point, reuse: String?
    ) throws(LayoutError) -> Point {
        let field = "sections[\(id)]"
        guard !id.isEmpty else { throw .invalidSection(field: field, reason: "id must not be empty") }
        guard count >= 0 else { throw .invalidSection(field: "\(field).count", reason: "must not be negative") }
        // `count` may be any Int: compare without adding, which could overflow.
        guard count <= maxItems - self.count else {
            let (total, overflow) = self.count.addingReportingOverflow(count)
            throw .tooManyItems(count: overflow ? .max : total, limit: maxItems)
        }
        guard id.utf8.count + 1 + String(max(count - 1, 0)).utf8.count <= Layout.maxIDBytes else {
            throw .invalidSection(field: field, reason: "its item ids \"\(id)-…\" would exceed \(Layout.maxIDBytes) bytes")
        }
        guard origin.isFinite else { throw .invalidSection(field: field, reason: "its position is not finite") }
        if segments.isEmpty && !rects.isEmpty {
            segments.append(.explicit(start: 0, storageStart: 0, count: rects.count))
        }
        let section = GeneratedSection(id: id, count: count, shape: shape, origin: origin, reuseClass: reuseClass(for: reuse))
        if count > 0 {
            // The far corner, not just the last item: a grid's last column may be in an earlier row.
            guard section.farCorner.isFinite else {
                throw .invalidSection(field: field, reason: "its items reach beyond the largest finite coordinate")
            }
        }
        segments.append(.generated(start: self.count, section: section))
        generatedCount += count
        return section.farCorner
    }

    /// Sets the layout's axis (`y` by default): the one its sections stack along, along which sticky
    /// items pin.
    public mutating func setAxis(_ axis: Axis) { self.axis = axis }

    /// Grows the default content size beyond the items' extent (a section stack's trailing insets).
    public mutating func setTrailingPadding(_ padding: Size) throws(LayoutError) {
        guard padding.isValidExtent else { throw .invalidSection(field: "insets", reason: "must be finite and not negative") }
        trailingPadding = padding
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
        var sectionIDs: [String: Int] = [:]
        for case .generated(let start, let section) in segments {
            if let other = sectionIDs[section.id] {
                throw .invalidSection(field: "sections[\(section.id)]", reason: "the id is already used by the section at item \(other)")
            }
            sectionIDs[section.id] = start
            maxX = max(maxX, section.farCorner.x)
            maxY = max(maxY, section.farCorner.y)
        }
        let defaultSize = Size(width: maxX, height: maxY)
        let size = contentSize ?? Size(width: maxX + trailingPadding.width, height: maxY + trailingPadding.height)
        guard size.isFinite else {
            throw .invalidSection(field: "insets", reason: "the items' extent plus the trailing insets passes the largest finite number")
        }
        let axis = self.axis
        let stickyByTop = sticky.sorted {
            (axis.leadingEdge(of: $0.rect), $0.item) < (axis.leadingEdge(of: $1.rect), $1.item)
        }.map(\.item)
        // Without an index yet: it serves ids, rects and reuse classes to the checks and the digest.
        let provisional = Layout(
            ids: ids, rects: rects, reuseClasses: reuseClasses, segments: segments, stickyItems: stickyByTop,
            reuseNames: reuseNames, contentSize: size, hasExplicitContentSize: size != defaultSize, digest: "", index: nil,
            axis: axis)
        // An explicit id that spells a generated one ("feed-3") would name two items.
        if !sectionIDs.isEmpty {
            for run in provisional.explicitRuns {
                for j in 0..<run.count {
                    let k = run.storageStart + j
                    guard let generated = ids.withBytes(at: k, { provisional.generatedItem(withIDBytes: $0) }) else { continue }
                    let position = run.start + j
                    throw .duplicateID(id: ids.string(at: k), first: min(position, generated), second: max(position, generated))
                }
            }
        }
        // The digest and the index are independent: make them on two cores.
        let (digest, index) = Parallel.both(
            { Self.digest(of: provisional) },
            { [rects, segments] in Layout.makeIndex(rects: rects, segments: segments) })
        return Layout(
            ids: ids, rects: rects, reuseClasses: reuseClasses, segments: segments, stickyItems: stickyByTop,
            reuseNames: reuseNames, contentSize: size, hasExplicitContentSize: size != defaultSize,
            digest: digest, index: index, axis: axis)
    }

    private mutating func reuseClass(for name: String?) -> Int32 {
        guard let name, !name.isEmpty else { return -1 }
        // Runs of items share an identifier: compare with the last one before hashing.
        if let last = lastReuse, last.name == name { return last.reuseClass }
        let known = reuseLookup[name] ?? {
            let next = Int32(reuseNames.count)
            reuseNames.append(name)
            reuseLookup[name] = next
            return next
        }()
        lastReuse = (name, known)
        return known
    }

    /// SHA-256 (swift-crypto) over a canonical serialization: per item its id (length-prefixed),
    /// rect (IEEE bits, -0 as 0) and reuse name (length-prefixed, empty for none), then the content
    /// size. Generated items are serialized like explicit ones, so a layout sent as `sections` and
    /// the same items sent one by one get the same id (LayoutDigestTests pins known ids). A layout
    /// along x with sticky items adds its axis and its sticky items (their positions), which decide
    /// where they pin: it is not the layout along y with the same rects. Every other layout's
    /// digest is what it always was (without sticky items the axis changes nothing).
    /// `package` for viewport-bench, which times it alone.
    /// - Complexity: O(n) for n items (every id, rect and reuse name is hashed).
    package static func digest(of layout: Layout) -> String {
        var sha = Crypto.SHA256()
        var scratch: [UInt8] = []
        scratch.reserveCapacity(1 << 16)
        func flush() {
            scratch.withUnsafeBytes { sha.update(bufferPointer: $0) }
            scratch.removeAll(keepingCapacity: true)
        }
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { scratch.append(contentsOf: $0) } }
        func put(_ d: Double) { put((d == 0 ? 0 : d).bitPattern) }
        let nameBytes = layout.reuseNames.map { Array($0.utf8) }
        put(UInt64(layout.count))
        for i in 0..<layout.count {
            layout.withIDBytes(at: i) { id in
                put(UInt32(id.count))
                scratch.append(contentsOf: id)
            }
            let r = layout.rect(at: i)
            put(r.x)
            put(r.y)
            put(r.width)
            put(r.height)
            let c = layout.reuseClass(of: i)
            if c < 0 {
                put(UInt32(0))
            } else {
                put(UInt32(nameBytes[c].count))
                scratch.append(contentsOf: nameBytes[c])
            }
            if scratch.count >= 1 << 16 - 600 { flush() }
        }
        put(layout.contentSize.width)
        put(layout.contentSize.height)
        if layout.axis == .x && !layout.stickyItems.isEmpty {
            scratch.append(contentsOf: Array("sticky-x".utf8))
            put(UInt64(layout.stickyItems.count))
            for item in layout.stickyItems.sorted() {
                put(UInt64(item))
                if scratch.count >= 1 << 16 - 16 { flush() }
            }
        }
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
