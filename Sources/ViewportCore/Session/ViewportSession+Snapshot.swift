/// Snapshots: a session's whole state in a compact binary form, from which a session continues
/// exactly as the original would have (same plans, byte for byte), for a store shared by several
/// instances.
///
/// Items are written by id, not by position, and resolved in the layout on restore: a snapshot
/// names its layout by digest (and, when the last plan was a layout change, the previous layout,
/// which that plan's leaving lists refer to), so a session whose layout is edited in place can
/// later add its edits without changing how items are named.
///
/// Format (version 5): `"VPS"`, version byte, layout digest and the history that made the
/// session's version of it (`EditHistory`: a checkpoint of the version's binary form when it has
/// one, then the stack edits since, replayed on restore; `Layout+EditHistory.swift`), previous
/// layout digest (optional) and its history,
/// the options (buffer ahead and behind, insets, pool caps, paging, prefetch, lazyLoad, exposure, links, loop axis,
/// view limit, look-ahead cap), the position (offset, viewport, motion, client time, round trip and
/// look-ahead), counters (seq, next handle, stats), selection,
/// drag begin, pinned header, safe window, extra reuse names, shown items, pools, the same-item
/// index, the helpers' state, loop shifts, and the last plan. Sets and maps are written in item
/// order, so equal states give equal bytes. Version 3 (the edits alone, no checkpoint flag) is
/// what builds before checkpoints wrote and read; version 4 adds the checkpoints, version 5 the
/// look-ahead (its cap, the round trip, the motion's reach). Each is still read, and the oldest
/// that can hold the session is written (3 for most: no checkpoint, no round trip, the default
/// cap), so that an older instance in a rolling update reads them; a version this build does not
/// know is refused.
///
/// The session lists the sections in format order; each part writes and reads its own
/// (`ScrollState+Snapshot.swift`, `ReusePools+Snapshot.swift`, `ShownViews+Snapshot.swift`,
/// `SessionHelpers+Snapshot.swift`, `ExposureTracker+Snapshot.swift`,
/// `SessionOptions+Snapshot.swift`, `Plan+Snapshot.swift`, `ViewHandles`, `SessionStats`), and a
/// part the format interleaves with others writes more than one. Items go through
/// `SnapshotItems`. Every stored property of ``ViewportSession`` and of its parts must be written
/// by one of them or derived on restore; `SnapshotTests` fails when one is added without being
/// handled.
extension ViewportSession {
    static let snapshotMagic: [UInt8] = Array("VPS".utf8)
    static let snapshotVersion: UInt8 = 5
    /// The first version with checkpoints in edit histories.
    static let checkpointSnapshotVersion: UInt8 = 4
    /// The oldest version this build reads.
    static let oldestSnapshotVersion: UInt8 = 3

    /// The session's state as bytes.
    /// - Complexity: O(v + p + h) for v shown views, p pooled views and h items the helpers track.
    public func snapshot() -> [UInt8] {
        var w = BinaryWriter(capacity: 512 + 24 * liveViews)
        w.raw(Self.snapshotMagic)
        // The oldest version that holds the session: builds before checkpoints and look-ahead
        // still read the sessions of a rolling update that did not use them.
        let version: UInt8 =
            lookAhead != .standard || rtt != nil ? Self.snapshotVersion
            : layout.hasEditCheckpoint || lastPlan.previousLayout?.hasEditCheckpoint == true ? Self.checkpointSnapshotVersion
            : Self.oldestSnapshotVersion
        w.byte(version)
        w.string(layout.digest)
        layout.writeEditHistory(&w, snapshotVersion: version)
        w.optionalString(lastPlan.previousLayout?.digest)
        lastPlan.previousLayout?.writeEditHistory(&w, snapshotVersion: version)

        let items = SnapshotItems(layout: layout)

        // Options.
        scroll.buffer.writeSnapshot(into: &w)
        options.insets.writeSnapshot(into: &w)
        pools.caps.writeSnapshot(into: &w)
        options.paging.writeSnapshot(into: &w)
        helpers.writeSettings(into: &w)
        options.writeLimits(into: &w, version: version)

        // Position and counters.
        scroll.writePosition(into: &w, version: version)
        w.varint(seq)
        w.count(edits)
        handles.writeSnapshot(into: &w)
        stats.writeSnapshot(into: &w)
        scroll.writeFullDiff(into: &w)
        items.writeOptional(selected, into: &w)
        scroll.writeMarks(into: &w, items: items)

        // Views.
        pools.writeNames(into: &w)
        shown.writeSnapshot(into: &w, items: items)
        pools.writeViews(into: &w, items: items)

        // Helpers.
        helpers.writeState(into: &w, items: items)

        lastPlan.writeSnapshot(into: &w, items: items)
        return w.bytes
    }

