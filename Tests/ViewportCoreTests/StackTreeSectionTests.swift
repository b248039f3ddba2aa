import Testing

@testable import ViewportCore
import ViewportTestSupport

/// The section model: rects, the lane rules of docs/api.md "Stacks and edits", validation, and box queries against brute force.
@Suite struct StackTreeSectionTests {
    typealias Item = StackSection.Item

    func rects(_ s: StackSection) -> [Rect] { (0..<s.count).map { s.rect(at: $0) } }
    func lanes(_ s: StackSection) -> [UInt16] { s.tree.entries.map(\.lane) }

    @Test func aSingleLaneStacksItemsEachWhereThePreviousEnds() throws {
        let s = try StackSection(
            origin: Point(x: 10, y: 100), axis: .y, spacing: 4, estimate: Size(width: 375, height: 80), reuseClass: 2,
            items: [Item(uid: 0, size: Size(width: 375, height: 64)), Item(uid: 1), Item(uid: 2, size: Size(width: 375, height: 300), reuseClass: 5)])
        #expect(rects(s) == [
            Rect(x: 10, y: 100, width: 375, height: 64), Rect(x: 10, y: 168, width: 375, height: 80), Rect(x: 10, y: 252, width: 375, height: 300),
        ])
        #expect(s.entry(at: 1).isMeasured == false && s.entry(at: 0).isMeasured && s.entry(at: 2).reuseClass == 5 && s.entry(at: 1).reuseClass == 2)
        #expect(s.extent == 64 + 4 + 80 + 4 + 300)
        #expect(s.farCorner == Point(x: 385, y: 552))
        // Along x the roles swap.
        let h = try StackSection(
            origin: Point(x: 5, y: 7), axis: .x, spacing: 2, items: [Item(uid: 0, size: Size(width: 50, height: 30)), Item(uid: 1, size: Size(width: 20, height: 40))])
        #expect(rects(h) == [Rect(x: 5, y: 7, width: 50, height: 30), Rect(x: 57, y: 7, width: 20, height: 40)])
        #expect(h.farCorner == Point(x: 77, y: 47))
        var moved = h
        moved.origin = Point(x: 0, y: 0)
        #expect(moved.rect(at: 1) == Rect(x: 52, y: 0, width: 20, height: 40))
    }

    @Test func eachItemJoinsTheShortestLaneWhenAddedAndKeepsIt() throws {
        // Lane ends: the estimate (100) for unmeasured items, the size for measured ones.
        let items = [
            Item(uid: 0, size: Size(width: 100, height: 300)),  // lane 0 → 300
            Item(uid: 1),  // lane 1 → 100
            Item(uid: 2),  // lane 2 → 100
            Item(uid: 3, size: Size(width: 100, height: 50)),  // lane 1 (tie 100/100: lowest) → 160
            Item(uid: 4),  // lane 2 → 210
            Item(uid: 5),  // lane 1 → 270
            Item(uid: 6),  // lane 2 → 320
            Item(uid: 7),  // lane 1 → 380
            Item(uid: 8),  // lane 0 (300) → 410
        ]
        var s = try StackSection(spacing: 10, lanes: 3, estimate: Size(width: 100, height: 100), items: items)
        #expect(lanes(s) == [0, 1, 2, 1, 2, 1, 2, 1, 0])
        #expect(s.rect(at: 3) == Rect(x: 110, y: 110, width: 100, height: 50))
        #expect(s.rect(at: 8) == Rect(x: 0, y: 310, width: 100, height: 100))
        // Measuring item 1 much taller moves the items below it in lane 1, and no item changes lane.
        try s.resize(at: 1, to: Size(width: 100, height: 1_000))
        #expect(lanes(s) == [0, 1, 2, 1, 2, 1, 2, 1, 0])
        #expect(s.rect(at: 3).y == 1_010)
        #expect(s.rect(at: 8).y == 310)
        // Inserted after item 3 (lane 1) and before item 8 (lane 0): their lanes.
        try s.insert([Item(uid: 20), Item(uid: 21)], at: .after(3))
        #expect(lanes(s) == [0, 1, 2, 1, 1, 1, 2, 1, 2, 1, 0])
        try s.insert([Item(uid: 22)], at: .before(10))
        #expect(s.entry(at: 10).uid == 22 && s.entry(at: 10).lane == 0)
        // At the start: the first item's lane.
        try s.insert([Item(uid: 23)], at: .start)
        #expect(s.entry(at: 0).uid == 23 && s.entry(at: 0).lane == 0)
        // At the end: each the shortest lane in turn. Ends now: lane 0 = 100+10+300+10+100+10+100 = 630,
        // lane 1 far longer, lane 2 = 320.
        let ends = (0..<3).map { s.tree.laneLength($0).value }
        #expect(ends[2] < ends[0] && ends[0] < ends[1])
        try s.insert([Item(uid: 30, size: Size(width: 100, height: 200)), Item(uid: 31, size: Size(width: 100, height: 200)), Item(uid: 32)], at: .end)
        // 320 → lane 2 (530), then lane 2 again (530 < 630 → 740), then lane 0 (630 < 740).
        #expect(Array(lanes(s).suffix(3)) == [2, 2, 0])
        // Every item still where its lane puts it.
        for r in 0..<s.count { #expect(s.rect(at: r).x == Double(s.entry(at: r).lane) * 110) }
    }

    @Test func insertingAtTheStartOfAnEmptyMasonryUsesLaneZero() throws {
        var s = try StackSection(lanes: 4, estimate: Size(width: 50, height: 50), items: [])
        try s.insert([Item(uid: 1)], at: .start)
        #expect(lanes(s) == [0])
        try s.insert([Item(uid: 2), Item(uid: 3), Item(uid: 4), Item(uid: 5)], at: .end)
        #expect(lanes(s) == [0, 1, 2, 3, 0])
        s.remove(at: 0)
        try s.insert([Item(uid: 6)], at: .start)
        #expect(lanes(s) == [1, 1, 2, 3, 0])
    }

    @Test func laneSizeDefaultsToTheEstimateElseTheFirstItem() throws {
        let a = try StackSection(lanes: 2, estimate: Size(width: 120, height: 80), items: [Item(uid: 0, size: Size(width: 10, height: 10))])
        #expect(a.laneSize == 120)
        let b = try StackSection(spacing: 5, lanes: 2, items: [Item(uid: 0, size: Size(width: 90, height: 10)), Item(uid: 1, size: Size(width: 10, height: 20))])
        #expect(b.laneSize == 90 && b.rect(at: 1).x == 95)
        let c = try StackSection(axis: .x, lanes: 2, laneSize: 33, estimate: Size(width: 120, height: 80), items: [Item(uid: 0), Item(uid: 1)])
        #expect(c.laneSize == 33 && c.rect(at: 1) == Rect(x: 0, y: 33, width: 120, height: 80))
    }

    @Test func invalidStacksNameTheField() {
        func error(_ make: () throws(StackError) -> StackSection) -> String? {
            do {
                _ = try make()
                return nil
            } catch { return error.field }
        }
        #expect(error { () throws(StackError) in try StackSection(lanes: 0, items: []) } == "lanes")
        #expect(error { () throws(StackError) in try StackSection(lanes: 65, items: []) } == "lanes")
        #expect(error { () throws(StackError) in try StackSection(spacing: -1, items: []) } == "spacing")
        #expect(error { () throws(StackError) in try StackSection(spacing: .nan, items: []) } == "spacing")
        #expect(error { () throws(StackError) in try StackSection(estimate: Size(width: .infinity, height: 1), items: []) } == "estimate")
        #expect(error { () throws(StackError) in try StackSection(laneSize: 2e12, items: []) } == "laneSize")
        #expect(error { () throws(StackError) in
            try StackSection(items: [Item(uid: 0, size: Size(width: 1, height: 1)), Item(uid: 1, size: Size(width: 1, height: -1))])
        } == "items[1].size")
        #expect(error { () throws(StackError) in
            try StackSection(items: [Item(uid: 0, size: Size(width: 1, height: 1)), Item(uid: 1)])
        } == "items[1].size")
        #expect(error { () throws(StackError) in try StackSection(items: [Item(uid: 0, size: Size(width: 1, height: 1e13))]) } == "items[0].size")
        #expect(error { () throws(StackError) in try StackSection(lanes: 3, items: []) } == "laneSize")
        #expect(StackError(field: "items[2].size", reason: "x").under("sections[1].stack").description == "sections[1].stack.items[2].size: x")
    }

    @Test func invalidEditsChangeNothing() throws {
        var s = try StackSection(items: [Item(uid: 0, size: Size(width: 10, height: 10)), Item(uid: 1, size: Size(width: 10, height: 20))])
        let before = rects(s)
        #expect(throws: StackError(field: "size", reason: "must be finite and not negative")) { try s.resize(at: 0, to: Size(width: 1, height: -2)) }
        #expect(throws: StackError.self) { try s.insert([Item(uid: 5, size: Size(width: 1, height: 1)), Item(uid: 6)], at: .end) }
        do {
            try s.insert([Item(uid: 5, size: Size(width: 1, height: 1)), Item(uid: 6)], at: .end)
        } catch {
            #expect(error.field == "items[1].size")
        }
        #expect(rects(s) == before && s.count == 2)
    }

    /// Random masonry sections: every box query returns exactly the items whose rect touches the
    /// closed box, in rank order; the nearest leading edge and the far corner match brute force.
    @Test(arguments: 0..<6)
    func boxQueriesMatchBruteForce(seedArgument: Int) throws {
        let seed = stackSeed(UInt64(seedArgument) &+ 1_000)
        var rng = SeededRandom(seed: seed)
        let laneCount = [1, 2, 3, 5][seedArgument % 4]
        let axis: Axis = seedArgument % 2 == 0 ? .y : .x
        let spacing = [0, 8, 1.0 / 3][seedArgument % 3]
        var items: [Item] = []
        for k in 0..<600 {
            let size = Int.random(in: 0..<4, using: &rng) == 0
                ? nil : Size(width: randomStackSize(using: &rng) / 4, height: randomStackSize(using: &rng) / 4)
            items.append(Item(uid: Int32(k), size: size))
        }
        var s = try StackSection(
            origin: Point(x: 13.5, y: -20), axis: axis, spacing: spacing, lanes: laneCount, estimate: Size(width: 60, height: 45), items: items)
        for round in 0..<4 {
            let all = rects(s)
            let far = all.reduce(s.origin) { Point(x: max($0.x, $1.maxX), y: max($0.y, $1.maxY)) }
            #expect(s.farCorner == far, "seed \(seed) round \(round)")
            for query in 0..<60 {
                var box: (Double, Double, Double, Double)
                if query % 3 == 0 {
                    // Edges on item edges.
                    let a = all[Int.random(in: 0..<all.count, using: &rng)]
                    let b = all[Int.random(in: 0..<all.count, using: &rng)]
                    box = (min(a.minX, b.maxX), min(a.minY, b.maxY), max(a.minX, b.maxX), max(a.minY, b.maxY))
                } else {
                    let x = Double.random(in: -50...(far.x + 50), using: &rng)
                    let y = Double.random(in: -50...(far.y + 50), using: &rng)
                    box = (x, y, x + Double.random(in: 0...400, using: &rng), y + Double.random(in: 0...700, using: &rng))
                }
                let (minX, minY, maxX, maxY) = box
                var found: [Int] = []
                var rectsOK = true
                s.forEachItem(minX: minX, minY: minY, maxX: maxX, maxY: maxY) { r, rect in
                    found.append(r)
                    if rect != all[r] { rectsOK = false }
                }
                let expected = all.indices.filter { all[$0].minX <= maxX && all[$0].maxX >= minX && all[$0].minY <= maxY && all[$0].maxY >= minY }
                #expect(found == expected, "seed \(seed) round \(round) box \(box)")
                #expect(rectsOK, "seed \(seed): rects")
                let p = Double.random(in: -100...(axis.component(of: far) + 100), using: &rng)
                let edges = all.map { axis.leadingEdge(of: $0) }
                let best = edges.indices.min { a, b in
                    (abs(edges[a] - p), edges[a], a) < (abs(edges[b] - p), edges[b], b)
                }
                let near = s.nearestLeadingEdge(to: p)
                #expect(near?.rank == best && near?.edge == best.map { edges[$0] }, "seed \(seed): nearest to \(p)")
            }
            // Edit, then query again.
            for _ in 0..<20 {
                let r = Int.random(in: 0..<s.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: try s.resize(at: r, to: Size(width: randomStackSize(using: &rng) / 4, height: randomStackSize(using: &rng) / 4))
                case 1: try s.insert([Item(uid: Int32(10_000 + s.count + round * 100))], at: Bool.random(using: &rng) ? .after(r) : .end)
                default: s.remove(at: r)
                }
            }
        }
    }

    @Test func zeroSizeItemsAtTheEdgesOfABox() throws {
        let s = try StackSection(items: [
            Item(uid: 0, size: Size(width: 10, height: 10)), Item(uid: 1, size: Size(width: 10, height: 0)),
            Item(uid: 2, size: Size(width: 10, height: 0)), Item(uid: 3, size: Size(width: 10, height: 10)),
        ])
        var found: [Int] = []
        s.forEachItem(minX: 0, minY: 10, maxX: 10, maxY: 10) { r, _ in found.append(r) }
        #expect(found == [0, 1, 2, 3])
        found = []
        s.forEachItem(minX: 0, minY: 10.5, maxX: 10, maxY: 20) { r, _ in found.append(r) }
        #expect(found == [3])
        #expect(s.nearestLeadingEdge(to: 9)?.rank == 1)
        #expect(s.nearestLeadingEdge(to: 5)?.rank == 0)  // a tie between 0 and 10: the smaller
    }
}

