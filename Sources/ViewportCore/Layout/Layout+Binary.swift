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
/// A later section kind gets the next kind byte; a reader that meets a kind or version it does
/// not know refuses the bytes (``BinaryFormatError/unsupported(_:)``) rather than guess.
extension Layout {
    static let binaryMagic: [UInt8] = Array("VPL".utf8)
    static let binaryVersion: UInt8 = 2

    private enum SegmentKind: UInt8 {
        case explicit = 0
        case list = 1
        case sizedList = 2
        case grid = 3
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
            }
        }
        return w.bytes
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
        case .sizedList(let axis, let starts, let sizes, let longest):
            header(.sizedList)
            w.byte(axis == .x ? 0 : 1)
            var bases: (Int64, Int64, Int64) = (0, 0, 0)
            for size in sizes {
                w.compact(size.width, base: &bases.0)
                w.compact(size.height, base: &bases.1)
            }
            for start in starts { w.compact(start, base: &bases.2) }
            w.double(longest)
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
                    shape = .sizedList(axis: axis, starts: starts, sizes: sizes, longest: try r.double())
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
