/// The compact binary form of a layout, as stored in a shared store (about 6–10 bytes per item of
/// a typical list against 60–100 of JSON): explicit items with front-coded ids and delta-coded
/// integer coordinates, generated sections as their description. Decoding rebuilds the layout
/// through ``LayoutBuilder`` (every check runs again), so its digest is recomputed and can be
/// compared with the id the bytes were stored under.
///
/// Format (version 2): `"VPL"`, version byte, item count, content size (raw doubles), the layout's
/// axis (0 x, 1 y: sticky items pin along it), reuse names,
/// sticky positions (delta-coded), then segments, each a kind byte:
/// - `0` explicit items: count, then per item its id (shared prefix length with the previous id,
///   suffix), reuse class + 1 (0 for none), and x, y, width, height as compact numbers;
/// - `1` list, `2` list with a size per item, `3` grid: the generated section's id, count, reuse
///   class + 1, origin and shape.
/// A layout with stacks (version 3) is written instead as its sections form after the header
/// (kind byte `9`): the stacking axis, insets, spacing and given content size, then each section
/// (`10` stack with its items' ids, measured sizes, own reuse identifiers and lanes; `11` list;
/// `12` list with a size per item; `13` grid; `14` items with their relative rects), and rebuilt
/// through ``SectionStack`` as a posted sections layout is, so it gets the same id and rects.
/// A later section kind gets the next kind byte; a reader that meets a kind or version it does
/// not know refuses the bytes (``BinaryFormatError/unsupported(_:)``) rather than guess.
extension Layout {
    static let binaryMagic: [UInt8] = Array("VPL".utf8)
    static let binaryVersion: UInt8 = 3

    private enum SegmentKind: UInt8 {
        case explicit = 0
        case list = 1
        case sizedList = 2
        case grid = 3
        /// A layout with stacks, written as its sections (then the section kinds below).
        case sections = 9
        case stackSection = 10
        case listSection = 11
        case sizedListSection = 12
        case gridSection = 13
        case itemsSection = 14
    }

    /// The layout in its binary form.
    /// - Complexity: O(n) for n explicit items (plus sizes of sized lists).
    public func binaryEncoded() -> [UInt8] {
        var w = BinaryWriter(capacity: 64 + ids.bytes.count + explicitRects.count * 8)
        w.raw(Self.binaryMagic)
        w.byte(Self.binaryVersion)
        w.count(count)
        w.size(contentSize)
        w.byte(axis == .x ? 0 : 1)
        w.count(reuseNames.count)
        for name in reuseNames { w.string(name) }
        let sticky = stickyItems.sorted()
        w.count(sticky.count)
        var previous = 0
        for item in sticky {
            w.count(item - previous)
            previous = item
        }
        if let geometry = sectionsGeometry {
            encodeSections(geometry, into: &w)
            return w.bytes
        }
        let runs: [LayoutSegment] = segments.isEmpty
            ? (count == 0 ? [] : [.explicit(start: 0, storageStart: 0, count: count)]) : segments
        w.count(runs.count)
        for segment in runs {
            switch segment {
            case .explicit(let start, _, let n):
                w.byte(SegmentKind.explicit.rawValue)
                w.count(n)
                encodeExplicit(start..<(start + n), into: &w)
            case .generated(_, let section):
                encode(section, into: &w)
            case .stack, .placed:
                // Only layouts with stacks have these, and they are written as sections above.
                preconditionFailure("a stack or placed section outside a layout with stacks")
            }
        }
        return w.bytes
    }

