/// Picks the lane an item added at the end of a masonry joins: the one whose end is shortest, the
/// lowest index on a tie (docs/api.md "Stacks and edits"), and then lengthens it. A tournament tree over the lanes' ends.
struct LaneChooser {
    /// Where each lane ends (zero when empty) and how many items it has.
    private(set) var ends: [StackLength]
    private var counts: [Int]
    private let gap: StackLength
    /// `winners[k]`: the shortest lane under tournament node k (leaves from `leaves`).
    private var winners: [Int]
    private let leaves: Int

    /// Lanes with these lengths and item counts (a stack's current state).
    init(ends: [StackLength], counts: [Int], gap: StackLength) {
        self.ends = ends
        self.counts = counts
        self.gap = gap
        var leaves = 1
        while leaves < ends.count { leaves *= 2 }
        self.leaves = leaves
        winners = Array(repeating: 0, count: 2 * leaves)
        for k in 0..<leaves { winners[leaves + k] = k }
        for k in stride(from: leaves - 1, through: 1, by: -1) { winners[k] = better(winners[2 * k], winners[2 * k + 1]) }
    }

    init(tree: StackTree) {
        self.init(
            ends: (0..<tree.laneCount).map { tree.laneLength($0) }, counts: (0..<tree.laneCount).map { tree.count(inLane: $0) },
            gap: tree.gap)
    }

    /// The lower of two lanes by (end, index); padding leaves (past the lanes) lose.
    @inline(__always)
    private func better(_ a: Int, _ b: Int) -> Int {
        if b >= ends.count { return a }
        if a >= ends.count { return b }
        return ends[b] < ends[a] ? b : a
    }

    /// The shortest lane now.
    var shortest: Int { winners[1] }

    /// Adds an item of size `main` to the shortest lane and returns that lane.
    /// - Complexity: O(log lanes).
    mutating func add(main: StackLength) -> Int { add(main: main, lane: nil) }

    /// Adds an item of size `main` to `lane` (nil: the shortest) and returns that lane.
    /// - Complexity: O(log lanes).
    mutating func add(main: StackLength, lane given: Int?) -> Int {
        let lane = given ?? winners[1]
        ends[lane] = (counts[lane] > 0 ? ends[lane] + gap : .zero) + main
        counts[lane] += 1
        var k = (leaves + lane) / 2
        while k >= 1 {
            winners[k] = better(winners[2 * k], winners[2 * k + 1])
            k /= 2
        }
        return lane
    }
}
