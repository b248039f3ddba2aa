import Testing
import ViewportCore
import ViewportTestSupport

/// `SpatialIndex` in both of its forms (a sorted run, an R-tree) against brute force: every query
/// reports exactly the items whose rect touches the closed query box, each once, with its rect.
@Suite struct SpatialIndexTests {
    static func touching(_ rects: [Rect], _ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double) -> [Int] {
        rects.indices.filter { i in
            let r = rects[i]
            return r.x <= maxX && r.x + r.width >= minX && r.y <= maxY && r.y + r.height >= minY
        }
    }

    /// A two-column feed with a full-width banner every 20 items (as viewport-bench's), from
    /// `start` down, its card heights multiples of `step` up to 240.
    static func feed(_ count: Int, from start: Double = 0, step: Double = 1, using rng: inout SeededRandom) -> [Rect] {
        var rects: [Rect] = []
        var columnY = [start, start]
        for i in 0..<count {
            if i % 20 == 19 {
                let y = max(columnY[0], columnY[1])
                rects.append(Rect(x: 0, y: y, width: 375, height: 120))
                columnY = [y + 130, y + 130]
            } else {
                let column = columnY[0] <= columnY[1] ? 0 : 1
                let height = Double(Int.random(in: 0...Int(240 / step), using: &rng)) * step
                rects.append(Rect(x: column == 0 ? 5 : 190, y: columnY[column], width: 180, height: height))
                columnY[column] += height + Double(Int.random(in: 0...10, using: &rng))
            }
        }
        return rects
    }

    static func layouts(using rng: inout SeededRandom) -> [(name: String, rects: [Rect], sorted: Bool)] {
        var out: [(name: String, rects: [Rect], sorted: Bool)] = []
        for kind in LayoutKind.allCases {
            let rects = randomLayoutSpecs(kind, count: 3_000, using: &rng).map(\.rect)
            out.append((kind.rawValue, rects, kind != .scattered))
        }
        out.append(("feed", feed(5_000, using: &rng), true))
        // 40 columns: every scan would pass ~40 items beside the query; an R-tree.
        out.append(("wide grid", (0..<4_000).map { Rect(x: Double($0 % 40) * 50, y: Double($0 / 40) * 50, width: 50, height: 50) }, false))
        // One item as tall as the list: every scan would start at it; an R-tree.
        var tall = (0..<3_000).map { Rect(x: 0, y: Double($0) * 44, width: 375, height: 44) }
        tall[5] = Rect(x: 0, y: 220, width: 375, height: 200_000)
        out.append(("list with a tall item", tall, false))
        // Out of order along both axes; an R-tree.
        out.append(("reversed list", (0..<3_000).reversed().map { Rect(x: 0, y: Double($0) * 44, width: 375, height: 44) }, false))
        // Short lists around 16 and 32 entries (a cache line of the sorted run's reach array):
        // the binary search's first and last steps.
        for n in [2, 15, 16, 17, 31, 32, 33, 257] {
            out.append(("list of \(n)", (0..<n).map { Rect(x: 0, y: Double($0) * 44, width: 375, height: Double($0 % 3) * 22) }, true))
        }
        // Runs of 12 items with the same edges: equal reaches across the 16-reach blocks the
        // search's first step picks from.
        let runs: [Rect] = (0..<1_000).map { (i: Int) -> Rect in
            let run = Double(i / 12)
            return Rect(x: Double(i % 5), y: run * 44, width: 10, height: Double(i / 12 % 2) * 44)
        }
        out.append(("list with runs of equal edges", runs, true))
        out.append(("empty", [], true))
        out.append(("one item", [Rect(x: 3, y: 4, width: 5, height: 6)], true))
        return out
    }

    /// How far queries range: 100 past the rects' far edges (100 for no rects).
    static func bounds(of rects: [Rect]) -> (maxX: Double, maxY: Double) {
        ((rects.map { $0.x + $0.width }.max() ?? 100) + 100, (rects.map { $0.y + $0.height }.max() ?? 100) + 100)
    }

