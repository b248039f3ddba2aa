import Testing

@testable import ViewportCore
import ViewportTestSupport

/// The tree against plain arrays under random edits and queries. Each test's argument is its
/// seed (printed in every failure); `STACK_SEED=n swift test --filter StackTreeModelTests`
/// replays one.
@Suite struct StackTreeModelTests {
    static let laneChoices = [1, 1, 2, 3, 7, 64]

    @Test(arguments: 0..<12)
    func randomEditsAndQueriesMatchTheModel(seedArgument: Int) {
        let seed = stackSeed(UInt64(seedArgument) &* 0x9E37_79B9 &+ 17)
        var rng = SeededRandom(seed: seed)
        let laneCount = Self.laneChoices[Int.random(in: 0..<Self.laneChoices.count, using: &rng)]
        let spacing = [0, 4, 1.0 / 3, 10][Int.random(in: 0..<4, using: &rng)]
        let initial = [0, 1, 5, 64, 65, 700, 3000][Int.random(in: 0..<7, using: &rng)]
        var nextUID: Int32 = 0
        var model = StackModel(laneCount: laneCount, spacing: spacing)
        for _ in 0..<initial {
            model.entries.append(randomStackEntry(uid: nextUID, laneCount: laneCount, using: &rng))
            nextUID += Int32.random(in: 1...3, using: &rng)
        }
        var tree = StackTree(entries: ContiguousArray(model.entries), laneCount: laneCount, spacing: spacing)
        var removed: [Int32] = []
        let context = "seed \(seed) (lanes \(laneCount), spacing \(spacing), \(initial) items)"
        expectStackTreeMatches(tree, model, "\(context) built", removed: removed)

        for step in 1...300 {
            let n = model.entries.count
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<35 where n > 0:  // resize
                let r = Int.random(in: 0..<n, using: &rng)
                let main = randomStackSize(using: &rng)
                let cross = Double(Int.random(in: 0...400, using: &rng))
                tree.resize(at: r, main: main, cross: cross)
                model.entries[r].main = main
                model.entries[r].cross = cross
                model.entries[r].isMeasured = true
            case 35..<65:  // insert a run
                let r = Int.random(in: 0...n, using: &rng)
                let m = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 60...400, using: &rng) : Int.random(in: 1...5, using: &rng)
                var run: [StackEntry] = []
                for _ in 0..<m {
                    run.append(randomStackEntry(uid: nextUID, laneCount: laneCount, using: &rng))
                    nextUID += 1
                }
                tree.insert(contentsOf: run, at: r, anchor: Bool.random(using: &rng) ? .previous : .next)
                model.entries.insert(contentsOf: run, at: r)
            case 65..<100 where n > 0:  // remove, sometimes a run
                let r = Int.random(in: 0..<n, using: &rng)
                let m = min(n - r, Int.random(in: 0..<8, using: &rng) == 0 ? Int.random(in: 1...200, using: &rng) : 1)
                for _ in 0..<m {
                    let e = tree.remove(at: r)
                    #expect(e.uid == model.entries[r].uid, "\(context) step \(step): removed uid")
                    removed.append(e.uid)
                    model.entries.remove(at: r)
                }
            default:
                break
            }
            if step % 50 == 0 || model.entries.count < 70 {
                expectStackTreeMatches(tree, model, "\(context) step \(step)", removed: removed.suffix(50))
            }
            if step % 5 == 0 { checkQueries(tree, model, rng: &rng, "\(context) step \(step)") }
            if !model.entries.isEmpty {
                let r = Int.random(in: 0..<model.entries.count, using: &rng)
                #expect(tree.locate(r).entry.uid == model.entries[r].uid, "\(context) step \(step): entry at \(r)")
                #expect(tree.rank(ofUID: model.entries[r].uid) == r, "\(context) step \(step): rank of uid")
            }
        }
    }

    /// Range and nearest queries against brute force, at random intervals, at the model's own
    /// starts and ends (items touching the edges) and with random lane sets.
    func checkQueries(_ tree: StackTree, _ model: StackModel, rng: inout SeededRandom, _ context: String) {
        let starts = model.starts()
        let total = (model.laneLengths().max() ?? .zero).value
        for r in 0..<starts.count where r % 7 == 0 || r == starts.count - 1 {
            #expect(tree.start(at: r) == starts[r], "\(context): start of \(r)")
        }
        for _ in 0..<3 {
            var low: StackLength
            var high: StackLength
            if !starts.isEmpty && Bool.random(using: &rng) {
                // Edges exactly at item starts and ends.
                let a = Int.random(in: 0..<starts.count, using: &rng)
                let b = Int.random(in: 0..<starts.count, using: &rng)
                low = Bool.random(using: &rng) ? starts[a] : starts[a] + StackLength(model.entries[a].main)
                high = Bool.random(using: &rng) ? starts[b] : starts[b] + StackLength(model.entries[b].main)
            } else {
                low = StackLength(Double.random(in: -50...(total + 50), using: &rng))
                high = low + StackLength(Double(Int.random(in: 0...900, using: &rng)))
            }
            if high < low { swap(&low, &high) }
            let lanes: UInt64 = Bool.random(using: &rng) ? .max : rng.next()
            var found: [Int] = []
            var startsOK = true
            tree.forEach(touching: low, high, lanes: lanes) { r, e, s in
                found.append(r)
                if s != starts[r] || e.uid != model.entries[r].uid { startsOK = false }
            }
            #expect(found == model.touching(low, high, lanes: lanes, starts: starts), "\(context): range [\(low), \(high)] lanes \(lanes)")
            #expect(startsOK, "\(context): range query starts")
            let x = Bool.random(using: &rng) && !starts.isEmpty
                ? starts[Int.random(in: 0..<starts.count, using: &rng)] : StackLength(Double.random(in: -50...(total + 50), using: &rng))
            let near = tree.nearestStart(to: x)
            let expected = model.nearestStart(to: x, starts: starts)
            #expect(near?.rank == expected?.rank && near?.start == expected?.start, "\(context): nearest to \(x)")
        }
    }

    @Test func lanesUnbalancedByInsertsCostNothingExtra() {
        // Two lanes; 10,000 items inserted into lane 0 after its first item: lane 1's entries are
        // now far apart in rank, with lane 0's between them.
        var entries = ContiguousArray<StackEntry>()
        for k in 0..<2_000 { entries.append(StackEntry(uid: Int32(k), main: 100, cross: 50, lane: UInt16(k % 2))) }
        var tree = StackTree(entries: entries, laneCount: 2, spacing: 0)
        var model = StackModel(entries: Array(entries), laneCount: 2, spacing: 0)
        let run = (0..<10_000).map { StackEntry(uid: Int32(10_000 + $0), main: 10, cross: 50, lane: 0) }
        tree.insert(contentsOf: run, at: 1, anchor: .previous)
        model.entries.insert(contentsOf: run, at: 1)
        expectStackTreeMatches(tree, model, "unbalanced")
        // Lane 1 only, around its 500th item: a few matches, all far from one another in rank.
        let low = StackLength(50_000)
        let high = StackLength(50_350)
        var found: [Int] = []
        tree.forEach(touching: low, high, lanes: 0b10) { r, _, _ in found.append(r) }
        #expect(found == model.touching(low, high, lanes: 0b10))
        #expect(found.count == 5)
        // A walk over ranks would look at thousands of lane-0 entries; the tree looks at the
        // leaves that hold lane-1 matches.
        let examined = tree.examinedEntries(touching: low, high, lanes: 0b10)
        #expect(examined <= 6 * StackTree.leafCapacity, "examined \(examined) entries")
        // Both lanes at a position only lane 1 still reaches.
        let late = StackLength(99_000)
        found = []
        tree.forEach(touching: late, late + StackLength(10)) { r, _, _ in found.append(r) }
        #expect(found == model.touching(late, late + StackLength(10)))
        #expect(tree.examinedEntries(touching: late, late + StackLength(10)) <= 2 * StackTree.leafCapacity)
    }

    @Test func aMillionEntriesBuildBalancedAndAnswerExactly() {
        var entries = ContiguousArray<StackEntry>()
        entries.reserveCapacity(1_000_000)
        for k in 0..<1_000_000 { entries.append(StackEntry(uid: Int32(k), main: Double(k % 7) + 1.0 / 3, cross: 375)) }
        let tree = StackTree(entries: entries, laneCount: 1, spacing: 2)
        #expect(tree.count == 1_000_000)
        var running = StackLength.zero
        var checked = 0
        for k in 0..<1_000_000 {
            if k % 9_973 == 0 {
                #expect(tree.start(at: k) == running)
                #expect(tree.rank(ofUID: Int32(k)) == k)
                checked += 1
            }
            running += StackLength(entries[k].main) + StackLength(2)
        }
        #expect(checked > 100)
        #expect(tree.laneLength(0) == running - StackLength(2))
    }
}
