import Crypto

/// Collects items one by one (as a decoder reads them) and validates them into a `Layout`.
///
/// Validation happens as items arrive, so a bad item fails fast with its position and id.
public struct LayoutBuilder: Sendable {
    private var ids = ItemIDTable()
    private var rects = RectStore()
    private var reuseClasses = ReuseClassStore()
    private var reuseNames: [String] = []
    private var reuseLookup: [String: Int32] = [:]
    private var lastReuse: (name: String, reuseClass: Int32)?
    private var contentSize: Size?
    private let maxItems: Int
    /// Runs of explicit items and generated sections; only kept once a section is generated.
    private var segments: [LayoutSegment] = []
    /// Items of generated, stack and placed sections.
    private var generatedCount = 0
    private var stacks: [LayoutStack] = []
    private var placed: [PlacedSection] = []
    /// Set for a layout with stacks (see `SectionStack`).
    private var geometry: (axis: Axis, insets: Insets, spacing: Double)?
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

    /// Sets the layout's axis (`y` by default): the one its sections stack along, along which sticky
    /// items pin.
    public mutating func setAxis(_ axis: Axis) { self.axis = axis }

    /// Marks the layout as one with stacks: its sections are laid out by a `SectionStack` along
    /// `axis`, and kept movable (see `appendStack`).
    public mutating func setStackGeometry(axis: Axis, insets: Insets, spacing: Double) {
        geometry = (axis, insets, spacing)
    }

