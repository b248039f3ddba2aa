import Testing

@testable import ViewportCore
import ViewportTestSupport

/// Versions share nodes and never see each other's edits; an edit allocates a path, not a tree.
@Suite struct StackTreePersistenceTests {
    func makeTree(_ n: Int, lanes: Int = 1, seed: UInt64) -> (StackTree, StackModel) {
        var rng = SeededRandom(seed: seed)
        var model = StackModel(laneCount: lanes, spacing: 3)
        for k in 0..<n { model.entries.append(randomStackEntry(uid: Int32(k), laneCount: lanes, using: &rng)) }
        return (StackTree(entries: ContiguousArray(model.entries), laneCount: lanes, spacing: 3), model)
    }

    @Test func anOldVersionIsUnchangedByEditsOfANewOne() {
        let (base, baseModel) = makeTree(5_000, lanes: 3, seed: 1)
        var edited = base
        var model = baseModel
        var rng = SeededRandom(seed: 2)
        for step in 0..<400 {
            let n = model.entries.count
            switch step % 3 {
            case 0:
                let r = Int.random(in: 0..<n, using: &rng)
                edited.resize(at: r, main: 7, cross: 9)
                model.entries[r].main = 7
                model.entries[r].cross = 9
                model.entries[r].isMeasured = true
            case 1:
                let r = Int.random(in: 0...n, using: &rng)
                let e = randomStackEntry(uid: Int32(10_000 + step), laneCount: 3, using: &rng)
                edited.insert(contentsOf: [e], at: r, anchor: .previous)
                model.entries.insert(e, at: r)
            default:
                let r = Int.random(in: 0..<n, using: &rng)
                edited.remove(at: r)
                model.entries.remove(at: r)
            }
        }
        expectStackTreeMatches(edited, model, "edited")
        expectStackTreeMatches(base, baseModel, "base after edits of a copy")
        // New uids are not in the old version's map.
        #expect(base.rank(ofUID: 10_001) == nil)
    }

    @Test func twoVersionsEditedIndependentlyEachMatchTheirModel() {
        let (base, baseModel) = makeTree(3_000, lanes: 2, seed: 3)
        var a = base
        var b = base
        var modelA = baseModel
        var modelB = baseModel
        var rng = SeededRandom(seed: 4)
        for step in 0..<300 {
            // The same ranks, different edits: a resizes and inserts, b removes and inserts elsewhere.
            let r = Int.random(in: 0..<min(modelA.entries.count, modelB.entries.count), using: &rng)
            a.resize(at: r, main: Double(step), cross: 1)
            modelA.entries[r].main = Double(step)
            modelA.entries[r].cross = 1
            modelA.entries[r].isMeasured = true
            let ea = StackEntry(uid: Int32(100_000 + step), main: 1, cross: 1, lane: 0)
            a.insert(contentsOf: [ea], at: r, anchor: .next)
            modelA.entries.insert(ea, at: r)
            b.remove(at: r)
            modelB.entries.remove(at: r)
            let eb = StackEntry(uid: Int32(200_000 + step), main: 2, cross: 2, lane: 1)
            b.insert(contentsOf: [eb], at: modelB.entries.count / 2, anchor: .previous)
            modelB.entries.insert(eb, at: modelB.entries.count / 2)
        }
        expectStackTreeMatches(a, modelA, "a")
        expectStackTreeMatches(b, modelB, "b")
        expectStackTreeMatches(base, baseModel, "base")
        #expect(a.rank(ofUID: 200_000) == nil && b.rank(ofUID: 100_000) == nil)
    }

    @Test func anEditAllocatesItsPathOnly() {
        let (base, _) = makeTree(200_000, seed: 5)
        var depth = 0
        var node = base.root
        while !node.isLeaf {
            depth += 1
            node = node.children[0]
        }
        var resized = base
        resized.resize(at: 123_456, main: 50, cross: 50)
        #expect(resized.nodesNotShared(with: base) == depth + 1)
        // Ten resizes near one another copy the shared path once, then change their own nodes.
        var batch = base
        for k in 0..<10 { batch.resize(at: 100_000 + 3 * k, main: Double(k), cross: 1) }
        #expect(batch.nodesNotShared(with: base) <= depth + 2)
        var inserted = base
        inserted.insert(contentsOf: [StackEntry(uid: 999_999, main: 1, cross: 1)], at: 77_777, anchor: .previous)
        #expect(inserted.nodesNotShared(with: base) <= depth + 3)
        var removed = base
        removed.remove(at: 150_000)
        #expect(removed.nodesNotShared(with: base) <= depth + 3)
        // A run of 1,000 entries: its own leaves and parents, plus the path.
        var run = base
        run.insert(contentsOf: (0..<1_000).map { StackEntry(uid: Int32(1_000_000 + $0), main: 1, cross: 1) }, at: 5, anchor: .next)
        #expect(run.nodesNotShared(with: base) <= 1_000 / (StackTree.leafCapacity / 2) + 2 + 2 * depth)
        #expect(run.structuralProblems().isEmpty)
    }

