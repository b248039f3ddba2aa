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
/// Every stored property of ``ViewportSession`` and of its parts (`ScrollState`, `ReusePools`,
/// `ViewHandles`, `UpdateSequence`, `SessionHelpers`) must be written here or derived on restore;
/// `SnapshotTests` fails when one is added without being handled.
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

        // Options.
        w.double(buffer.ahead)
        w.double(buffer.behind)
        w.double(insets.top)
        w.double(insets.left)
        w.double(insets.bottom)
        w.double(insets.right)
        w.bool(poolCaps.max != nil)
        if let max = poolCaps.max { w.count(max) }
        w.count(poolCaps.perReuse.count)
        for (name, cap) in poolCaps.perReuse.sorted(by: { $0.key < $1.key }) {
            w.string(name)
            w.count(cap)
        }
        w.string(paging.mode.rawValue)
        w.byte(Self.code(paging.axis))
        w.bool(paging.size != nil)
        if let size = paging.size { w.size(size) }
        w.double(paging.decelerationRate)
        w.bool(helpers.prefetcher != nil)
        if let prefetcher = helpers.prefetcher { w.double(prefetcher.seconds) }
        w.bool(helpers.lazyLoader != nil)
        w.bool(helpers.exposureTracker != nil)
        if let rule = helpers.exposureTracker?.rule {
            w.double(rule.threshold)
            w.bool(rule.minTime != nil)
            if let minTime = rule.minTime { w.double(minTime) }
        }
        w.count(helpers.links.count)
        for link in helpers.links {
            w.string(link.name)
            w.size(link.view.viewport)
            w.size(link.view.contentSize)
        }
        w.byte(Self.code(loop?.axis))
        w.bool(maxViews != nil)
        if let maxViews { w.count(maxViews) }
        if version >= 5 {
            w.bool(lookAhead.max != nil)
            if let max = lookAhead.max { w.double(max) }
        }

        // Position and counters.
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
        w.varint(seq)
        w.count(edits)
        w.count(handles.next)
        for value in [stats.updates, stats.created, stats.reused, stats.rebindFree, stats.recycled, stats.discarded, stats.peakViews] {
            w.count(value)
        }
        w.bool(scroll.needsFullDiff)
        writeOptionalItem(selected, &w)
        w.bool(scroll.dragBegin != nil)
        if let dragBegin = scroll.dragBegin { w.point(dragBegin) }
        w.bool(pinned != nil)
        if let pinned {
            writeItem(pinned.item, &w)
            w.rect(pinned.rect)
        }
        w.bool(scroll.safeWindow != nil)
        if let window = scroll.safeWindow {
            w.byte(window.axis == .x ? 0 : 1)
            w.double(window.origin.minX)
            w.double(window.origin.minY)
            w.double(window.origin.maxX)
            w.double(window.origin.maxY)
            w.double(window.lowEdgeFrom)
            w.double(window.lowEdgeBelow)
            w.double(window.highEdgeAbove)
            w.double(window.highEdgeThrough)
        }

        // Views.
        w.count(pools.extraNames.count)
        for name in pools.extraNames { w.string(name) }
        let shownSorted = shown.sorted { $0.key < $1.key }
        w.count(shownSorted.count)
        for (item, view) in shownSorted {
            writeItem(item, &w)
            w.count(view)
        }
        w.count(pools.byClass.count)
        for pool in pools.byClass {
            w.count(pool.entries.count)
            for entry in pool.entries {
                w.count(entry.view)
                writeOptionalItem(entry.lastItem, &w)
                w.varint(entry.pooledAt)
            }
        }
        let sameItem = pools.sameItemEntries
        w.count(sameItem.count)
        for entry in sameItem {
            writeItem(entry.item, &w)
            w.count(entry.reuseClass)
            w.count(entry.view)
        }

        // Helpers.
        if let prefetcher = helpers.prefetcher { writeItems(prefetcher.predicted, &w) }
        if let lazyLoader = helpers.lazyLoader {
            writeItems(lazyLoader.loaded, &w)
            writeItems(lazyLoader.pending, &w)
            writeItems(lazyLoader.fromDragEnd, &w)
        }
        if let exposureTracker = helpers.exposureTracker {
            let times = exposureTracker.times.sorted { $0.key < $1.key }
            w.count(times.count)
            for (item, count) in times {
                writeItem(item, &w)
                w.count(count)
            }
            let absent = exposureTracker.absent.sorted { $0.key < $1.key }
            w.count(absent.count)
            for (id, count) in absent {
                w.string(id)
                w.count(count)
            }
            // Viewability (`minTime`): viewed counts, the stays not viewed yet, their clocks.
            let viewed = exposureTracker.viewedTimes.sorted { $0.key < $1.key }
            w.count(viewed.count)
            for (item, count) in viewed {
                writeItem(item, &w)
                w.count(count)
            }
            let absentViewed = exposureTracker.absentViewed.sorted { $0.key < $1.key }
            w.count(absentViewed.count)
            for (id, count) in absentViewed {
                w.string(id)
                w.count(count)
            }
            let pending = exposureTracker.pending.sorted { $0.key < $1.key }
            w.count(pending.count)
            for (item, stay) in pending {
                writeItem(item, &w)
                w.varint(stay)
            }
            w.count(exposureTracker.waitingClocked.count)
            for entry in exposureTracker.waitingClocked {
                writeItem(entry.item, &w)
                w.varint(entry.stay)
                w.double(entry.start)
            }
            w.count(exposureTracker.unclocked.count)
            for entry in exposureTracker.unclocked {
                writeItem(entry.item, &w)
                w.varint(entry.stay)
            }
            w.varint(exposureTracker.nextStay)
        }
        let shifts = helpers.loopShifts.sorted { $0.key < $1.key }
        w.count(shifts.count)
        for (item, shift) in shifts {
            writeItem(item, &w)
            w.double(shift)
        }

        writePlan(lastPlan, &w)
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
        let buffer = Buffer(ahead: try r.double(), behind: try r.double())
        let insets = Insets(top: try r.double(), left: try r.double(), bottom: try r.double(), right: try r.double())
        var caps = PoolCaps()
        if try r.bool() { caps.max = try r.count() }
        for _ in 0..<(try r.elementCount(minBytes: 2)) { caps.perReuse[try r.string()] = try r.count() }
        guard let mode = PagingMode(rawValue: try r.string(limit: 16)) else { throw .invalid("paging mode") }
        let pagingAxis = try Self.axis(r.byte())
        let pagingSize: Size? = try r.bool() ? try r.size() : nil
        let paging = PagingOptions(mode: mode, axis: pagingAxis, size: pagingSize, decelerationRate: try r.double())
        let prefetchSeconds: Double? = try r.bool() ? try r.double() : nil
        let lazyLoad = try r.bool()
        var rule: ExposureRule?
        if try r.bool() { rule = ExposureRule(threshold: try r.double(), minTime: try r.bool() ? try r.double() : nil) }
        var links: [(name: String, view: LinkedScrollView)] = []
        for _ in 0..<(try r.elementCount(minBytes: 33)) {
            links.append((try r.string(), LinkedScrollView(viewport: try r.size(), contentSize: try r.size())))
        }
        let loop = try Self.axis(r.byte()).map { axis in
            LoopSpace(axis: axis, period: axis.component(of: layout.contentSize), summary: layout.axisSummary(axis))
        }
        let maxViews: Int? = try r.bool() ? try r.count() : nil
        var lookAhead = LookAhead.standard
        if version >= 5, try r.bool() { lookAhead.max = try r.double() }
        options = SessionOptions.make(insets: insets, paging: paging, loop: loop, maxViews: maxViews, lookAhead: lookAhead)
        let helpersAreOn = prefetchSeconds != nil || lazyLoad || rule != nil || !links.isEmpty || loop != nil

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
        scroll = ScrollState(offset: offset, viewport: viewport, buffer: buffer, motion: motion, time: time, rtt: rtt)
        let seq: UInt64 = try r.varint()
        edits = try r.count()
        handles = ViewHandles(next: try r.count())
        stats.updates = try r.count()
        stats.created = try r.count()
        stats.reused = try r.count()
        stats.rebindFree = try r.count()
        stats.recycled = try r.count()
        stats.discarded = try r.count()
        stats.peakViews = try r.count()
        scroll.needsFullDiff = try r.bool()
        let selected = try items.readOptional(&r)
        scroll.dragBegin = try r.bool() ? try r.point() : nil
        scroll.pinned = try r.bool() ? PinnedHeader(item: try items.read(&r), rect: try r.rect()) : nil
        if try r.bool() {
            let axis: SafeWindow.Axis = try r.byte() == 0 ? .x : .y
            let origin = Region(minX: try r.double(), minY: try r.double(), maxX: try r.double(), maxY: try r.double())
            scroll.safeWindow = SafeWindow(
                axis: axis, origin: origin, lowEdgeFrom: try r.double(), lowEdgeBelow: try r.double(),
                highEdgeAbove: try r.double(), highEdgeThrough: try r.double())
        }

        var extraNames: [String] = []
        for _ in 0..<(try r.elementCount()) { extraNames.append(try r.string()) }
        let classes = layout.reuseNames.count + extraNames.count
        for _ in 0..<(try r.elementCount(minBytes: 2)) {
            let item = try items.read(&r)
            shown[item] = try r.count()
        }
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
        pools = ReusePools(caps: caps, extraNames: extraNames, byClass: byClass, sameItem: sameItem)

        var prefetcher: Prefetcher?
        if let seconds = prefetchSeconds { prefetcher = Prefetcher(seconds: seconds, predicted: try items.readSet(&r)) }
        var lazyLoader: LazyLoader?
        if lazyLoad {
            lazyLoader = LazyLoader(loaded: try items.readSet(&r), pending: try items.readSet(&r), fromDragEnd: try items.readSet(&r))
        }
        var exposureTracker: ExposureTracker?
        if let rule {
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
            var clocked: [ExposureTracker.ClockedStay] = []
            for _ in 0..<(try r.elementCount(minBytes: 10)) {
                clocked.append(ExposureTracker.ClockedStay(item: try items.read(&r), stay: try r.varint(), start: try r.double()))
            }
            var unclocked: [ExposureTracker.UnclockedStay] = []
            for _ in 0..<(try r.elementCount(minBytes: 2)) {
                unclocked.append(ExposureTracker.UnclockedStay(item: try items.read(&r), stay: try r.varint()))
            }
            exposureTracker = ExposureTracker(
                rule: rule, times: times, absent: absent, viewedTimes: viewedTimes, absentViewed: absentViewed,
                pending: pending, clocked: clocked, unclocked: unclocked, nextStay: try r.varint())
        }
        var loopShifts: [Int: Double] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 9)) {
            let item = try items.read(&r)
            loopShifts[item] = try r.double()
        }
        sequence = UpdateSequence(seq: seq, lastPlan: try Self.readPlan(&r, items: items, previous: previous.map(SnapshotItems.init)))
        helpers = SessionHelpers(
            areOn: helpersAreOn, selected: selected, prefetcher: prefetcher, lazyLoader: lazyLoader, exposureTracker: exposureTracker,
            links: links, loopShifts: loopShifts)
        pools.resolveCaps(for: layout)
    }

    // MARK: Plans

    private func writePlan(_ plan: Plan, _ w: inout BinaryWriter) {
        let old = plan.previousLayout ?? layout
        func entries(_ list: some Collection<some ItemAndView>, in layout: Layout) {
            w.count(list.count)
            for entry in list {
                layout.withIDBytes(at: entry.item) { w.lengthPrefixed($0) }
                w.count(entry.view)
            }
        }
        func items(_ list: [Int], in layout: Layout) {
            w.count(list.count)
            for item in list { layout.withIDBytes(at: item) { w.lengthPrefixed($0) } }
        }
        func pins(_ list: [PinEntry]) {
            w.count(list.count)
            for pin in list {
                writeItem(pin.item, &w)
                w.count(pin.view)
                w.rect(pin.rect)
            }
        }
        w.varint(plan.seq)
        w.point(plan.offset)
        plan.withViewLists { lists in
            entries(lists.recycle, in: old)
            entries(lists.discard, in: old)
            w.count(lists.reuse.count)
            for entry in lists.reuse {
                writeItem(entry.item, &w)
                w.count(entry.view)
                w.bool(entry.rebind)
            }
            entries(lists.create, in: layout)
        }
        guard let e = plan.extras else {
            w.bool(false)
            return
        }
        w.bool(true)
        w.bool(e.target != nil)
        if let target = e.target { w.point(target) }
        w.bool(e.page != nil)
        if let page = e.page { w.int(page) }
        items(e.prefetch, in: layout)
        items(e.cancelPrefetch, in: old)
        items(e.load, in: layout)
        w.count(e.enter.count)
        for entry in e.enter {
            writeItem(entry.item, &w)
            w.count(entry.times)
        }
        items(e.leave, in: old)
        w.count(e.viewed.count)
        for entry in e.viewed {
            writeItem(entry.item, &w)
            w.count(entry.times)
        }
        w.count(e.linked.count)
        for link in e.linked {
            w.string(link.name)
            w.point(link.offset)
        }
        writeOptionalItem(e.selected, &w)
        w.count(e.placements.count)
        for placement in e.placements {
            writeItem(placement.item, &w)
            w.rect(placement.rect)
        }
        w.bool(e.recenter != nil)
        if let recenter = e.recenter { w.point(recenter) }
        entries(e.move, in: layout)
        w.bool(e.previousLayout != nil)
        pins(e.pin)
        pins(e.unpin)
        w.bool(e.contentSize != nil)
        if let size = e.contentSize { w.size(size) }
    }

    private static func readPlan(_ r: inout BinaryReader, items: SnapshotItems, previous: SnapshotItems?) throws(BinaryFormatError) -> Plan {
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
        var plan = Plan(seq: seq, offset: offset, recycle: recycle, discard: discard, reuse: reuse, create: try entries(&r, in: items))
        guard try r.bool() else { return plan }
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
        plan.updateExtras { $0 = e }
        return plan
    }

    // MARK: Helpers

    private func writeItem(_ item: Int, _ w: inout BinaryWriter) {
        layout.withIDBytes(at: item) { w.lengthPrefixed($0) }
    }

    /// An item, or none as an empty id (ids are never empty).
    private func writeOptionalItem(_ item: Int?, _ w: inout BinaryWriter) {
        if let item { writeItem(item, &w) } else { w.count(0) }
    }

    private func writeItems(_ set: Set<Int>, _ w: inout BinaryWriter) {
        let sorted = set.sorted()
        w.count(sorted.count)
        for item in sorted { writeItem(item, &w) }
    }

    private static func code(_ axis: Axis?) -> UInt8 {
        switch axis {
        case nil: return 0
        case .x: return 1
        case .y: return 2
        }
    }

    private static func axis(_ code: UInt8) throws(BinaryFormatError) -> Axis? {
        switch code {
        case 0: return nil
        case 1: return .x
        case 2: return .y
        default: throw .invalid("axis code \(code)")
        }
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

/// Resolves the item ids of a snapshot in one layout.
private struct SnapshotItems {
    let layout: Layout

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
