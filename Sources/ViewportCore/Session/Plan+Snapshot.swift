/// A plan's section of a session snapshot (see `ViewportSession+Snapshot.swift`): the last plan,
/// answered again on a retry. Leaving items are named in the previous layout when the plan is a
/// layout change, every other item in the session's layout.
extension Plan {
    /// `items` resolves the session's layout; the previous layout's items, when the plan has one,
    /// are written by `previousLayout`.
    func writeSnapshot(into w: inout BinaryWriter, items: SnapshotItems) {
        let old = previousLayout.map(SnapshotItems.init) ?? items
        func entries(_ list: some Collection<some ItemAndView>, in table: SnapshotItems) {
            w.count(list.count)
            for entry in list {
                table.write(entry.item, into: &w)
                w.count(entry.view)
            }
        }
        func list(_ list: [Int], in table: SnapshotItems) {
            w.count(list.count)
            for item in list { table.write(item, into: &w) }
        }
        func pins(_ list: [PinEntry]) {
            w.count(list.count)
            for pin in list {
                items.write(pin.item, into: &w)
                w.count(pin.view)
                w.rect(pin.rect)
            }
        }
        w.varint(seq)
        w.point(offset)
        withViewLists { lists in
            entries(lists.recycle, in: old)
            entries(lists.discard, in: old)
            w.count(lists.reuse.count)
            for entry in lists.reuse {
                items.write(entry.item, into: &w)
                w.count(entry.view)
                w.bool(entry.rebind)
            }
            entries(lists.create, in: items)
        }
        guard let e = extras else {
            w.bool(false)
            return
        }
        w.bool(true)
        w.bool(e.target != nil)
        if let target = e.target { w.point(target) }
        w.bool(e.page != nil)
        if let page = e.page { w.int(page) }
        list(e.prefetch, in: items)
        list(e.cancelPrefetch, in: old)
        list(e.load, in: items)
        w.count(e.enter.count)
        for entry in e.enter {
            items.write(entry.item, into: &w)
            w.count(entry.times)
        }
        list(e.leave, in: old)
        w.count(e.viewed.count)
        for entry in e.viewed {
            items.write(entry.item, into: &w)
            w.count(entry.times)
        }
        w.count(e.linked.count)
        for link in e.linked {
            w.string(link.name)
            w.point(link.offset)
        }
        items.writeOptional(e.selected, into: &w)
        w.count(e.placements.count)
        for placement in e.placements {
            items.write(placement.item, into: &w)
            w.rect(placement.rect)
        }
        w.bool(e.recenter != nil)
        if let recenter = e.recenter { w.point(recenter) }
        entries(e.move, in: items)
        w.bool(e.previousLayout != nil)
        pins(e.pin)
        pins(e.unpin)
        w.bool(e.contentSize != nil)
        if let size = e.contentSize { w.size(size) }
    }

    /// `previous`: the items of the previous layout the snapshot names, if any.
    init(snapshot r: inout BinaryReader, items: SnapshotItems, previous: SnapshotItems?) throws(BinaryFormatError) {
        let old = previous ?? items
        func entries(_ r: inout BinaryReader, in table: SnapshotItems) throws(BinaryFormatError) -> [PlanEntry] {
            var list: [PlanEntry] = []
            for _ in 0..<(try r.elementCount(minBytes: 2)) { list.append(PlanEntry(item: try table.read(&r), view: try r.count())) }
            return list
        }
        func list(_ r: inout BinaryReader, in table: SnapshotItems) throws(BinaryFormatError) -> [Int] {
            var list: [Int] = []
            for _ in 0..<(try r.elementCount()) { list.append(try table.read(&r)) }
            return list
        }
        func pins(_ r: inout BinaryReader) throws(BinaryFormatError) -> [PinEntry] {
            var list: [PinEntry] = []
            for _ in 0..<(try r.elementCount(minBytes: 34)) {
                list.append(PinEntry(item: try items.read(&r), view: try r.count(), rect: try r.rect()))
            }
            return list
        }
        let seq = try r.varint()
        let offset = try r.point()
        let recycle = try entries(&r, in: old)
        let discard = try entries(&r, in: old)
        var reuse: [ReuseEntry] = []
        for _ in 0..<(try r.elementCount(minBytes: 3)) {
            reuse.append(ReuseEntry(item: try items.read(&r), view: try r.count(), rebind: try r.bool()))
        }
        self.init(seq: seq, offset: offset, recycle: recycle, discard: discard, reuse: reuse, create: try entries(&r, in: items))
        guard try r.bool() else { return }
        var e = PlanExtras()
        e.target = try r.bool() ? try r.point() : nil
        e.page = try r.bool() ? try r.int() : nil
        e.prefetch = try list(&r, in: items)
        e.cancelPrefetch = try list(&r, in: old)
        e.load = try list(&r, in: items)
        for _ in 0..<(try r.elementCount(minBytes: 2)) { e.enter.append(ExposureEntry(item: try items.read(&r), times: try r.count())) }
        e.leave = try list(&r, in: old)
        for _ in 0..<(try r.elementCount(minBytes: 2)) { e.viewed.append(ExposureEntry(item: try items.read(&r), times: try r.count())) }
        for _ in 0..<(try r.elementCount(minBytes: 17)) { e.linked.append(LinkedOffset(name: try r.string(), offset: try r.point())) }
        e.selected = try items.readOptional(&r)
        for _ in 0..<(try r.elementCount(minBytes: 33)) { e.placements.append(Placement(item: try items.read(&r), rect: try r.rect())) }
        e.recenter = try r.bool() ? try r.point() : nil
        e.move = try entries(&r, in: items)
        if try r.bool() {
            guard let previous else { throw .invalid("the last plan names a previous layout the snapshot does not") }
            e.previousLayout = LayoutReference(layout: previous.layout)
        }
        e.pin = try pins(&r)
        e.unpin = try pins(&r)
        e.contentSize = try r.bool() ? try r.size() : nil
        updateExtras { $0 = e }
    }
}
