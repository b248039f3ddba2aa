import Testing
@testable import ViewportCore
import ViewportTestSupport

/// `RectStore`'s three forms (`Float`s as they are, `Float` offsets from per-block bases,
/// `Double`s): every rect comes back bit for bit whichever form holds it, layouts past 2^24 pt
/// stay compact, and the index over a store with bases finds what brute force finds.
@Suite struct RectStoreTests {
    /// The rects `store` reads back that differ from `rects` in any bit.
    static func mismatches(_ store: RectStore, _ rects: [Rect]) -> [Int] {
        guard store.count == rects.count else { return [-1] }
        return rects.indices.filter { k in
            let (s, r) = (store[k], rects[k])
            return s.x.bitPattern != r.x.bitPattern || s.y.bitPattern != r.y.bitPattern || s.width.bitPattern != r.width.bitPattern
                || s.height.bitPattern != r.height.bitPattern
        }
    }

    /// Lists past 2^24 pt keep 16 bytes a rect (with bases), in every direction and with
    /// fractions; lists within it keep the form without bases.
    @Test func tallListsStayCompact() {
        let rows = (0..<800_000).map { Rect(x: 0, y: Double($0) * 50, width: 375, height: 50) }  // to 40M pt: past 2^25, odd rows are not Floats
        let quarters = (0..<400_000).map { Rect(x: 0.25, y: Double($0) * 50.25 + 0.5, width: 374.75, height: 50.25) }
        let above = (0..<800_000).map { Rect(x: 0, y: -Double($0) * 50 - 50, width: 375, height: 50) }
        let row = (0..<400_000).map { Rect(x: Double($0) * 60 + 0.5, y: 3, width: 60, height: 90) }
        for (name, rects) in [("rows", rows), ("quarters", quarters), ("rows above 0", above), ("a row", row)] {
            let store = RectStore(rects)
            #expect(store.form == .floatsWithBases, "\(name)")
            #expect(store.memoryBytes <= rects.count * 16 + 32 * 1024, "\(name): \(store.memoryBytes) bytes")
            #expect(Self.mismatches(store, rects).isEmpty, "\(name)")
            #expect(store == RectStore(rects), "\(name)")
        }
        let short = Array(rows.prefix(600_000))  // to 30M pt: even numbers, Floats still
        let plain = RectStore(short)
        #expect(plain.form == .floats)
        #expect(Self.mismatches(plain, short).isEmpty)
        #expect(plain != RectStore(rows))
    }

    /// A block that starts exact as it is and then meets a rect that is not gets bases from its
    /// first rect, its rects written again; a block whose rects cannot share bases widens the
    /// store; -0 comes back as -0 in every form.
    @Test func blocksTakeBasesWhenTheyNeedThem() {
        var rects = (0..<1_500).map { Rect(x: 0, y: 16_000_000 + Double($0) * 2, width: 375, height: 2) }
        rects[1_100] = Rect(x: -0.0, y: 16_777_217, width: -0.0, height: 1)  // past 2^24, odd
        let based = RectStore(rects)
        #expect(based.form == .floatsWithBases)
        #expect(Self.mismatches(based, rects).isEmpty)
        var far = rects
        far[1_200] = Rect(x: 0, y: 1e12 + 1, width: 1, height: 1)  // 2^24 away from its block's base
        let wide = RectStore(far)
        #expect(wide.form == .doubles)
        #expect(Self.mismatches(wide, far).isEmpty)
        var fraction = rects
        fraction[7] = Rect(x: 0.1, y: 5, width: 1, height: 1)  // exact in no form
        #expect(RectStore(fraction).form == .doubles)
        #expect(Self.mismatches(RectStore(fraction), fraction).isEmpty)
        let zeros = [Rect(x: -0.0, y: -0.0, width: -0.0, height: 0), Rect(x: 0, y: 1, width: 2, height: 3)]
        #expect(RectStore(zeros).form == .floats)
        #expect(Self.mismatches(RectStore(zeros), zeros).isEmpty)
    }