    /// The sections form of a layout with stacks (see the format above).
    func encodeSections(_ geometry: (axis: Axis, insets: Insets, spacing: Double, contentSize: Size?), into w: inout BinaryWriter) {
        w.count(1)
        w.byte(SegmentKind.sections.rawValue)
        w.byte(geometry.axis == .x ? 0 : 1)
        w.double(geometry.insets.top)
        w.double(geometry.insets.left)
        w.double(geometry.insets.bottom)
        w.double(geometry.insets.right)
        w.double(geometry.spacing)
        w.bool(geometry.contentSize != nil)
        if let size = geometry.contentSize { w.size(size) }
        let sections = sectionDescriptions
        w.count(sections.count)
        for (k, section) in sections.enumerated() {
            switch section {
            case .stack(let id, let reuse, let estimate, let spacing, let lanes, let laneSize):
                w.byte(SegmentKind.stackSection.rawValue)
                w.string(id)
                w.optionalString(reuse)
                w.bool(estimate != nil)
                if let estimate { w.size(estimate) }
                w.double(spacing)
                w.count(lanes)
                w.double(laneSize)
                var n = 0
                forEachStackItem(inSection: k) { _, _, _, _ in n += 1 }
                w.count(n)
                forEachStackItem(inSection: k) { id, size, itemReuse, lane in
                    w.lengthPrefixed(id)
                    w.bool(size != nil)
                    if let size { w.size(size) }
                    w.optionalString(itemReuse)
                    w.count(lane)
                }
            case .list(let id, let reuse, let axis, let count, let size, let spacing):
                w.byte(SegmentKind.listSection.rawValue)
                w.string(id)
                w.optionalString(reuse)
                w.byte(axis == .x ? 0 : 1)
                w.count(count)
                w.size(size)
                w.double(spacing)
            case .sizedList(let id, let reuse, let axis, let sizes, let spacing):
                w.byte(SegmentKind.sizedListSection.rawValue)
                w.string(id)
                w.optionalString(reuse)
                w.byte(axis == .x ? 0 : 1)
                w.count(sizes.count)
                for size in sizes { w.size(size) }
                w.double(spacing)
            case .grid(let id, let reuse, let columns, let count, let itemSize, let spacing):
                w.byte(SegmentKind.gridSection.rawValue)
                w.string(id)
                w.optionalString(reuse)
                w.count(columns)
                w.count(count)
                w.size(itemSize)
                w.size(spacing)
            case .items(let id):
                w.byte(SegmentKind.itemsSection.rawValue)
                w.optionalString(id)
                var n = 0
                forEachPlacedItem(inSection: k) { _, _, _, _ in n += 1 }
                w.count(n)
                forEachPlacedItem(inSection: k) { id, rect, reuse, sticky in
                    w.lengthPrefixed(id)
                    w.rect(rect)
                    w.optionalString(reuse)
                    w.bool(sticky)
                }
            }
        }
    }