    /// Adds an item given its id as UTF-8 bytes. `reuse` nil or empty: the view is never reused.
    /// A `sticky` item is a section header that pins to the viewport's leading edge along the
    /// layout's axis (the top for `y`) while its section is on screen.
    ///
    /// Specialized for `[UInt8]` (what the JSON decoder passes) and exported: a call from another
    /// module otherwise runs the generic body, with a witness-table and metadata lookup per item
    /// (3.8 % of a 1M-item POST's CPU in `perf`).
    @_specialize(exported: true, where ID == [UInt8])
    public mutating func append<ID: Collection<UInt8>>(idUTF8 id: ID, rect: Rect, reuse: String?, sticky: Bool = false) throws(LayoutError) {
        let index = count
        guard index < maxItems else { throw .tooManyItems(count: index + 1, limit: maxItems) }
        // Explicit items keep absolute rects, which could not follow an edited stack.
        guard stacks.isEmpty && placed.isEmpty else {
            throw .invalidSection(field: "items[\(index)]", reason: "items after a stack go in an items section (appendPlacedSection)")
        }
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
        id: String, count: Int, shape: GeneratedSection.Shape, origin: Point, reuse: String?, movable: Bool = false
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
        let section = GeneratedSection(id: id, count: count, shape: shape, origin: origin, reuseClass: reuseClass(for: reuse), movable: movable)
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

    /// Adds a stack section (docs/api.md "Stacks and edits"): its items' ids go into the id table (their uids
    /// are their positions there), their sizes into a `StackSection` at `origin` flowing along
    /// `axis`. `field` names the section in errors (`sections[2]`). Returns where the next
    /// section starts along the axis: the origin plus the longest lane.
    /// - Complexity: O(n log lanes) for n items.
    public mutating func appendStack(
        id: String, spec: StackSpec, origin: Point, axis: Axis, reuse: String?, field: String
    ) throws(LayoutError) -> Double {
        guard !id.isEmpty else { throw .invalidSection(field: field + ".id", reason: "must not be empty") }
        let n = spec.items.count
        guard n <= maxItems - count else { throw .tooManyItems(count: count + n, limit: maxItems) }
        // Uids are Int32: keep the table and a session's inserts well inside.
        guard ids.count + n <= Self.maxStackUID else { throw .tooManyItems(count: count + n, limit: Self.maxStackUID) }
        guard origin.isFinite else { throw .invalidSection(field: field, reason: "its position is not finite") }
        let storageStart = ids.count
        let sectionClass = reuseClass(for: reuse)
        var items: [StackSection.Item] = []
        items.reserveCapacity(n)
        ids.reserve(items: ids.count + n, bytes: ids.bytes.count + n * 8)
        for k in 0..<n {
            let item = spec.items[k]
            var id = item.id
            let length = id.utf8.count
            guard length > 0 else { throw .invalidSection(field: "\(field).stack.items[\(k)].id", reason: "must not be empty") }
            guard length <= Layout.maxIDBytes else {
                throw .invalidSection(field: "\(field).stack.items[\(k)].id", reason: "\(length) bytes of UTF-8, at most \(Layout.maxIDBytes) allowed")
            }
            id.withUTF8 { ids.append($0) }
            let itemClass: Int32? = item.reuse.map { reuseClass(for: $0) }
            items.append(StackSection.Item(uid: Int32(storageStart + k), size: item.size, reuseClass: itemClass, lane: item.lane))
        }
        let section: StackSection
        do {
            section = try StackSection(
                origin: origin, axis: axis, spacing: spec.spacing, lanes: spec.lanes, laneSize: spec.laneSize, estimate: spec.estimate,
                reuseClass: sectionClass, items: items)
        } catch {
            throw .invalidSection(field: "\(field).stack.\(error.field)", reason: error.reason + Self.itemNote(error.field, spec.items))
        }
        if geometry == nil { geometry = (axis, .zero, 0) }
        let stack = LayoutStack(id: id, section: section, storageStart: storageStart, builtCount: n)
        guard stack.far.isFinite, section.farCorner.isFinite else {
            throw .invalidSection(field: field, reason: "its items reach beyond the largest finite coordinate")
        }
        if segments.isEmpty && !rects.isEmpty {
            segments.append(.explicit(start: 0, storageStart: 0, count: rects.count))
        }
        segments.append(.stack(start: count, count: n, stack: stacks.count))
        stacks.append(stack)
        generatedCount += n
        return stack.far
    }

    /// The largest uid of a stack item: uids are `Int32`, and a session's inserted items take
    /// uids above the table's.
    public static let maxStackUID = Int(Int32.max) / 2

    /// ` (item "id")` when `field` names a stack's item (`items[3].size`).
    private static func itemNote(_ field: String, _ items: [StackSpec.Item]) -> String {
        guard field.hasPrefix("items["), let close = field.firstIndex(of: "]"),
            let k = Int(field[field.index(field.startIndex, offsetBy: 6)..<close]), items.indices.contains(k)
        else { return "" }
        return " (item \"\(items[k].id)\")"
    }

    /// Adds an `items` section of a layout with stacks: its items keep their rects relative to
    /// `origin` (see `PlacedSection`). Returns its far corner (origin plus its items' extent).
    /// - Complexity: O(n log n) (its R-tree).
    public mutating func appendPlacedSection(id: String?, items: [SectionSpec.Item], origin: Point) throws(LayoutError) -> Point {
        guard items.count <= maxItems - count else { throw .tooManyItems(count: count + items.count, limit: maxItems) }
        let storageStart = ids.count
        var relative = RectStore()
        var classes = ReuseClassStore()
        var stickyIndices: [Int] = []
        relative.reserveCapacity(items.count)
        for (k, item) in items.enumerated() {
            let index = count + k
            let length = item.id.utf8.count
            guard length > 0 else { throw .emptyID(index: index) }
            guard length <= Layout.maxIDBytes else { throw .idTooLong(index: index, bytes: length) }
            let r = item.rect
            guard r.isFinite else { throw .nonFiniteRect(index: index, id: item.id) }
            guard r.width >= 0, r.height >= 0 else { throw .negativeSize(index: index, id: item.id) }
            let placed = Rect(x: origin.x + r.x, y: origin.y + r.y, width: r.width, height: r.height)
            guard (placed.x + placed.width).isFinite, (placed.y + placed.height).isFinite, (r.x + r.width).isFinite, (r.y + r.height).isFinite
            else { throw .extentOverflow(index: index, id: item.id) }
            ids.append(item.id.utf8)
            relative.append(r)
            classes.append(reuseClass(for: item.reuse))
            if item.sticky {
                stickyIndices.append(k)
                sticky.append((index, placed))
            }
        }
        let section = PlacedSection(id: id, origin: origin, rects: relative, reuseClasses: classes, sticky: stickyIndices, storageStart: storageStart)
        guard section.farCorner.isFinite else { throw .invalidSection(field: "sections[\(id ?? "")]", reason: "its items reach beyond the largest finite coordinate") }
        if segments.isEmpty && !rects.isEmpty {
            segments.append(.explicit(start: 0, storageStart: 0, count: rects.count))
        }
        segments.append(.placed(start: count, count: items.count, section: placed.count))
        placed.append(section)
        generatedCount += items.count
        return section.farCorner
    }

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
        // The cheap checks first; their error is thrown after the id check, which comes first.
        var failure: LayoutError?
        var sectionIDs: [String: Int] = [:]
        for segment in segments {
            let id: String
            switch segment {
            case .generated(_, let section): id = section.id
            case .stack(_, _, let k): id = stacks[k].id
            case .placed, .explicit: continue
            }
            if let other = sectionIDs[id], failure == nil {
                failure = .invalidSection(field: "sections[\(id)]", reason: "the id is already used by the section at item \(other)")
            }
            sectionIDs[id] = sectionIDs[id] ?? segment.start
        }
        let extent = Layout.itemsExtent(explicitRects: rects, segments: segments, stacks: stacks, placed: placed)
        let defaultSize = Size(width: extent.x, height: extent.y)
        let size = contentSize ?? Size(width: extent.x + trailingPadding.width, height: extent.y + trailingPadding.height)
        if !size.isFinite && failure == nil {
            failure = .invalidSection(field: "insets", reason: "the items' extent plus the trailing insets passes the largest finite number")
        }
        let axis = self.axis
        let stickyByTop = sticky.sorted {
            (axis.leadingEdge(of: $0.rect), $0.item) < (axis.leadingEdge(of: $1.rect), $1.item)
        }.map(\.item)
        // Without an index or id lookup yet: it serves ids, rects and reuse classes to the checks
        // and the digest.
        let sectionGeometry = geometry.map {
            SectionGeometry(axis: $0.axis, insets: $0.insets, spacing: $0.spacing, givenContentSize: contentSize)
        }
        let provisional = Layout(
            ids: ids, rects: rects, reuseClasses: reuseClasses, segments: segments, stacks: stacks, placedSections: placed,
            stickyItems: stickyByTop, reuseNames: reuseNames, contentSize: size, hasExplicitContentSize: size != defaultSize, digest: "",
            index: nil, geometry: sectionGeometry, axis: axis)
        // An explicit id that spells a generated one ("feed-3") would name two items.
        if !provisional.generatedSections.isEmpty && failure == nil {
            for k in 0..<ids.count {
                guard let generated = ids.withBytes(at: k, { provisional.generatedItem(withIDBytes: $0) }),
                    let position = provisional.position(ofStorage: k)
                else { continue }
                failure = .duplicateID(id: ids.string(at: k), first: min(position, generated), second: max(position, generated))
                break
            }
        }
        func duplicate(_ pair: (Int, Int), in table: ItemIDTable) -> LayoutError {
            // Table positions are layout positions but for stack and placed items: translate.
            .duplicateID(
                id: table.string(at: pair.1), first: provisional.position(ofStorage: pair.0) ?? pair.0,
                second: provisional.position(ofStorage: pair.1) ?? pair.1)
        }
        if let failure {
            if let pair = ids.buildLookup() { throw duplicate(pair, in: ids) }
            throw failure
        }
        // The digest, and the id lookup then the index, are independent: make them on two cores.
        let (digest, (table, duplicatePair, index)) = Parallel.both(
            { Self.digest(of: provisional) },
            { [ids, rects, segments] in
                var table = ids
                let pair = table.buildLookup()
                return (table, pair, pair == nil ? Layout.makeIndex(rects: rects, segments: segments) : nil)
            })
        if let duplicatePair { throw duplicate(duplicatePair, in: table) }
        return Layout(
            ids: table, rects: rects, reuseClasses: reuseClasses, segments: segments, stacks: stacks, placedSections: placed,
            stickyItems: stickyByTop, reuseNames: reuseNames, contentSize: size, hasExplicitContentSize: size != defaultSize,
            digest: digest, index: index, geometry: sectionGeometry, axis: axis)
    }

