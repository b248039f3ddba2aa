/// The shown items' section of a session snapshot (see `ViewportSession+Snapshot.swift`).
extension ShownViews {
    /// The shown items in layout order, each with its view.
    func writeSnapshot(into w: inout BinaryWriter, items: SnapshotItems) {
        let sorted = self.sorted { $0.key < $1.key }
        w.count(sorted.count)
        for (item, view) in sorted {
            items.write(item, into: &w)
            w.count(view)
        }
    }

    init(snapshot r: inout BinaryReader, items: SnapshotItems) throws(BinaryFormatError) {
        self.init()
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            self[item] = try r.count()
        }
    }
}
