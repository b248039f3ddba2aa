import Testing
import ViewportCore
import ViewportTestSupport

struct LayoutTests {
    @Test func validationNamesTheItemAndTheRule() throws {
        var builder = LayoutBuilder()
        #expect(throws: LayoutError.emptyID(index: 0)) { try builder.append(id: "", rect: .zero) }
        #expect(throws: LayoutError.idTooLong(index: 0, bytes: 257)) { try builder.append(id: String(repeating: "x", count: 257), rect: .zero) }
        try builder.append(id: String(repeating: "é", count: 128), rect: .zero)  // 256 bytes is fine
        #expect(throws: LayoutError.negativeSize(index: 1, id: "n")) { try builder.append(id: "n", rect: Rect(x: 0, y: 0, width: -1, height: 1)) }
        #expect(throws: LayoutError.nonFiniteRect(index: 1, id: "f")) { try builder.append(id: "f", rect: Rect(x: .infinity, y: 0, width: 1, height: 1)) }
        #expect(throws: LayoutError.extentOverflow(index: 1, id: "o")) {
            try builder.append(id: "o", rect: Rect(x: 0, y: 1.7976931348623157e308, width: 1, height: 1.0e307))
        }
        #expect(throws: LayoutError.invalidContentSize(Size(width: -1, height: 0))) { try builder.setContentSize(Size(width: -1, height: 0)) }
        try builder.append(id: "a", rect: .zero)
        try builder.append(id: "a", rect: .zero)
        #expect(throws: LayoutError.duplicateID(id: "a", first: 1, second: 2)) { try builder.build() }
        var limited = LayoutBuilder(maxItems: 1)
        try limited.append(id: "1", rect: .zero)
        #expect(throws: LayoutError.tooManyItems(count: 2, limit: 1)) { try limited.append(id: "2", rect: .zero) }
    }

    @Test func defaultContentSizeIsTheItemsExtent() throws {
        let layout = try makeLayout([
            ItemSpec(id: "a", rect: Rect(x: 25, y: 15, width: 156, height: 150)),
            ItemSpec(id: "b", rect: Rect(x: 25, y: 860, width: 325, height: 150)),
        ])
        #expect(layout.contentSize == Size(width: 350, height: 1010))
        #expect(!layout.hasExplicitContentSize)
    }

    @Test func identicalLayoutsShareADigestAndDifferentOnesDoNot() throws {
        let base = [ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: nil),
                    ItemSpec(id: "b", rect: Rect(x: 0, y: 10, width: 10, height: 10), reuse: "card")]
        let one = try makeLayout(base)
        var emptyReuse = base
        emptyReuse[0].reuse = ""
        let same = try makeLayout(emptyReuse, contentSize: Size(width: 10, height: 20))
        #expect(one.digest == same.digest)
        #expect(one.isIdentical(to: same))
        #expect(one.digest.count == 32)
        var moved = base
        moved[1].rect.y = 11
        let d798 = try makeLayout(moved).digest
        #expect(d798 != one.digest)
        let d34 = try makeLayout(Array(base.reversed())).digest
        #expect(d34 != one.digest)
        let d740 = try makeLayout(base, contentSize: Size(width: 10, height: 30)).digest
        #expect(d740 != one.digest)
        var renamed = base
        renamed[1].reuse = "tile"
        let d479 = try makeLayout(renamed).digest
        #expect(d479 != one.digest)
    }

    @Test func idLookupFindsEveryItem() throws {
        var rng = SeededRandom(seed: 11)
        let specs = randomLayoutSpecs(.scattered, count: 500, using: &rng)
        let layout = try makeLayout(specs)
        for (i, spec) in specs.enumerated() {
            #expect(layout.item(withID: spec.id) == i)
            #expect(layout.id(at: i) == spec.id)
        }
        #expect(layout.item(withID: "nope") == nil)
    }

    @Test(arguments: LayoutKind.allCases)
    func indexQueriesMatchBruteForce(kind: LayoutKind) throws {
        var rng = SeededRandom(seed: UInt64(kind.rawValue.count))
        for count in [0, 1, 15, 16, 17, 257, 3000] {
            let specs = randomLayoutSpecs(kind, count: count, using: &rng)
            let layout = try makeLayout(specs)
            for _ in 0..<200 {
                let x = Double(Int.random(in: -200...3000, using: &rng))
                let y = Double(Int.random(in: -200...6000, using: &rng))
                let region = SentRegion(minX: x, minY: y, maxX: x + Double(Int.random(in: 0...800, using: &rng)), maxY: y + Double(Int.random(in: 0...800, using: &rng)))
                #expect(layout.items(in: region.region) == oracle(specs, region))
            }
        }
    }

    /// Reuse classes are kept uniform (no storage), one byte each, or four bytes each
    /// (`ReuseClassStore`): in every form each item reads back its own identifier, -1 (never
    /// reused) included, across the switch from one form to the next, and equal layouts stay
    /// identical.
    @Test(arguments: ["uniform", "narrow", "wide", "late wide"])
    func reuseClassesComeBackInEveryStorageForm(form: String) throws {
        let n = 2000
        func reuse(_ k: Int) -> String? {
            switch form {
            case "uniform": return "row"
            case "narrow": return k % 11 == 3 ? nil : "c\(k % 7)"
            case "wide": return "c\(k % 300)"
            default: return k < 1500 ? (k % 13 == 0 ? nil : "c\(k % 5)") : "c\(k)"
            }
        }
        let specs = (0..<n).map { ItemSpec(id: "i\($0)", rect: Rect(x: 0, y: Double($0) * 10, width: 100, height: 10), reuse: reuse($0)) }
        let layout = try makeLayout(specs)
        for k in 0..<n {
            #expect(layout.reuseName(of: k) == reuse(k), "item \(k)")
            #expect((layout.reuseClass(of: k) == -1) == (reuse(k) == nil), "item \(k)")
        }
        #expect(try makeLayout(specs).isIdentical(to: layout))
        var other = specs
        other[n - 1].reuse = other[n - 1].reuse == "row" ? "cell" : "row"
        #expect(try !makeLayout(other).isIdentical(to: layout))
    }

    /// Rects are kept as `Float`s while every coordinate is exact in `Float`, else as `Double`s
    /// (`RectStore`): either way each rect comes back bit for bit, and the index finds what a
    /// brute force finds.
    @Test(arguments: [false, true])
    func rectsComeBackExactlyInBothStorageForms(inexact: Bool) throws {
        var rng = SeededRandom(seed: 5)
        var specs = randomLayoutSpecs(.scattered, count: 3000, using: &rng)
        for k in specs.indices {
            // Quarters and -0 are exact in Float; 0.1 and 2^24 + 1 are not (the store widens at
            // the first of those, two thirds in).
            specs[k].rect.x += Double(k % 4) / 4
            if k % 7 == 0 { specs[k].rect.width = -0.0 }
            if inexact && k >= 2000 && k % 5 == 0 { specs[k].rect.y += k % 2 == 0 ? 0.1 : 16_777_217 - specs[k].rect.y }
        }
        let layout = try makeLayout(specs)
        for (k, spec) in specs.enumerated() {
            let r = layout.rect(at: k)
            #expect(r.x.bitPattern == spec.rect.x.bitPattern && r.y.bitPattern == spec.rect.y.bitPattern)
            #expect(r.width.bitPattern == spec.rect.width.bitPattern && r.height.bitPattern == spec.rect.height.bitPattern)
        }
        for _ in 0..<300 {
            let x = Double(Int.random(in: -200...2000, using: &rng)) + 0.25
            let y = Double(Int.random(in: -200...3500, using: &rng)) + 0.1
            let region = SentRegion(minX: x, minY: y, maxX: x + Double(Int.random(in: 0...800, using: &rng)), maxY: y + Double(Int.random(in: 0...800, using: &rng)))
            #expect(layout.items(in: region.region) == oracle(specs, region))
        }
        let big = try makeLayout([ItemSpec(id: "far", rect: Rect(x: 0, y: 16_777_217, width: 1, height: 1))])
        #expect(big.items(in: Region(minX: 0, minY: 16_777_216.5, maxX: 1, maxY: 16_777_217.5)) == [0])
        #expect(big.items(in: Region(minX: 0, minY: 16_777_218.5, maxX: 1, maxY: 16_777_219)) == [])
    }

    @Test func edgeTouchingItemsAreOutAndZeroSizeItemsInsideAreIn() throws {
        let layout = try makeLayout([
            ItemSpec(id: "above", rect: Rect(x: 0, y: 0, width: 10, height: 10)),
            ItemSpec(id: "dot", rect: Rect(x: 5, y: 15, width: 0, height: 0)),
            ItemSpec(id: "edge-dot", rect: Rect(x: 0, y: 12, width: 0, height: 0)),
            ItemSpec(id: "below", rect: Rect(x: 0, y: 20, width: 10, height: 10)),
        ])
        #expect(layout.items(in: Region(minX: 0, minY: 10, maxX: 10, maxY: 20)) == [1])
    }
}