    @Test func aCopyEditedInPlaceDoesNotCopyWhatItAloneHolds() {
        var (tree, _) = makeTree(50_000, seed: 6)
        let before = ObjectIdentifier(tree.root)
        tree.resize(at: 10, main: 1, cross: 1)
        // The only version: the root is changed in place, not copied.
        #expect(ObjectIdentifier(tree.root) == before)
        let copy = tree
        tree.resize(at: 10, main: 2, cross: 1)
        #expect(ObjectIdentifier(tree.root) != ObjectIdentifier(copy.root))
        #expect(copy.entry(at: 10).main == 1)
    }
}

/// Order keys under adversarial insert patterns, against an array of uids.
@Suite struct StackTreeKeyTests {
    /// Runs `inserts` single inserts, each at the rank `position` picks (given the current order
    /// and the rank of the last insert), checking ranks against the array as it goes.
    func run(
        initial: Int, inserts: Int, anchor: (Int) -> StackTree.Anchor, _ position: (_ order: [Int32], _ last: Int, _ step: Int) -> Int
    ) -> StackTree {
        var order = (0..<Int32(initial)).map { $0 }
        var tree = StackTree(entries: ContiguousArray(order.map { StackEntry(uid: $0, main: 1, cross: 1) }))
        var last = initial / 2
        for step in 0..<inserts {
            let r = position(order, last, step)
            let uid = Int32(1_000_000 + step)
            tree.insert(contentsOf: [StackEntry(uid: uid, main: 1, cross: 1)], at: r, anchor: anchor(step))
            order.insert(uid, at: r)
            last = r
            if step % 997 == 0 || step == inserts - 1 {
                #expect(tree.rank(ofUID: uid) == r, "step \(step)")
                #expect(tree.rank(ofUID: order[order.count / 2]) == order.count / 2, "step \(step)")
            }
        }
        #expect(tree.entries.map(\.uid) == order)
        for (r, uid) in order.enumerated() where tree.rank(ofUID: uid) != r {
            Issue.record("uid \(uid) at \(r) found at \(String(describing: tree.rank(ofUID: uid)))")
            break
        }
        #expect(tree.structuralProblems().isEmpty)
        return tree
    }

    /// Relabelling stays amortized O(log n) entries an insert.
    func expectCheapRelabelling(_ tree: StackTree, inserts: Int, _ pattern: String) {
        let perInsert = Double(tree.relabelledEntries) / Double(inserts)
        print("relabelling, \(pattern): \(perInsert) entries an insert")
        #expect(perInsert <= 40, "\(pattern): \(perInsert) entries relabelled an insert")
    }

    @Test func alwaysInTheSameGapAfterTheSameItem() {
        // "After X" again and again: each new item goes between X and the previous new one.
        let tree = run(initial: 100, inserts: 20_000, anchor: { _ in .previous }) { _, _, _ in 51 }
        expectCheapRelabelling(tree, inserts: 20_000, "after the same item")
    }

    @Test func alwaysInTheSameGapBeforeTheSameItem() {
        let tree = run(initial: 100, inserts: 20_000, anchor: { _ in .next }) { order, _, step in 50 + step }
        expectCheapRelabelling(tree, inserts: 20_000, "before the same item")
    }

    @Test func afterTheLastNewItem() {
        let tree = run(initial: 100, inserts: 20_000, anchor: { _ in .previous }) { _, last, _ in last + 1 }
        expectCheapRelabelling(tree, inserts: 20_000, "after the last new item")
        #expect(tree.relabelledEntries == 0, "a gap of 2⁵⁵ holds 20,000 steps of 2³²")
    }

    @Test func alternatingBeforeAndAfterTheLastNewItem() {
        let tree = run(initial: 10, inserts: 20_000, anchor: { $0 % 2 == 0 ? .previous : .next }) { _, last, step in
            step % 2 == 0 ? last + 1 : last
        }
        expectCheapRelabelling(tree, inserts: 20_000, "alternating")
    }

