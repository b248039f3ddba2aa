/// The exposure tracker's section of a session snapshot (see `ViewportSession+Snapshot.swift`):
/// counts by item and, for gone items, by id; with `minTime`, the viewed counts, the stays not
/// viewed yet and their clocks. Maps in item (or id) order.
extension ExposureTracker {
    func writeSnapshot(into w: inout BinaryWriter, items: SnapshotItems) {
        let times = times.sorted { $0.key < $1.key }
        w.count(times.count)
        for (item, count) in times {
            items.write(item, into: &w)
            w.count(count)
        }
        let absent = absent.sorted { $0.key < $1.key }
        w.count(absent.count)
        for (id, count) in absent {
            w.string(id)
            w.count(count)
        }
        let viewed = viewedTimes.sorted { $0.key < $1.key }
        w.count(viewed.count)
        for (item, count) in viewed {
            items.write(item, into: &w)
            w.count(count)
        }
        let absentViewed = absentViewed.sorted { $0.key < $1.key }
        w.count(absentViewed.count)
        for (id, count) in absentViewed {
            w.string(id)
            w.count(count)
        }
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
        var times: [Int: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            times[item] = try r.count()
        }
        var absent: [String: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) { absent[try r.string()] = try r.count() }
        var viewedTimes: [Int: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            viewedTimes[item] = try r.count()
        }
        var absentViewed: [String: Int] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 2)) { absentViewed[try r.string()] = try r.count() }
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
}