    /// Rebuilds a layout with stacks from its sections form, as a posted one is built.
    /// `reuseNames` are the header's, in their order: an edited version's checkpoint keeps its
    /// classes' numbers (a session's pools are numbered by them), names no item uses any more
    /// included; a posted layout's are in first-use order already.
    private static func decodeSections(_ r: inout BinaryReader, maxItems: Int, reuseNames: [String]) throws(BinaryFormatError) -> LayoutBuilder {
        func axis() throws(BinaryFormatError) -> Axis {
            let code = try r.byte()
            guard code <= 1 else { throw .invalid("axis \(code)") }
            return code == 0 ? .x : .y
        }
        func valid<T>(_ body: () throws(LayoutError) -> T) throws(BinaryFormatError) -> T {
            do { return try body() } catch { throw .invalid("the stored layout is not valid: \(error)") }
        }
        let stackAxis = try axis()
        let insets = Insets(top: try r.double(), left: try r.double(), bottom: try r.double(), right: try r.double())
        let spacing = try r.double()
        let contentSize: Size? = try r.bool() ? try r.size() : nil
        var specs: [SectionSpec] = []
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            guard let kind = SegmentKind(rawValue: try r.byte()) else { throw .unsupported("a layout section kind this build does not know") }
            switch kind {
            case .stackSection:
                let id = try r.string(limit: Layout.maxIDBytes)
                let reuse = try r.optionalString()
                let estimate: Size? = try r.bool() ? try r.size() : nil
                var spec = StackSpec(items: [], estimate: estimate, spacing: try r.double(), lanes: try r.count(limit: 1 << 16), laneSize: try r.double())
                let n = try r.elementCount(minBytes: 4)
                guard n <= maxItems else { throw .invalid("\(n) items, more than \(maxItems)") }
                spec.items.reserveCapacity(n)
                for _ in 0..<n {
                    let itemID = String(decoding: try r.lengthPrefixed(limit: Layout.maxIDBytes), as: UTF8.self)
                    let size: Size? = try r.bool() ? try r.size() : nil
                    spec.items.append(StackSpec.Item(id: itemID, size: size, reuse: try r.optionalString(), lane: try r.count(limit: 1 << 16)))
                }
                specs.append(SectionSpec(id: id, reuse: reuse, shape: .stack(spec)))
            case .listSection:
                let id = try r.string(limit: Layout.maxIDBytes)
                let reuse = try r.optionalString()
                let listAxis = try axis()
                specs.append(SectionSpec(id: id, reuse: reuse, shape: .list(axis: listAxis, count: try r.count(limit: maxItems), size: try r.size(), spacing: try r.double())))
            case .sizedListSection:
                let id = try r.string(limit: Layout.maxIDBytes)
                let reuse = try r.optionalString()
                let listAxis = try axis()
                let n = try r.elementCount(minBytes: 16)
                var sizes: [Size] = []
                sizes.reserveCapacity(n)
                for _ in 0..<n { sizes.append(try r.size()) }
                specs.append(SectionSpec(id: id, reuse: reuse, shape: .sizedList(axis: listAxis, sizes: sizes, spacing: try r.double())))
            case .gridSection:
                let id = try r.string(limit: Layout.maxIDBytes)
                let reuse = try r.optionalString()
                let columns = try r.count(limit: Int(Int32.max))
                specs.append(SectionSpec(
                    id: id, reuse: reuse, shape: .grid(columns: columns, count: try r.count(limit: maxItems), itemSize: try r.size(), spacing: try r.size())))
            case .itemsSection:
                let id = try r.optionalString()
                var items: [SectionSpec.Item] = []
                for _ in 0..<(try r.elementCount(minBytes: 35)) {
                    let itemID = String(decoding: try r.lengthPrefixed(limit: Layout.maxIDBytes), as: UTF8.self)
                    items.append(SectionSpec.Item(id: itemID, rect: try r.rect(), reuse: try r.optionalString(), sticky: try r.bool()))
                }
                specs.append(SectionSpec(id: id, shape: .items(items)))
            default:
                throw .invalid("a segment kind inside a sections form")
            }
        }
        var builder = LayoutBuilder(maxItems: maxItems)
        builder.declareReuseNames(reuseNames)
        if let contentSize { try valid { () throws(LayoutError) in try builder.setContentSize(contentSize) } }
        builder.setAxis(stackAxis)
        var stack = SectionStack(axis: stackAxis, insets: insets, spacing: spacing, withStacks: true)
        try valid { () throws(LayoutError) in
            for spec in specs { try stack.append(spec, to: &builder) }
            try builder.setTrailingPadding(stack.trailingPadding)
        }
        return builder
    }

    private func encodeExplicit(_ items: Range<Int>, into w: inout BinaryWriter) {
        var previousID: [UInt8] = []
        previousID.reserveCapacity(Layout.maxIDBytes)
        var bases: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
        for item in items {
            withIDBytes(at: item) { id in
                var shared = 0
                let limit = min(id.count, previousID.count)
                while shared < limit && id[shared] == previousID[shared] { shared += 1 }
                w.count(shared)
                w.lengthPrefixed(UnsafeRawBufferPointer(rebasing: id[shared...]))
                previousID.removeAll(keepingCapacity: true)
                previousID.append(contentsOf: id)
            }
            w.count(reuseClass(of: item) + 1)
            let r = rect(at: item)
            w.compact(r.x, base: &bases.0)
            w.compact(r.y, base: &bases.1)
            w.compact(r.width, base: &bases.2)
            w.compact(r.height, base: &bases.3)
        }
    }

    private func encode(_ section: GeneratedSection, into w: inout BinaryWriter) {
        func header(_ kind: SegmentKind) {
            w.byte(kind.rawValue)
            w.string(section.id)
            w.count(section.count)
            w.count(Int(section.reuseClass) + 1)
            w.point(section.origin)
        }
        switch section.shape {
        case .list(let axis, let size, let spacing):
            header(.list)
            w.byte(axis == .x ? 0 : 1)
            w.size(size)
            w.double(spacing)
        case .sizedList(let axis, let starts, let sizes, let longest, let spacing):
            header(.sizedList)
            w.byte(axis == .x ? 0 : 1)
            var bases: (Int64, Int64, Int64) = (0, 0, 0)
            for size in sizes {
                w.compact(size.width, base: &bases.0)
                w.compact(size.height, base: &bases.1)
            }
            for start in starts { w.compact(start, base: &bases.2) }
            w.double(longest)
            w.double(spacing)
        case .grid(let rowsAlong, let columns, let itemSize, let spacing):
            header(.grid)
            w.byte(rowsAlong == .x ? 0 : 1)
            w.count(columns)
            w.size(itemSize)
            w.size(spacing)
        }
    }

    /// Rebuilds a layout from its binary form, refusing more than `maxItems` items. Its
    /// ``digest`` is recomputed from the content.
    /// - Complexity: O(n log n), as building it from JSON (less the parsing).
    public static func decodeBinary(_ bytes: [UInt8], maxItems: Int = .max) throws(BinaryFormatError) -> Layout {
        let result: Result<Layout, BinaryFormatError> = bytes.withUnsafeBytes { raw in
            do throws(BinaryFormatError) {
                var r = BinaryReader(raw)
                return .success(try decode(&r, maxItems: maxItems))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func decode(_ r: inout BinaryReader, maxItems: Int) throws(BinaryFormatError) -> Layout {
        let magic = try r.take(3)
        guard magic.elementsEqual(binaryMagic) else { throw .unsupported("not a stored layout") }
        let version = try r.byte()
        guard version == binaryVersion else { throw .unsupported("stored layout version \(version) (this build reads \(binaryVersion))") }
        let total = try r.count(limit: maxItems)
        let contentSize = try r.size()
        let axisCode = try r.byte()
        guard axisCode <= 1 else { throw .invalid("layout axis \(axisCode)") }
        var names: [String] = []
        for _ in 0..<(try r.elementCount()) { names.append(try r.string(limit: 1 << 20)) }
        func name(ofClass stored: Int) throws(BinaryFormatError) -> String? {
            guard stored > 0 else { return nil }
            guard stored - 1 < names.count else { throw .invalid("reuse class \(stored - 1) of \(names.count)") }
            return names[stored - 1]
        }
        var sticky = Set<Int>()
        var position = 0
        for _ in 0..<(try r.elementCount()) {
            position += try r.count(limit: total)
            guard position < total else { throw .invalid("sticky item \(position) of \(total)") }
            sticky.insert(position)
        }
        var builder = LayoutBuilder(expectedCount: min(total, r.remaining / 4), maxItems: maxItems)
        builder.setAxis(axisCode == 0 ? .x : .y)
        /// A layout rule the bytes break: they were not written by ``binaryEncoded()``.
        func valid<T>(_ body: () throws(LayoutError) -> T) throws(BinaryFormatError) -> T {
            do { return try body() } catch { throw .invalid("the stored layout is not valid: \(error)") }
        }
        for _ in 0..<(try r.elementCount()) {
            guard let kind = SegmentKind(rawValue: try r.byte()) else {
                throw .unsupported("a layout section kind this build does not know")
            }
            switch kind {
            case .explicit:
                let n = try r.elementCount(minBytes: 7)
                var id: [UInt8] = []
                id.reserveCapacity(Layout.maxIDBytes)
                var bases: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
                for _ in 0..<n {
                    let shared = try r.count(limit: id.count)
                    id.removeSubrange(shared...)
                    id.append(contentsOf: try r.lengthPrefixed(limit: Layout.maxIDBytes))
                    let reuse = try name(ofClass: try r.count(limit: names.count))
                    let rect = Rect(
                        x: try r.compact(base: &bases.0), y: try r.compact(base: &bases.1),
                        width: try r.compact(base: &bases.2), height: try r.compact(base: &bases.3))
                    let isSticky = sticky.contains(builder.count)
                    try valid { () throws(LayoutError) in try builder.append(idUTF8: id, rect: rect, reuse: reuse, sticky: isSticky) }
                }
            case .sections:
                // A layout with stacks: its sections form is the whole body.
                let rebuilt = try decodeSections(&r, maxItems: maxItems, reuseNames: names)
                try r.finish()
                guard rebuilt.count == total else { throw .invalid("\(rebuilt.count) items, the header says \(total)") }
                let layout = try valid { () throws(LayoutError) in try rebuilt.build() }
                guard layout.contentSize == contentSize else { throw .invalid("the sections give another content size") }
                return layout
            case .stackSection, .listSection, .sizedListSection, .gridSection, .itemsSection:
                throw .invalid("a section kind outside a sections form")
            case .list, .sizedList, .grid:
                let id = try r.string(limit: Layout.maxIDBytes)
                let n = try r.count(limit: maxItems)
                let reuse = try name(ofClass: try r.count(limit: names.count))
                let origin = try r.point()
                let axis: Axis = try r.byte() == 0 ? .x : .y
                let shape: GeneratedSection.Shape
                switch kind {
                case .list:
                    shape = .list(axis: axis, size: try r.size(), spacing: try r.double())
                case .sizedList:
                    guard n <= r.remaining / 3 else { throw .truncated(at: r.position) }
                    var bases: (Int64, Int64, Int64) = (0, 0, 0)
                    var sizes: [Size] = []
                    sizes.reserveCapacity(n)
                    for _ in 0..<n { sizes.append(Size(width: try r.compact(base: &bases.0), height: try r.compact(base: &bases.1))) }
                    var starts: [Double] = []
                    starts.reserveCapacity(n)
                    for _ in 0..<n { starts.append(try r.compact(base: &bases.2)) }
                    shape = .sizedList(axis: axis, starts: starts, sizes: sizes, longest: try r.double(), spacing: try r.double())
                default:
                    let columns = try r.count(limit: Int(Int32.max))
                    guard columns >= 1 else { throw .invalid("grid \(id) has no columns") }
                    shape = .grid(rowsAlong: axis, columns: columns, itemSize: try r.size(), spacing: try r.size())
                }
                _ = try valid { () throws(LayoutError) in try builder.appendSection(id: id, count: n, shape: shape, origin: origin, reuse: reuse) }
            }
        }
        try r.finish()
        guard builder.count == total else { throw .invalid("\(builder.count) items, the header says \(total)") }
        try valid { () throws(LayoutError) in try builder.setContentSize(contentSize) }
        return try valid { () throws(LayoutError) in try builder.build() }
    }
}