    /// The digests of the layouts a snapshot needs: its layout, and the previous one when its
    /// last plan was a layout change.
    public static func snapshotLayouts(_ bytes: [UInt8]) throws(BinaryFormatError) -> (layout: String, previous: String?) {
        try read(bytes, toTheEnd: false) { (r: inout BinaryReader) throws(BinaryFormatError) in
            let version = try readHeader(&r)
            let layout = try r.string(limit: 256)
            _ = try Layout.readEditHistory(&r, snapshotVersion: version)
            return (layout, try r.optionalString())
        }
    }

    /// A session restored from ``snapshot()``; `layouts` answers the layouts named by
    /// ``snapshotLayouts(_:)`` (nil when it has none).
    public init(restoring bytes: [UInt8], layouts: (String) -> Layout?) throws(BinaryFormatError) {
        self = try Self.read(bytes, toTheEnd: true) { (r: inout BinaryReader) throws(BinaryFormatError) in
            let version = try Self.readHeader(&r)
            let digest = try r.string(limit: 256)
            guard let stored = layouts(digest) else { throw .invalid("the snapshot's layout \(digest) is not available") }
            let layout = try stored.restoring(Layout.readEditHistory(&r, snapshotVersion: version))
            var previous: Layout?
            if let id = try r.optionalString() {
                guard let found = layouts(id) else { throw .invalid("the snapshot's previous layout \(id) is not available") }
                previous = try found.restoring(Layout.readEditHistory(&r, snapshotVersion: version))
            }
            return try ViewportSession(reading: &r, version: version, layout: layout, previous: previous)
        }
    }

    private init(reading r: inout BinaryReader, version: UInt8, layout: Layout, previous: Layout?) throws(BinaryFormatError) {
        let items = SnapshotItems(layout: layout)
        self.layout = layout

        // Options.
        let buffer = try Buffer(snapshot: &r)
        let insets = try Insets(snapshot: &r)
        let caps = try PoolCaps(snapshot: &r)
        let paging = try PagingOptions(snapshot: &r)
        let settings = try SessionHelpers(settingsSnapshot: &r)
        options = try SessionOptions.reading(&r, version: version, insets: insets, paging: paging, layout: layout)

        // Position and counters.
        scroll = try ScrollState(buffer: buffer, snapshot: &r, version: version)
        let seq: UInt64 = try r.varint()
        edits = try r.count()
        handles = try ViewHandles(snapshot: &r)
        stats = try SessionStats(snapshot: &r)
        let full = try r.bool()
        let selected = try items.readOptional(&r)
        try scroll.readMarks(&r, items: items, full: full)

        // Views.
        let extraNames = try ReusePools.readNames(&r)
        shown = try ShownViews(snapshot: &r, items: items)
        pools = try ReusePools(
            caps: caps, extraNames: extraNames, snapshot: &r, items: items, classes: layout.reuseNames.count + extraNames.count)

        // Helpers.
        let helpers = try settings.readingState(&r, items: items, selected: selected, loops: options.loop != nil)

        sequence = UpdateSequence(seq: seq, lastPlan: try Plan(snapshot: &r, items: items, previous: previous.map(SnapshotItems.init)))
        self.helpers = helpers
        pools.resolveCaps(for: layout)
    }

    /// Reads the magic and answers the version.
    private static func readHeader(_ r: inout BinaryReader) throws(BinaryFormatError) -> UInt8 {
        let magic = try r.take(3)
        guard magic.elementsEqual(snapshotMagic) else { throw .unsupported("not a session snapshot") }
        let version = try r.byte()
        guard (oldestSnapshotVersion...snapshotVersion).contains(version) else {
            throw .unsupported("session snapshot version \(version) (this build reads \(oldestSnapshotVersion) to \(snapshotVersion))")
        }
        return version
    }

    private static func read<T>(
        _ bytes: [UInt8], toTheEnd: Bool, _ body: (inout BinaryReader) throws(BinaryFormatError) -> T
    ) throws(BinaryFormatError) -> T {
        let result: Result<T, BinaryFormatError> = bytes.withUnsafeBytes { raw in
            var r = BinaryReader(raw)
            do throws(BinaryFormatError) {
                let value = try body(&r)
                if toTheEnd { try r.finish() }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
