/// The `exposure` helper: counts how many times each item entered the screen region (the viewport
/// without buffer), as LazyScrollView's `didEnterWithTimes`, and with `minTime` which stays on
/// screen lasted long enough to be viewed (FlatList's viewabilityConfig).
///
/// The counts are sparse: only items that ever entered (or were viewed) have one. Viewability keeps
/// state for the stays not viewed yet only, and finds the ones that come due in time order, so an
/// update costs O(e + l + v) for items entering, leaving and viewed, not O(on screen).
struct ExposureTracker: Sendable {
    let rule: ExposureRule
    /// Item → times it entered the screen region in this session.
    private(set) var times: [Int: Int] = [:]
    /// Counts of items that entered and are in no layout the session has now, by id: the count is
    /// "in this session", so an item that comes back (a layout change restores it) continues it.
    private(set) var absent: [String: Int] = [:]

    // Viewability (with `minTime`).

    /// Item → times one of its stays was viewed.
    private(set) var viewedTimes: [Int: Int] = [:]
    /// `viewedTimes` of items in no layout the session has now, by id.
    private(set) var absentViewed: [String: Int] = [:]
    /// Items on screen whose current stay is not viewed yet → that stay's number.
    private(set) var pending: [Int: UInt64] = [:]
    /// Stays with a clock, in the order they started (times are monotonic): `clocked[head...]`.
    private(set) var clocked: [ClockedStay] = []
    private(set) var head = 0
    /// Stays that began in an update without `time`: their clock starts at the next update with
    /// one (`record`). Entries of stays that ended meanwhile are skipped then.
    private(set) var unclocked: [UnclockedStay] = []
    private(set) var nextStay: UInt64 = 0

    struct ClockedStay: Hashable, Sendable {
        var item: Int
        var stay: UInt64
        var start: Double
    }

    struct UnclockedStay: Hashable, Sendable {
        var item: Int
        var stay: UInt64
    }

    init(rule: ExposureRule) { self.rule = rule }

    /// A tracker in a given state (a restored snapshot); the stays are as ``snapshotState`` gave them.
    init(
        rule: ExposureRule, times: [Int: Int], absent: [String: Int], viewedTimes: [Int: Int], absentViewed: [String: Int],
        pending: [Int: UInt64], clocked: [ClockedStay], unclocked: [UnclockedStay], nextStay: UInt64
    ) {
        self.rule = rule
        self.times = times
        self.absent = absent
        self.viewedTimes = viewedTimes
        self.absentViewed = absentViewed
        self.pending = pending
        self.clocked = clocked
        self.head = 0
        self.unclocked = unclocked
        self.nextStay = nextStay
    }

    /// The clocked stays still waiting (`clocked[head...]`), for a snapshot.
    var waitingClocked: ArraySlice<ClockedStay> { clocked[head...] }

    /// Carries the counts and stays to another layout (`map`: old position → new, nil when gone);
    /// the counts of gone items are kept by id, and those of items `new` has again are restored.
    /// A gone item's stay ends.
    /// - Complexity: O(t + a + s) for t counted items, a absent ones and s pending stays.
    mutating func remap(from old: Layout, to new: Layout, _ map: (Int) -> Int?) {
        (times, absent) = Self.remap(times, absent: absent, from: old, to: new, map)
        guard rule.minTime != nil else { return }
        (viewedTimes, absentViewed) = Self.remap(viewedTimes, absent: absentViewed, from: old, to: new, map)
        let before = pending
        pending = [:]
        for (item, stay) in before {
            if let j = map(item) { pending[j] = stay }
        }
        // Entries of ended stays, or of gone items, are dropped on the way.
        clocked = clocked[head...].compactMap { entry in
            guard before[entry.item] == entry.stay, let j = map(entry.item) else { return nil }
            return ClockedStay(item: j, stay: entry.stay, start: entry.start)
        }
        head = 0
        unclocked = unclocked.compactMap { entry in
            guard before[entry.item] == entry.stay, let j = map(entry.item) else { return nil }
            return UnclockedStay(item: j, stay: entry.stay)
        }
    }

