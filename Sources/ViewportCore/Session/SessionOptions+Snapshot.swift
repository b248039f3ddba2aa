/// The options' sections of a session snapshot (see `ViewportSession+Snapshot.swift`): insets,
/// paging, and the loop axis, view limit and look-ahead cap.
extension SessionOptions {
    /// The loop axis, the view limit and (version 5 on) the look-ahead cap.
    func writeLimits(into w: inout BinaryWriter, version: UInt8) {
        Axis.writeSnapshot(loop?.axis, into: &w)
        w.bool(maxViews != nil)
        if let maxViews { w.count(maxViews) }
        if version >= 5 {
            w.bool(lookAhead.max != nil)
            if let max = lookAhead.max { w.double(max) }
        }
    }

    /// The options of a restored session: `insets` and `paging` from their sections, the rest
    /// from ``writeLimits(into:version:)``'s; the loop measured in `layout`.
    static func reading(
        _ r: inout BinaryReader, version: UInt8, insets: Insets, paging: PagingOptions, layout: Layout
    ) throws(BinaryFormatError) -> SessionOptions {
        let loop = try Axis.readSnapshot(&r).map { axis in
            LoopSpace(axis: axis, period: axis.component(of: layout.contentSize), summary: layout.axisSummary(axis))
        }
        let maxViews: Int? = try r.bool() ? try r.count() : nil
        var lookAhead = LookAhead.standard
        if version >= 5, try r.bool() { lookAhead.max = try r.double() }
        return make(insets: insets, paging: paging, loop: loop, maxViews: maxViews, lookAhead: lookAhead)
    }
}

extension Insets {
    func writeSnapshot(into w: inout BinaryWriter) {
        w.double(top)
        w.double(left)
        w.double(bottom)
        w.double(right)
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        self.init(top: try r.double(), left: try r.double(), bottom: try r.double(), right: try r.double())
    }
}

extension PagingOptions {
    func writeSnapshot(into w: inout BinaryWriter) {
        w.string(mode.rawValue)
        Axis.writeSnapshot(axis, into: &w)
        w.bool(size != nil)
        if let size { w.size(size) }
        w.double(decelerationRate)
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        guard let mode = PagingMode(rawValue: try r.string(limit: 16)) else { throw .invalid("paging mode") }
        let axis = try Axis.readSnapshot(&r)
        let size: Size? = try r.bool() ? try r.size() : nil
        self.init(mode: mode, axis: axis, size: size, decelerationRate: try r.double())
    }
}

extension Axis {
    /// An optional axis as one byte: 0 none, 1 x, 2 y.
    static func writeSnapshot(_ axis: Axis?, into w: inout BinaryWriter) {
        switch axis {
        case nil: w.byte(0)
        case .x: w.byte(1)
        case .y: w.byte(2)
        }
    }

    static func readSnapshot(_ r: inout BinaryReader) throws(BinaryFormatError) -> Axis? {
        let code = try r.byte()
        switch code {
        case 0: return nil
        case 1: return .x
        case 2: return .y
        default: throw .invalid("axis code \(code)")
        }
    }
}
