/// The helpers' sections of a session snapshot (see `ViewportSession+Snapshot.swift`): their
/// settings (with the options), and what they track (after the views).
extension SessionHelpers {
    /// `prefetch`, `lazyLoad`, `exposure` and its rule, and `links`.
    func writeSettings(into w: inout BinaryWriter) {
        w.bool(prefetcher != nil)
        if let prefetcher { w.double(prefetcher.seconds) }
        w.bool(lazyLoader != nil)
        w.bool(exposureTracker != nil)
        if let rule = exposureTracker?.rule {
            w.double(rule.threshold)
            w.bool(rule.minTime != nil)
            if let minTime = rule.minTime { w.double(minTime) }
        }
        w.count(links.count)
        for link in links {
            w.string(link.name)
            w.size(link.view.viewport)
            w.size(link.view.contentSize)
        }
    }

    /// The helpers of ``writeSettings(into:)``'s section, tracking nothing yet (see
    /// ``readingState(_:items:selected:loops:)``).
    init(settingsSnapshot r: inout BinaryReader) throws(BinaryFormatError) {
        let prefetchSeconds: Double? = try r.bool() ? try r.double() : nil
        let lazyLoad = try r.bool()
        var rule: ExposureRule?
        if try r.bool() { rule = ExposureRule(threshold: try r.double(), minTime: try r.bool() ? try r.double() : nil) }
        var links: [(name: String, view: LinkedScrollView)] = []
        for _ in 0..<(try r.elementCount(minBytes: 33)) {
            links.append((try r.string(), LinkedScrollView(viewport: try r.size(), contentSize: try r.size())))
        }
        self.init(
            areOn: prefetchSeconds != nil || lazyLoad || rule != nil || !links.isEmpty,
            prefetcher: prefetchSeconds.map { Prefetcher(seconds: $0) }, lazyLoader: lazyLoad ? LazyLoader() : nil,
            exposureTracker: rule.map { ExposureTracker(rule: $0) }, links: links)
    }

    /// What the helpers that are on track: predictions, lazy-load sets, exposure counts and
    /// stays, and loop shifts.
    func writeState(into w: inout BinaryWriter, items: SnapshotItems) {
        if let prefetcher { items.writeSet(prefetcher.predicted, into: &w) }
        if let lazyLoader {
            items.writeSet(lazyLoader.loaded, into: &w)
            items.writeSet(lazyLoader.pending, into: &w)
            items.writeSet(lazyLoader.fromDragEnd, into: &w)
        }
        exposureTracker?.writeSnapshot(into: &w, items: items)
        let shifts = loopShifts.sorted { $0.key < $1.key }
        w.count(shifts.count)
        for (item, shift) in shifts {
            items.write(item, into: &w)
            w.double(shift)
        }
    }

    /// These helpers with ``writeState(into:items:)``'s section read, `selected`, and on when
    /// the session `loops`.
    func readingState(_ r: inout BinaryReader, items: SnapshotItems, selected: Int?, loops: Bool) throws(BinaryFormatError) -> SessionHelpers {
        var prefetcher: Prefetcher?
        if let seconds = self.prefetcher?.seconds { prefetcher = Prefetcher(seconds: seconds, predicted: try items.readSet(&r)) }
        var lazyLoader: LazyLoader?
        if self.lazyLoader != nil {
            lazyLoader = LazyLoader(loaded: try items.readSet(&r), pending: try items.readSet(&r), fromDragEnd: try items.readSet(&r))
        }
        var exposureTracker: ExposureTracker?
        if let rule = self.exposureTracker?.rule { exposureTracker = try ExposureTracker(rule: rule, snapshot: &r, items: items) }
        var loopShifts: [Int: Double] = [:]
        for _ in 0..<(try r.elementCount(minBytes: 9)) {
            let item = try items.read(&r)
            loopShifts[item] = try r.double()
        }
        return SessionHelpers(
            areOn: areOn || loops, selected: selected, prefetcher: prefetcher, lazyLoader: lazyLoader, exposureTracker: exposureTracker,
            links: links, loopShifts: loopShifts)
    }
}
