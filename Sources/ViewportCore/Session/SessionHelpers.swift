/// The state of a session's scrolling helpers and selection (see `ViewportSession+Helpers.swift`).
/// A helper that is off is nil or empty and costs nothing.
struct SessionHelpers: Sendable {
    /// Whether some helper needs work after every update (`prefetch`, `lazyLoad`, `exposure`,
    /// `links` or `loop`).
    let areOn: Bool
    /// The selected item (`select`).
    var selected: Int?
    var prefetcher: Prefetcher?
    var lazyLoader: LazyLoader?
    var exposureTracker: ExposureTracker?
    /// Followers of `links`, by name in ascending order.
    let links: [(name: String, view: LinkedScrollView)]
    /// With `loop`: item → the shift of the copy its view shows (empty without `loop`).
    var loopShifts: [Int: Double] = [:]

    init(
        areOn: Bool, selected: Int? = nil, prefetcher: Prefetcher?, lazyLoader: LazyLoader?, exposureTracker: ExposureTracker?,
        links: [(name: String, view: LinkedScrollView)], loopShifts: [Int: Double] = [:]
    ) {
        self.areOn = areOn
        self.selected = selected
        self.prefetcher = prefetcher
        self.lazyLoader = lazyLoader
        self.exposureTracker = exposureTracker
        self.links = links
        self.loopShifts = loopShifts
    }

    /// Every helper off, nothing selected.
    static let off = SessionHelpers(areOn: false, prefetcher: nil, lazyLoader: nil, exposureTracker: nil, links: [])

    /// Whether this is ``off`` (a session then keeps no box).
    var isOff: Bool {
        !areOn && selected == nil && prefetcher == nil && lazyLoader == nil && exposureTracker == nil && links.isEmpty
            && loopShifts.isEmpty
    }

    /// The helpers out of line in a session (copy on write: the session mutates the box only
    /// when it holds the only reference, see `ViewportSession.helpers`).
    final class Box: @unchecked Sendable {
        var value: SessionHelpers
        init(_ value: SessionHelpers) { self.value = value }
    }

    /// The helpers of a new session.
    init(configuration: SessionConfiguration) {
        self.init(
            areOn: configuration.usesHelpers, prefetcher: configuration.prefetch.map { Prefetcher(seconds: $0) },
            lazyLoader: configuration.lazyLoad ? LazyLoader() : nil,
            exposureTracker: configuration.exposure ? ExposureTracker(rule: configuration.exposureRule) : nil,
            links: configuration.links.sorted { $0.key < $1.key }.map { (name: $0.key, view: $0.value) })
    }

    /// Renumbers the items the helpers name to `remap.new` (see `ViewportSession.remapItems`):
    /// the selection, prefetch predictions, lazy-load state, exposure counts (kept by id for gone
    /// items, so a returning item continues its count) and loop shifts.
    /// - Complexity: O(h) `remap` lookups for h items the helpers track.
    mutating func remap(_ remap: inout ItemRemap) {
        selected = selected.flatMap { remap.position($0) }
        prefetcher?.remap { remap.position($0) }
        lazyLoader?.remap { remap.position($0) }
        exposureTracker?.remap(from: remap.old, to: remap.new) { remap.position($0) }
        if !loopShifts.isEmpty {
            var shifts: [Int: Double] = [:]
            for (item, shift) in loopShifts {
                if let j = remap.position(item) { shifts[j] = shift }
            }
            loopShifts = shifts
        }
    }
}
