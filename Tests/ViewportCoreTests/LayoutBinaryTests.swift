import Testing
import ViewportCore
import ViewportTestSupport

/// The binary form of layouts (what a shared store keeps): exact round trips, compactness, and
/// refusal of anything else.
struct LayoutBinaryTests {
    /// Every item, bit for bit (so -0 stays -0 and fractions stay exact).
    static func expectSameItems(_ a: Layout, _ b: Layout, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.count == b.count, sourceLocation: sourceLocation)
        #expect(a.digest == b.digest, sourceLocation: sourceLocation)
        #expect(a.isIdentical(to: b), sourceLocation: sourceLocation)
        #expect(a.reuseNames == b.reuseNames, sourceLocation: sourceLocation)
        #expect(a.stickyItems == b.stickyItems, sourceLocation: sourceLocation)
        #expect(a.hasExplicitContentSize == b.hasExplicitContentSize, sourceLocation: sourceLocation)
        #expect(a.hasGeneratedSections == b.hasGeneratedSections, sourceLocation: sourceLocation)
        #expect(a.contentSize.width.bitPattern == b.contentSize.width.bitPattern, sourceLocation: sourceLocation)
        for item in 0..<min(a.count, b.count) {
            let (r, s) = (a.rect(at: item), b.rect(at: item))
            #expect(
                [r.x, r.y, r.width, r.height].map(\.bitPattern) == [s.x, s.y, s.width, s.height].map(\.bitPattern),
                "item \(item)", sourceLocation: sourceLocation)
            #expect(a.id(at: item) == b.id(at: item), sourceLocation: sourceLocation)
            #expect(a.reuseClass(of: item) == b.reuseClass(of: item), sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: LayoutKind.allCases, 0..<4)
    func explicitLayoutsSurviveTheRoundTripExactly(kind: LayoutKind, seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 977 &+ UInt64(kind.rawValue.count))
        print("seed \(seed) kind \(kind)")
        var specs = randomLayoutSpecs(kind, count: [0, 1, 7, 500][seed], using: &rng)
        // Numbers the compact form must not round: fractions, -0, huge, negative.
        for k in specs.indices where Int.random(in: 0..<5, using: &rng) == 0 {
            specs[k].rect.x = [-0.0, 0.1, -3.75, 1e300, -9_007_199_254_740_993, 9_007_199_254_740_992].randomElement(using: &rng) ?? 0
        }
        var builder = LayoutBuilder()
        for (k, spec) in specs.enumerated() {
            try builder.append(id: spec.id, rect: spec.rect, reuse: spec.reuse, sticky: k % 7 == 3)
        }
        if seed % 2 == 1 { try builder.setContentSize(Size(width: 1234.5, height: 99)) }
        let layout = try builder.build()
        let decoded = try Layout.decodeBinary(layout.binaryEncoded())
        Self.expectSameItems(layout, decoded)
    }

    @Test(arguments: 0..<12)
    func generatedSectionsStayDescriptions(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 4242)
        print("seed \(seed)")
        let (specs, stack) = GeneratedLayoutTests.randomSections(using: &rng)
        let layout = try GeneratedLayoutTests.build(specs, stack)
        let bytes = layout.binaryEncoded()
        let decoded = try Layout.decodeBinary(bytes)
        Self.expectSameItems(layout, decoded)
    }

    @Test func aLongListTakesAFewBytesPerItem() throws {
        let n = 200_000
        var builder = LayoutBuilder(expectedCount: n)
        for i in 0..<n {
            try builder.append(id: "item-\(i)", rect: Rect(x: 0, y: Double(i) * 50, width: 375, height: 50), reuse: i % 10 == 0 ? "ad" : "row")
        }
        let layout = try builder.build()
        let bytes = layout.binaryEncoded()
        // id suffix 3, reuse 1, rect 5 (x, width, height unchanged: 1 byte each; y + 50: 2).
        #expect(bytes.count < 10 * n, "\(bytes.count) bytes")
        let decoded = try Layout.decodeBinary(bytes)
        #expect(decoded.digest == layout.digest)
        #expect(decoded.rect(at: n - 1) == Rect(x: 0, y: Double(n - 1) * 50, width: 375, height: 50))
    }

    @Test func truncatedOrCorruptBytesAreRefusedWithoutCrashing() throws {
        var rng = SeededRandom(seed: 99)
        let layout = try makeLayout(randomLayoutSpecs(.scattered, count: 40, using: &rng))
        let bytes = layout.binaryEncoded()
        for length in 0..<bytes.count {
            #expect(throws: BinaryFormatError.self) { try Layout.decodeBinary(Array(bytes[..<length])) }
        }
        for _ in 0..<2000 {
            var corrupt = bytes
            let k = Int.random(in: 0..<corrupt.count, using: &rng)
            corrupt[k] ^= UInt8.random(in: 1...255, using: &rng)
            // Either refused, or a valid layout (a flipped coordinate); never a crash.
            if let decoded = try? Layout.decodeBinary(corrupt) { #expect(decoded.count <= layout.count + 1) }
        }
        #expect(throws: BinaryFormatError.unsupported("stored layout version 9 (this build reads 3)")) {
            var newer = bytes
            newer[3] = 9
            return try Layout.decodeBinary(newer)
        }
        #expect(throws: BinaryFormatError.self) { try Layout.decodeBinary(Array("{\"items\":[]}".utf8)) }
    }

    @Test func moreItemsThanAllowedAreRefused() throws {
        var rng = SeededRandom(seed: 5)
        let layout = try makeLayout(randomLayoutSpecs(.grid, count: 30, using: &rng))
        #expect(throws: BinaryFormatError.self) { try Layout.decodeBinary(layout.binaryEncoded(), maxItems: 29) }
        #expect(try Layout.decodeBinary(layout.binaryEncoded(), maxItems: 30).count == 30)
    }
}
