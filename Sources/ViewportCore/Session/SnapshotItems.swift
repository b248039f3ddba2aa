/// Items in a session snapshot, written by id and resolved in one layout on restore (see
/// `ViewportSession+Snapshot.swift`).
struct SnapshotItems {
    let layout: Layout

    /// An item's id, length-prefixed.
    func write(_ item: Int, into w: inout BinaryWriter) {
        layout.withIDBytes(at: item) { w.lengthPrefixed($0) }
    }

    /// An item, or none as an empty id (ids are never empty).
    func writeOptional(_ item: Int?, into w: inout BinaryWriter) {
        if let item { write(item, into: &w) } else { w.count(0) }
    }

    /// A set of items: its count, then the items in layout order.
    func writeSet(_ set: Set<Int>, into w: inout BinaryWriter) {
        let sorted = set.sorted()
        w.count(sorted.count)
        for item in sorted { write(item, into: &w) }
    }

    func read(_ r: inout BinaryReader) throws(BinaryFormatError) -> Int {
        guard let item = try readOptional(&r) else { throw .invalid("an empty item id") }
        return item
    }

    func readOptional(_ r: inout BinaryReader) throws(BinaryFormatError) -> Int? {
        let id = try r.lengthPrefixed(limit: Layout.maxIDBytes)
        guard !id.isEmpty else { return nil }
        guard let item = layout.item(withIDBytes: id) else {
            throw .invalid("item \"\(String(decoding: id, as: UTF8.self))\" is not in layout \(layout.digest)")
        }
        return item
    }

    func readSet(_ r: inout BinaryReader) throws(BinaryFormatError) -> Set<Int> {
        var set = Set<Int>()
        for _ in 0..<(try r.elementCount(minBytes: 2)) { set.insert(try read(&r)) }
        return set
    }
}