    private static func remap(
        _ counts: [Int: Int], absent: [String: Int], from old: Layout, to new: Layout, _ map: (Int) -> Int?
    ) -> ([Int: Int], [String: Int]) {
        var moved: [Int: Int] = [:]
        var absent = absent
        for (item, count) in counts {
            if let j = map(item) { moved[j] = count } else { absent[old.id(at: item)] = count }
        }
        for (id, count) in absent {
            guard let j = new.item(withID: id), moved[j] == nil else { continue }
            moved[j] = count
            absent[id] = nil
        }
        return (moved, absent)
    }

    /// Records items entering and leaving the screen region (each in layout order) at client time
    /// `time` (nil: the update carried none), and answers the plan's `enter` and `viewed`.
    ///
    /// A stay starts its clock at the `time` of the update where the item entered; one that began
    /// in an update without `time` starts it at the next update of the stay that has one (the first
    /// moment the session knows of). An update without `time` starts no clock and views nothing;
    /// leaving ends a stay whatever the update carries. A stay is viewed, once, at the first update
    /// with `time` at which it is still on screen and `time − start ≥ minTime`.
    /// - Complexity: O(e + l + c + v log v) for e entering, l leaving, c stays clocked by this
    ///   update and v viewed (plus, amortized, the entries of stays that ended).
    mutating func record(entered: [Int], left: [Int], time: Double?) -> (enter: [ExposureEntry], viewed: [ExposureEntry]) {
        var enter: [ExposureEntry] = []
        enter.reserveCapacity(entered.count)
        for item in entered {
            let count = (times[item] ?? 0) + 1
            times[item] = count
            enter.append(ExposureEntry(item: item, times: count))
        }
        guard let minTime = rule.minTime else { return (enter, []) }

        for item in left { pending[item] = nil }
        for item in entered {
            let stay = nextStay
            nextStay &+= 1
            pending[item] = stay
            if let time {
                clocked.append(ClockedStay(item: item, stay: stay, start: time))
            } else {
                unclocked.append(UnclockedStay(item: item, stay: stay))
            }
        }
        guard let time else {
            compact()
            return (enter, [])
        }
        // Stays waiting for a clock start now (no earlier than any clocked one: times are monotonic).
        for entry in unclocked where pending[entry.item] == entry.stay {
            clocked.append(ClockedStay(item: entry.item, stay: entry.stay, start: time))
        }
        unclocked.removeAll(keepingCapacity: true)
        // The stays that have lasted `minTime` are a prefix of `clocked`.
        var viewedItems: [Int] = []
        while head < clocked.count, time - clocked[head].start >= minTime {
            let entry = clocked[head]
            head += 1
            guard pending[entry.item] == entry.stay else { continue }  // it left since
            pending[entry.item] = nil
            viewedItems.append(entry.item)
        }
        compact()
        guard !viewedItems.isEmpty else { return (enter, []) }
        viewedItems.sort()
        let viewed = viewedItems.map { item in
            let count = (viewedTimes[item] ?? 0) + 1
            viewedTimes[item] = count
            return ExposureEntry(item: item, times: count)
        }
        return (enter, viewed)
    }

    /// Drops consumed entries and those of ended stays once they outnumber the live ones, so the
    /// queues stay within a constant factor of the items on screen (a client whose time never
    /// advances, or who never sends one, would otherwise grow them without bound).
    /// - Complexity: amortized O(1) per entry.
    private mutating func compact() {
        let live = pending.count
        if head > 0 && head >= clocked.count - head {
            clocked.removeFirst(head)
            head = 0
        }
        if clocked.count - head > 2 * live + 64 {
            clocked = clocked[head...].filter { pending[$0.item] == $0.stay }
            head = 0
        }
        if unclocked.count > 2 * live + 64 {
            unclocked.removeAll { pending[$0.item] != $0.stay }
        }
    }
}
