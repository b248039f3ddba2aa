/// The pools' sections of a session snapshot (see `ViewportSession+Snapshot.swift`): the caps
/// (with the options), the extra reuse names, and the pooled views with the same-item index.
extension ReusePools {
    /// The reuse identifiers past the layout's own.
    func writeNames(into w: inout BinaryWriter) {
        w.count(extraNames.count)
        for name in extraNames { w.string(name) }
    }

    static func readNames(_ r: inout BinaryReader) throws(BinaryFormatError) -> [String] {
        var names: [String] = []
        for _ in 0..<(try r.elementCount()) { names.append(try r.string()) }
        return names
    }

    /// Every pool's views (oldest first), then the same-item index in key order.
    func writeViews(into w: inout BinaryWriter, items: SnapshotItems) {
        w.count(byClass.count)
        for pool in byClass {
            w.count(pool.entries.count)
            for entry in pool.entries {
                w.count(entry.view)
                items.writeOptional(entry.lastItem, into: &w)
                w.varint(entry.pooledAt)
            }
        }
        let sameItem = sameItemEntries
        w.count(sameItem.count)
        for entry in sameItem {
            items.write(entry.item, into: &w)
            w.count(entry.reuseClass)
            w.count(entry.view)
        }
    }

    /// Pools from ``writeViews(into:items:)``'s section, for `classes` reuse classes (the
    /// layout's and `extraNames`); call `resolveCaps(for:)` after.
    init(caps: PoolCaps, extraNames: [String], snapshot r: inout BinaryReader, items: SnapshotItems, classes: Int) throws(BinaryFormatError) {
        let poolCount = try r.elementCount()
        guard poolCount <= classes else { throw .invalid("\(poolCount) pools for \(classes) reuse identifiers") }
        var byClass: [ReusePool] = []
        for _ in 0..<poolCount {
            var entries: [ReusePool.Entry] = []
            for _ in 0..<(try r.elementCount(minBytes: 3)) {
                let view = try r.count()
                let lastItem = try items.readOptional(&r)
                entries.append(ReusePool.Entry(view: view, lastItem: lastItem, pooledAt: try r.varint()))
            }
            byClass.append(ReusePool(entries: entries))
        }
        var sameItem: [(item: Int, reuseClass: Int, view: Int)] = []
        for _ in 0..<(try r.elementCount(minBytes: 3)) {
            sameItem.append((item: try items.read(&r), reuseClass: try r.count(limit: classes), view: try r.count()))
        }
        self.init(caps: caps, extraNames: extraNames, byClass: byClass, sameItem: sameItem)
    }
}

extension PoolCaps {
    /// `max`, then the named caps by name.
    func writeSnapshot(into w: inout BinaryWriter) {
        w.bool(max != nil)
        if let max { w.count(max) }
        w.count(perReuse.count)
        for (name, cap) in perReuse.sorted(by: { $0.key < $1.key }) {
            w.string(name)
            w.count(cap)
        }
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        self.init()
        if try r.bool() { max = try r.count() }
        for _ in 0..<(try r.elementCount(minBytes: 2)) { perReuse[try r.string()] = try r.count() }
    }
}