@Suite struct StackTreeLengthTests {
    @Test func lengthsRoundToTheNearestUnitAndBackCorrectly() {
        var rng = SeededRandom(seed: 9)
        for _ in 0..<20_000 {
            let raw = Int128(Int64(bitPattern: rng.next())) << Int(rng.next() % 60) | Int128(rng.next() % 1024)
            let length = StackLength(raw: raw)
            // Double(Int128) is the library's correctly rounded conversion.
            #expect(length.value == Double(raw) * 0x1p-56)
        }
        for value in [0.0, 1, 1.0 / 3, 64.333333333333329, 1e-20, 1e12, 0.1, 123456.789, 0x1p-56, 0x1p-57, 3 * 0x1p-58] {
            let length = StackLength(value)
            #expect(length.raw == Int128((value * 0x1p56).rounded(.toNearestOrEven)), "\(value)")
            #expect(StackLength(-value).raw == -length.raw)
            if value >= 1.0 / 16 || value == 0 { #expect(length.value == value, "\(value) is exact") }
        }
        #expect(StackLength(.infinity).raw == StackLength.limit)
        #expect(StackLength(-1e300).raw == -StackLength.limit)
        #expect(StackLength(.nan).raw == 0)
        #expect(StackLength(5e-324).raw == 0)
        // Sums are exact: the order of additions does not matter.
        let parts = (0..<1000).map { StackLength(Double($0) / 3 + 0.1) }
        let forward = parts.reduce(StackLength.zero, +)
        let backward = parts.reversed().reduce(StackLength.zero, +)
        #expect(forward == backward)
    }
}

/// The lane rules of docs/api.md "Stacks and edits", replayed on plain arrays, against the section under random edits.
@Suite struct StackTreeMasonryTests {
    typealias Item = StackSection.Item

