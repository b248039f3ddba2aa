/// The `exposure` helper: counts how many times each item entered the screen region (the viewport
/// without buffer), as LazyScrollView's `didEnterWithTimes`.
///
/// The counts are sparse: only items that ever entered have one.
struct ExposureTracker: Sendable {
    /// Item → times it entered the screen region in this session.
    private(set) var times: [Int: Int] = [:]

    /// Records items entering and leaving the screen region (each in layout order) and answers the
    /// plan's `enter` and `leave`.
    /// - Complexity: O(e + l) expected.
    /// Carries the enter counts to another layout (`map`: old position → new, nil when gone).
    mutating func remap(_ map: (Int) -> Int?) {
        var moved: [Int: Int] = [:]
        for (item, count) in times { if let j = map(item) { moved[j] = count } }
        times = moved
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