    @Test func zigzagInTheMiddle() {
        // Always at the middle of the whole order: every gap there is split again and again.
        let tree = run(initial: 2, inserts: 20_000, anchor: { $0 % 3 == 0 ? .next : .previous }) { order, _, _ in order.count / 2 }
        expectCheapRelabelling(tree, inserts: 20_000, "middle")
    }

    @Test func appendsAndPrependsKeepRoom() {
        var tree = run(initial: 1_000, inserts: 20_000, anchor: { _ in .previous }) { order, _, _ in order.count }
        #expect(tree.relabelledEntries == 0)
        tree = run(initial: 1_000, inserts: 20_000, anchor: { _ in .next }) { _, _, _ in 0 }
        #expect(tree.relabelledEntries == 0)
    }

    @Test func batchesSpreadInTheirGap() {
        // Runs of 50 again and again at one place, into a tree that started empty.
        var order: [Int32] = []
        var tree = StackTree()
        var uid: Int32 = 0
        for step in 0..<400 {
            let run = (0..<50).map { k in StackEntry(uid: uid + Int32(k), main: 1, cross: 1) }
            let r = order.count / 3
            tree.insert(contentsOf: run, at: r, anchor: step % 2 == 0 ? .previous : .next)
            order.insert(contentsOf: run.map(\.uid), at: r)
            uid += 50
        }
        #expect(tree.entries.map(\.uid) == order)
        #expect(tree.structuralProblems().isEmpty)
        expectCheapRelabelling(tree, inserts: 20_000, "batches")
    }

    @Test func randomInsertsAndRemovesKeepKeysAndMapExact() {
        let seed = stackSeed(77)
        var rng = SeededRandom(seed: seed)
        var order: [Int32] = (0..<500).map { $0 }
        var tree = StackTree(entries: ContiguousArray(order.map { StackEntry(uid: $0, main: 1, cross: 1) }))
        var next: Int32 = 10_000
        for step in 0..<30_000 {
            if Int.random(in: 0..<3, using: &rng) == 0 && !order.isEmpty {
                let r = Int.random(in: 0..<order.count, using: &rng)
                #expect(tree.remove(at: r).uid == order.remove(at: r), "seed \(seed) step \(step)")
            } else {
                // Clustered positions make gaps run out.
                let r = min(order.count, Int.random(in: 0...20, using: &rng) + order.count / 2)
                tree.insert(contentsOf: [StackEntry(uid: next, main: 1, cross: 1)], at: r, anchor: Bool.random(using: &rng) ? .previous : .next)
                order.insert(next, at: r)
                next += 1
            }
        }
        #expect(tree.entries.map(\.uid) == order, "seed \(seed)")
        #expect(tree.structuralProblems().isEmpty, "seed \(seed)")
        // Memory follows the live edits: one override per live inserted or relabelled entry.
        #expect(tree.overrides.count <= order.count)
    }

    @Test func uidsNotIncreasingAtBuildStillFindTheirRanks() {
        let uids: [Int32] = [5, 3, 9, 1, 7]
        let tree = StackTree(entries: ContiguousArray(uids.map { StackEntry(uid: $0, main: 1, cross: 1) }))
        for (r, uid) in uids.enumerated() { #expect(tree.rank(ofUID: uid) == r) }
        #expect(tree.rank(ofUID: 2) == nil)
        #expect(tree.structuralProblems().isEmpty)
    }

    @Test func theUIDMapIsPersistent() {
        var a = UIDKeyMap()
        for uid in stride(from: Int32(0), to: 5_000, by: 3) { a.set(uid, UInt64(uid) * 2) }
        a.set(Int32.max, 1)
        var b = a
        b.set(3, 99)
        b.remove(6)
        b.set(1 << 20, 5)
        #expect(a[3] == 6 && a[6] == 12 && a[1 << 20] == nil && a[Int32.max] == 1)
        #expect(b[3] == 99 && b[6] == nil && b[1 << 20] == 5 && b[Int32.max] == 1)
        #expect(a.count == 1_668 && b.count == 1_668)
        #expect(a.all().count == a.count)
        for uid in stride(from: Int32(0), to: 5_000, by: 3) { a.remove(uid) }
        a.remove(Int32.max)
        #expect(a.count == 0 && a.all().isEmpty)
        #expect(b[9] == 18)
    }
}
