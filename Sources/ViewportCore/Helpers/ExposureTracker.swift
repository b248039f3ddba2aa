/// The `exposure` helper: counts how many times each item entered the screen region (the viewport
/// without buffer), as LazyScrollView's `didEnterWithTimes`.
///
/// The counts are sparse: only items that ever entered have one.
struct ExposureTracker: Sendable {
    /// Item → times it entered the screen region in this session.
    private(set) var times: [Int: Int] = [:]

    init() {}

    /// A tracker in a given state (a restored snapshot).
    init(times: [Int: Int], absent: [String: Int]) {
        self.times = times
        self.absent = absent
    }

    /// Records items entering and leaving the screen region (each in layout order) and answers the
    /// plan's `enter` and `leave`.
    /// - Complexity: O(e + l) expected.
    /// Counts of items that entered and are in no layout the session has now, by id: the count is
    /// "in this session", so an item that comes back (a layout change restores it) continues it.
    private(set) var absent: [String: Int] = [:]

    /// Carries the enter counts to another layout (`map`: old position → new, nil when gone); the
    /// counts of gone items are kept by id, and those of items `new` has again are restored.
    /// - Complexity: O(t + a) for t counted items and a absent ones.
    mutating func remap(from old: Layout, to new: Layout, _ map: (Int) -> Int?) {
        var moved: [Int: Int] = [:]
        var absent = self.absent
        for (item, count) in times {
            if let j = map(item) { moved[j] = count } else { absent[old.id(at: item)] = count }
        }
        for (id, count) in self.absent {
            guard let j = new.item(withID: id), moved[j] == nil else { continue }
            moved[j] = count
            absent[id] = nil
        }
        times = moved
        self.absent = absent
    }

    mutating func record(entered: [Int], left: [Int]) -> (enter: [ExposureEntry], leave: [Int]) {
        var enter: [ExposureEntry] = []
        enter.reserveCapacity(entered.count)
        for item in entered {
            let count = (times[item] ?? 0) + 1
            times[item] = count
            enter.append(ExposureEntry(item: item, times: count))
        }
        return (enter, left)
    }
}