    @Test(arguments: [2, 13, 64])
    func theShortestLaneChooserMatchesALinearScan(lanes: Int) {
        var rng = SeededRandom(seed: UInt64(lanes))
        let gap = StackLength(3)
        var chooser = LaneChooser(ends: Array(repeating: .zero, count: lanes), counts: Array(repeating: 0, count: lanes), gap: gap)
        var ends = Array(repeating: StackLength.zero, count: lanes)
        var counts = Array(repeating: 0, count: lanes)
        for step in 0..<5_000 {
            // Zero sizes (and the empty lanes at first) make ties: the lowest index wins.
            let main = StackLength(Int.random(in: 0..<3, using: &rng) == 0 ? 0 : Double(Int.random(in: 0...40, using: &rng)))
            var best = 0
            for j in 1..<lanes where ends[j] < ends[best] { best = j }
            #expect(chooser.add(main: main) == best, "step \(step)")
            ends[best] = (counts[best] > 0 ? ends[best] + gap : .zero) + main
            counts[best] += 1
        }
    }

    @Test(arguments: 0..<6)
    func randomEditsFollowTheLaneRules(seedArgument: Int) throws {
        let seed = stackSeed(UInt64(seedArgument) &+ 500)
        var rng = SeededRandom(seed: seed)
        let lanes = [2, 3, 4, 7, 64, 5][seedArgument]
        let spacing = [0, 6, 1.0 / 3][seedArgument % 3]
        let estimate = Size(width: 90, height: 70)
        // The model: uid, lane, main and cross sizes, in order.
        var model: [(uid: Int32, lane: Int, main: Double, cross: Double)] = []
        let gap = StackLength(spacing)
        func laneEnds() -> [StackLength] {
            var ends = Array(repeating: StackLength.zero, count: lanes)
            var seen = Array(repeating: false, count: lanes)
            for e in model {
                ends[e.lane] = (seen[e.lane] ? ends[e.lane] + gap : .zero) + StackLength(e.main)
                seen[e.lane] = true
            }
            return ends
        }
        func shortest() -> Int {
            let ends = laneEnds()
            var best = 0
            for j in 1..<lanes where ends[j] < ends[best] { best = j }
            return best
        }
        func randomItem(_ uid: Int32) -> Item {
            Item(uid: uid, size: Bool.random(using: &rng) ? nil : Size(width: Double(Int.random(in: 10...120, using: &rng)), height: randomStackSize(using: &rng)))
        }
        var items: [Item] = []
        for k in 0..<200 {
            let item = randomItem(Int32(k))
            items.append(item)
            let size = item.size ?? estimate
            let lane = shortest()
            model.append((item.uid, lane, size.height, size.width))
        }
        var s = try StackSection(origin: Point(x: 3, y: 11), spacing: spacing, lanes: lanes, estimate: estimate, items: items)
        var next: Int32 = 1_000
        for step in 0..<300 {
            let n = model.count
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where n > 0:
                let r = Int.random(in: 0..<n, using: &rng)
                let size = Size(width: Double(Int.random(in: 10...120, using: &rng)), height: randomStackSize(using: &rng))
                try s.resize(at: r, to: size)
                model[r].main = size.height
                model[r].cross = size.width
            case 1 where n > 0:
                let r = Int.random(in: 0..<n, using: &rng)
                let run = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                    next += 1
                    return randomItem(next)
                }
                let after = Bool.random(using: &rng)
                try s.insert(run, at: after ? .after(r) : .before(r))
                let lane = model[r].lane
                model.insert(contentsOf: run.map { ($0.uid, lane, ($0.size ?? estimate).height, ($0.size ?? estimate).width) }, at: after ? r + 1 : r)
            case 2:
                let run = (0..<Int.random(in: 1...4, using: &rng)).map { _ in
                    next += 1
                    return randomItem(next)
                }
                try s.insert(run, at: .end)
                for item in run { model.append((item.uid, shortest(), (item.size ?? estimate).height, (item.size ?? estimate).width)) }
            case 3:
                next += 1
                let item = randomItem(next)
                try s.insert([item], at: .start)
                model.insert((item.uid, model.first?.lane ?? 0, (item.size ?? estimate).height, (item.size ?? estimate).width), at: 0)
            case 4 where n > 0:
                let r = Int.random(in: 0..<n, using: &rng)
                #expect(s.remove(at: r).uid == model[r].uid, "seed \(seed) step \(step)")
                model.remove(at: r)
            default:
                break
            }
            guard step % 10 == 0 else { continue }
            // Lanes, and rects from sequential sums per lane.
            #expect(s.tree.entries.map { Int($0.lane) } == model.map(\.lane), "seed \(seed) step \(step): lanes")
            var running = Array(repeating: StackLength.zero, count: lanes)
            var expected: [Rect] = []
            for e in model {
                expected.append(Rect(x: 3 + Double(e.lane) * (s.laneSize + spacing), y: 11 + running[e.lane].value, width: e.cross, height: e.main))
                running[e.lane] += StackLength(e.main) + gap
            }
            #expect((0..<s.count).map { s.rect(at: $0) } == expected, "seed \(seed) step \(step): rects")
            #expect((0..<s.count).allSatisfy { s.rank(ofUID: model[$0].uid) == $0 }, "seed \(seed) step \(step): uids")
        }
    }
}
