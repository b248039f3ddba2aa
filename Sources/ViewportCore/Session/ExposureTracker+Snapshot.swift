/// The exposure tracker's section of a session snapshot (see `ViewportSession+Snapshot.swift`):
/// counts by item and, for gone items, by id; with `minTime`, the viewed counts, the stays not
/// viewed yet and their clocks. Maps in item (or id) order.
extension ExposureTracker {
    func writeSnapshot(into w: inout BinaryWriter, items: SnapshotItems) {
        Self.write(times, into: &w, items: items)
        Self.write(absent, into: &w)
        Self.write(viewedTimes, into: &w, items: items)
        Self.write(absentViewed, into: &w)
        let pending = pending.sorted { $0.key < $1.key }
        w.count(pending.count)
        for (item, stay) in pending {
            items.write(item, into: &w)
            w.varint(stay)
        }
        w.count(waitingClocked.count)
        for entry in waitingClocked {
            items.write(entry.item, into: &w)
            w.varint(entry.stay)
            w.double(entry.start)
        }
        w.count(unclocked.count)
        for entry in unclocked {
            items.write(entry.item, into: &w)
            w.varint(entry.stay)
        }
        w.varint(nextStay)
    }

    init(rule: ExposureRule, snapshot r: inout BinaryReader, items: SnapshotItems) throws(BinaryFormatError) {
        let times = try Self.readCounts(&r, items: items)
        let absent = try Self.readCountsByID(&r)
        let viewedTimes = try Self.readCounts(&r, items: items)
        let absentViewed = try Self.readCountsByID(&r)
        var pending: [Int: UInt64] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            pending[item] = try r.varint()
        }
        var clocked: [ClockedStay] = []
        for _ in 0..<(try r.elementCount(minBytes: 10)) {
            clocked.append(ClockedStay(item: try items.read(&r), stay: try r.varint(), start: try r.double()))
        }
        var unclocked: [UnclockedStay] = []
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            unclocked.append(UnclockedStay(item: try items.read(&r), stay: try r.varint()))
        }
        self.init(
            rule: rule, times: times, absent: absent, viewedTimes: viewedTimes, absentViewed: absentViewed,
            pending: pending, clocked: clocked, unclocked: unclocked, nextStay: try r.varint())
    }

    /// Counts by item, in item order.
    private static func write(_ counts: [Int: Int], into w: inout BinaryWriter, items: SnapshotItems) {
        let sorted = counts.sorted { $0.key < $1.key }
        w.count(sorted.count)
        for (item, count) in sorted {
            items.write(item, into: &w)
            w.count(count)
        }
    }

    /// Counts of gone items by id, in id order.
    private static func write(_ counts: [String: Int], into w: inout BinaryWriter) {
        let sorted = counts.sorted { $0.key < $1.key }
        w.count(sorted.count)
        for (id, count) in sorted {
            w.string(id)
            w.count(count)
        }
    }

    private static func readCounts(_ r: inout BinaryReader, items: SnapshotItems) throws(BinaryFormatError) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            counts[item] = try r.count()
        }
        return counts
    }

    private static func readCountsByID(_ r: inout BinaryReader) throws(BinaryFormatError) -> [String: Int] {
        var counts: [String: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) { counts[try r.string()] = try r.count() }
        return counts
    }
}