    /// Random rects from numbers every form meets (small and large integers, quarters, -0,
    /// negatives, 2^24 ± 1, numbers exact in no `Float` form): each comes back bit for bit, two
    /// stores of the same rects are equal, and rects exact as `Float`s keep the form without bases.
    @Test func randomRectsComeBackBitForBit() {
        var rng = SeededRandom(seed: 41)
        let pool: [Double] = [0, -0.0, 1, 0.25, 44, 375, 4_095.5, 4_096, 16_777_215, 16_777_216, 16_777_217, 33_554_433, 1e9 + 0.5, -7, -16_777_217, 0.1, 1e300, 1e-300]
        for _ in 0..<300 {
            let count = Int.random(in: 1...2_500, using: &rng)
            let spread = Double(Int.random(in: 0...3, using: &rng)) * 1e7
            var rects: [Rect] = []
            for k in 0..<count {
                func number() -> Double {
                    Bool.random(using: &rng) ? pool.randomElement(using: &rng) ?? 0 : Double(k) * 10 + spread + Double(Int.random(in: 0...3, using: &rng)) / 4
                }
                rects.append(Rect(x: number(), y: number(), width: abs(number()), height: abs(number())))
            }
            let store = RectStore(rects)
            #expect(Self.mismatches(store, rects).isEmpty)
            #expect(store == RectStore(rects))
            let plain = rects.allSatisfy { [$0.x, $0.y, $0.width, $0.height].allSatisfy(RectStore.isExactFloat) }
            if plain { #expect(store.form == .floats) }
        }
    }

    /// Queries over a store with bases (a sorted run and an R-tree, past 2^24 pt, with boxes
    /// whose edges fall on the rects' edges and one ulp either side) report every rect that
    /// touches the box, with its exact rect; what more they report lies within a few ulps of it.
    @Test func queriesOverBasesMatchBruteForce() {
        var rng = SeededRandom(seed: 43)
        let start = 16_000_000.0
        let feed = SpatialIndexTests.feed(30_000, from: start, step: 0.25, using: &rng)
        var scattered = feed
        scattered.shuffle(using: &rng)
        for (name, rects, sorted) in [("feed", feed, true), ("scattered", scattered, false)] {
            #expect(RectStore(rects).form == .floatsWithBases, "\(name)")
            let index = SpatialIndex(rects: ContiguousArray(rects))
            #expect(index.isSortedRun == sorted, "\(name)")
            let maxY = feed.map { $0.y + $0.height }.max() ?? start
            for q in 0..<600 {
                var y0 = start - 100 + Double(Int.random(in: 0...Int(maxY - start) + 100, using: &rng))
                var y1 = y0 + Double(Int.random(in: 0...1_500, using: &rng))
                var (x0, x1) = (Double(Int.random(in: -50...300, using: &rng)), 0.0)
                x1 = x0 + Double(Int.random(in: 0...400, using: &rng))
                if q % 3 != 0, let r = rects.randomElement(using: &rng) {
                    // Edges on a rect's edges, or one ulp either side of them.
                    let nudge = [{ (v: Double) in v }, { $0.nextUp }, { $0.nextDown }]
                    y0 = (nudge.randomElement(using: &rng) ?? { $0 })(Bool.random(using: &rng) ? r.y + r.height : r.y)
                    y1 = max(y0, (nudge.randomElement(using: &rng) ?? { $0 })(Bool.random(using: &rng) ? r.y : r.y + r.height))
                    x0 = (nudge.randomElement(using: &rng) ?? { $0 })(r.x + r.width)
                    x1 = max(x0, x0 + Double(Int.random(in: 0...200, using: &rng)))
                }
                let expected = SpatialIndexTests.touching(rects, x0, y0, x1, y1)
                let prefetched = index.prefetchQuery(minX: x0, minY: y0)?.start
                for queryStart in [nil, prefetched] {
                    var found: [Int] = []
                    var wrongRect = false
                    index.forEachCandidate(minX: x0, minY: y0, maxX: x1, maxY: y1, start: queryStart) { k, rect in
                        found.append(k)
                        if rect != rects[k] { wrongRect = true }
                    }
                    #expect(!wrongRect, "\(name)")
                    let near = 1e-9 * (abs(y0) + abs(y1) + 1)
                    let extra = Set(found).subtracting(expected)
                    #expect(Set(expected).isSubset(of: Set(found)), "\(name) [\(x0), \(y0)] – [\(x1), \(y1)] missed \(Set(expected).subtracting(found))")
                    #expect(extra.allSatisfy { !SpatialIndexTests.touching([rects[$0]], x0 - near, y0 - near, x1 + near, y1 + near).isEmpty }, "\(name)")
                    #expect(found.count == Set(found).count, "\(name): an item twice")
                }
            }
        }
    }
}