    /// Numbers the reuse identifiers `names` first, in their order (those not known yet), whether
    /// or not items use them.
    mutating func declareReuseNames(_ names: [String]) {
        for name in names where !name.isEmpty { _ = reuseClass(for: name) }
        lastReuse = nil
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

    /// Builds `layout`'s id lookup again, alone (viewport-bench times it); true when no id repeats.
    package static func rebuildIDLookup(of layout: Layout) -> Bool {
        var table = layout.ids
        return table.buildLookup() == nil
    }

    /// SHA-256 (swift-crypto) over a canonical serialization: per item its id (length-prefixed),
    /// rect (IEEE bits, -0 as 0) and reuse name (length-prefixed, empty for none), then the content
    /// size. Generated and stack items are serialized like explicit ones, so a layout sent as
    /// `sections` and the same items sent one by one get the same id (LayoutDigestTests pins known
    /// ids). A layout along x with sticky items adds its axis and its sticky items (their
    /// positions), which decide where they pin: it is not the layout along y with the same rects.
    /// A layout with stacks adds its sections form (the binary encoding's, `encodeSections`: each
    /// section's kind, id and parameters, each stack item's measured size, reuse and lane): two
    /// such layouts with the same rects take different edits (another estimate, lanes, section
    /// id or reuse, other items measured), and the same rects posted as items take none, so
    /// none of them is the same layout as another (a shared id made a later layout answer with an
    /// earlier one's stacks). Every other layout's digest is what it always was (without sticky
    /// items the axis changes nothing). `package` for viewport-bench, which times it alone.
    /// - Complexity: O(n) for n items (every id, rect and reuse name is hashed; a layout with
    ///   stacks, its sections form too).
    package static func digest(of layout: Layout) -> String {
        var w = DigestWriter()
        defer { w.deallocate() }
        let nameBytes = layout.reuseNames.map { Array($0.utf8) }
        w.u64(UInt64(layout.count))
        layout.forEachInOrder { _, r, c, id in
            w.ensure(4 + id.count + 32 + 4)
            w.u32(UInt32(id.count))
            w.bytes(id)
            w.double(r.x)
            w.double(r.y)
            w.double(r.width)
            w.double(r.height)
            if c < 0 {
                w.u32(0)
            } else {
                w.u32(UInt32(nameBytes[c].count))
                nameBytes[c].withUnsafeBytes { w.bytes($0) }
            }
        }
        w.double(layout.contentSize.width)
        w.double(layout.contentSize.height)
        if layout.axis == .x && !layout.stickyItems.isEmpty {
            Array("sticky-x".utf8).withUnsafeBytes { w.bytes($0) }
            w.u64(UInt64(layout.stickyItems.count))
            for item in layout.stickyItems.sorted() { w.u64(UInt64(item)) }
        }
        if let geometry = layout.sectionsGeometry {
            var form = BinaryWriter(capacity: 1024)
            layout.encodeSections(geometry, into: &form)
            Array("stacks".utf8).withUnsafeBytes { w.bytes($0) }
            w.u64(UInt64(form.count))
            form.bytes.withUnsafeBytes { w.bytes($0) }
        }
        let sha = w.finish()
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in sha.finalize().prefix(16) {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Feeds SHA-256 through a 64 KiB buffer written with plain stores (appending to an array field
/// by field was a quarter of a million-item digest).
struct DigestWriter {
    private var sha = Crypto.SHA256()
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    private var fill = 0

    /// Makes room for `n` bytes written next (smaller than the buffer).
    @inline(__always)
    mutating func ensure(_ n: Int) { if fill + n > buffer.count { flush() } }

    private mutating func flush() {
        sha.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<fill]))
        fill = 0
    }

    @inline(__always)
    mutating func u32(_ v: UInt32) {
        ensure(4)
        buffer.storeBytes(of: v.littleEndian, toByteOffset: fill, as: UInt32.self)
        fill += 4
    }

    @inline(__always)
    mutating func u64(_ v: UInt64) {
        ensure(8)
        buffer.storeBytes(of: v.littleEndian, toByteOffset: fill, as: UInt64.self)
        fill += 8
    }

    /// A double's IEEE bits, -0 as 0.
    @inline(__always)
    mutating func double(_ d: Double) { u64((d == 0 ? 0 : d).bitPattern) }

    @inline(__always)
    mutating func bytes(_ b: UnsafeRawBufferPointer) {
        if b.count > buffer.count / 2 {
            flush()
            sha.update(bufferPointer: b)
            return
        }
        ensure(b.count)
        if let base = b.baseAddress, b.count > 0 { (buffer.baseAddress.unsafelyUnwrapped + fill).copyMemory(from: base, byteCount: b.count) }
        fill += b.count
    }

    /// The hash state after everything written.
    mutating func finish() -> Crypto.SHA256 {
        flush()
        return sha
    }

    func deallocate() { buffer.deallocate() }
}