    /// A query box starting anywhere from -100 to `bounds`, up to 800 wide and 1,500 high.
    static func randomBox(within bounds: (maxX: Double, maxY: Double), using rng: inout SeededRandom) -> (Double, Double, Double, Double) {
        let x0 = Double(Int.random(in: -100...Int(bounds.maxX), using: &rng))
        let y0 = Double(Int.random(in: -100...Int(bounds.maxY), using: &rng))
        let x1 = x0 + Double(Int.random(in: 0...800, using: &rng))
        let y1 = y0 + Double(Int.random(in: 0...1_500, using: &rng))
        return (x0, y0, x1, y1)
    }

    @Test func queriesMatchBruteForceInBothForms() {
        var rng = SeededRandom(seed: 13)
        for layout in Self.layouts(using: &rng) {
            let index = SpatialIndex(rects: ContiguousArray(layout.rects))
            #expect(index.isSortedRun == layout.sorted, "\(layout.name)")
            let bounds = Self.bounds(of: layout.rects)
            for _ in 0..<300 {
                let (x0, y0, x1, y1) = Self.randomBox(within: bounds, using: &rng)
                var found: [Int] = []
                index.forEachCandidate(minX: x0, minY: y0, maxX: x1, maxY: y1) { k, rect in
                    found.append(k)
                    #expect(rect == layout.rects[k], "\(layout.name) item \(k)")
                }
                #expect(found.sorted() == Self.touching(layout.rects, x0, y0, x1, y1), "\(layout.name) [\(x0), \(y0)] – [\(x1), \(y1)]")
            }
        }
    }

    /// A query given the start `prefetchQuery` found for its near edge reports what it reports
    /// without one; a start found for another edge, or by another index, changes nothing; an
    /// R-tree has none to give.
    @Test func queriesFromAPrefetchedStartMatchBruteForce() {
        var rng = SeededRandom(seed: 29)
        let layouts = Self.layouts(using: &rng)
        let other = SpatialIndex(rects: ContiguousArray((0..<10_000).map { Rect(x: 0, y: Double($0) * 7, width: 375, height: 7) }))
        for layout in layouts {
            let index = SpatialIndex(rects: ContiguousArray(layout.rects))
            let bounds = Self.bounds(of: layout.rects)
            let maxY = bounds.maxY
            for _ in 0..<300 {
                let (x0, y0, x1, y1) = Self.randomBox(within: bounds, using: &rng)
                let expected = Self.touching(layout.rects, x0, y0, x1, y1)
                let prefetched = index.prefetchQuery(minX: x0, minY: y0)
                if !index.isSortedRun { #expect(prefetched == nil, "\(layout.name)") }
                let elsewhere = index.prefetchQuery(minX: x0, minY: Double(Int.random(in: -100...Int(maxY), using: &rng)))
                let foreign = other.prefetchQuery(minX: x0, minY: y0)
                for start in [prefetched?.start, elsewhere?.start, foreign?.start] {
                    var found: [Int] = []
                    index.forEachCandidate(minX: x0, minY: y0, maxX: x1, maxY: y1, start: start) { k, rect in
                        found.append(k)
                        #expect(rect == layout.rects[k], "\(layout.name) item \(k)")
                    }
                    #expect(found.sorted() == expected, "\(layout.name) [\(x0), \(y0)] – [\(x1), \(y1)]")
                }
                // The block's first position is where the query's scan may begin: never after
                // the first item it reports.
                if let first = prefetched?.first, let earliest = expected.min() {
                    #expect(first <= earliest, "\(layout.name)")
                }
            }
        }
    }

    /// A sorted run reports the numbers it was given, like the R-tree.
    @Test func sortedRunReportsGivenNumbers() {
        let rects = ContiguousArray((0..<500).map { Rect(x: 0, y: Double($0) * 10, width: 100, height: 10) })
        let index = SpatialIndex(rects: rects, numbers: ContiguousArray((0..<500).map { Int32(1_000 + $0) }))
        #expect(index.isSortedRun)
        var found: [Int] = []
        index.forEachCandidate(minX: 0, minY: 101, maxX: 100, maxY: 119) { k, _ in found.append(k) }
        #expect(found.sorted() == [1_010, 1_011])
    }
}
