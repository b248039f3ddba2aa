/// The scroll state's sections of a session snapshot (see `ViewportSession+Snapshot.swift`): the
/// buffer (with the options), the position, the full-diff flag, and the marks (drag begin,
/// pinned header, safe window).
extension ScrollState {
    /// Offset, viewport, motion, client time and (version 5 on) the round trip and the motion's
    /// look-ahead reach.
    func writePosition(into w: inout BinaryWriter, version: UInt8) {
        w.point(offset)
        w.size(viewport)
        w.byte(UInt8(motion.x + 1))
        w.byte(UInt8(motion.y + 1))
        w.bool(time != nil)
        if let time { w.double(time) }
        if version >= 5 {
            w.bool(rtt != nil)
            if let rtt { w.double(rtt) }
            w.double(motion.lookAheadX)
            w.double(motion.lookAheadY)
        }
    }

    /// A scroll state at the position of ``writePosition(into:version:)``'s section, with no
    /// marks yet (see ``readMarks(_:items:full:)``).
    init(buffer: Buffer, snapshot r: inout BinaryReader, version: UInt8) throws(BinaryFormatError) {
        let offset = try r.point()
        let viewport = try r.size()
        let (mx, my) = (Int(try r.byte()) - 1, Int(try r.byte()) - 1)
        guard (-1...1).contains(mx), (-1...1).contains(my) else { throw .invalid("motion") }
        let time: Double? = try r.bool() ? try r.double() : nil
        var motion = Motion(x: mx, y: my)
        var rtt: Double?
        if version >= 5 {
            rtt = try r.bool() ? try r.double() : nil
            (motion.lookAheadX, motion.lookAheadY) = (try r.double(), try r.double())
            guard motion.lookAheadX >= 0, motion.lookAheadY >= 0 else { throw .invalid("look-ahead") }
        }
        self.init(offset: offset, viewport: viewport, buffer: buffer, motion: motion, time: time, rtt: rtt)
    }

    /// Whether the next update makes a full diff (`DiffBasis.full`); its window is in the marks.
    func writeFullDiff(into w: inout BinaryWriter) {
        w.bool(diffBasis.isFull)
    }

    /// The drag begin, the pinned header and the safe window.
    func writeMarks(into w: inout BinaryWriter, items: SnapshotItems) {
        w.bool(dragBegin != nil)
        if let dragBegin { w.point(dragBegin) }
        w.bool(pinned != nil)
        if let pinned {
            items.write(pinned.item, into: &w)
            w.rect(pinned.rect)
        }
        w.bool(diffBasis.window != nil)
        diffBasis.window?.writeSnapshot(into: &w)
    }

    /// Reads ``writeMarks(into:items:)``'s section; `full` is the flag of ``writeFullDiff(into:)``.
    mutating func readMarks(_ r: inout BinaryReader, items: SnapshotItems, full: Bool) throws(BinaryFormatError) {
        dragBegin = try r.bool() ? try r.point() : nil
        pinned = try r.bool() ? PinnedHeader(item: try items.read(&r), rect: try r.rect()) : nil
        let window = try r.bool() ? try SafeWindow(snapshot: &r) : nil
        diffBasis = try DiffBasis(full: full, window: window)
    }
}

extension Buffer {
    func writeSnapshot(into w: inout BinaryWriter) {
        w.double(ahead)
        w.double(behind)
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        self.init(ahead: try r.double(), behind: try r.double())
    }
}

extension SafeWindow {
    func writeSnapshot(into w: inout BinaryWriter) {
        w.byte(axis == .x ? 0 : 1)
        w.double(origin.minX)
        w.double(origin.minY)
        w.double(origin.maxX)
        w.double(origin.maxY)
        w.double(lowEdgeFrom)
        w.double(lowEdgeBelow)
        w.double(highEdgeAbove)
        w.double(highEdgeThrough)
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        let axis: Axis = try r.byte() == 0 ? .x : .y
        let origin = Region(minX: try r.double(), minY: try r.double(), maxX: try r.double(), maxY: try r.double())
        self.init(
            axis: axis, origin: origin, lowEdgeFrom: try r.double(), lowEdgeBelow: try r.double(),
            highEdgeAbove: try r.double(), highEdgeThrough: try r.double())
    }
}

extension DiffBasis {
    /// The basis of a snapshot's full-diff flag and safe window; never both (no session has both).
    init(full: Bool, window: SafeWindow?) throws(BinaryFormatError) {
        switch (full, window) {
        case (false, nil): self = .regions
        case (false, let window?): self = .window(window)
        case (true, nil): self = .full
        case (true, _?): throw .invalid("both a full diff and a safe window")
        }
    }
}
