import Testing
import ViewportCore
import ViewportTestSupport

/// `ReachTree` against a linear search: for reach lines of every size around the line and level
/// boundaries (0, 1, 15–17, 255–257, 4,095–4,097, 65,537: one to five levels), with repeated
/// values and infinities, every probe finds the first block whose last reach is not below it.
@Suite struct ReachTreeTests {
    /// A non-decreasing line of `count` reaches: runs of equal values, steps of random size, and
    /// +infinity at the end of some lines (an item reaching past every float).
    static func line(_ count: Int, using rng: inout SeededRandom) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(count)
        var value = Float(Int.random(in: -500...500, using: &rng))
        for _ in 0..<count {
            if Int.random(in: 0..<3, using: &rng) != 0 { value += Float(Int.random(in: 0...60, using: &rng)) / 4 }
            out.append(value)
        }
        if count > 2 && Bool.random(using: &rng) {
            for k in (count - Int.random(in: 1...2, using: &rng))..<count { out[k] = .infinity }
        }
        return out
    }

    /// The first block of 16 whose last reach is not below `near`, or the number of blocks.
    static func expectedBlock(_ reach: [Float], _ near: Float) -> Int {
        let blocks = (reach.count + 15) / 16
        return (0..<blocks).first { !(reach[min(reach.count, ($0 + 1) * 16) - 1] < near) } ?? blocks
    }

    @Test func firstBlockMatchesALinearSearch() {
        var rng = SeededRandom(seed: 0x5EED_7EE)
        for count in [0, 1, 2, 15, 16, 17, 31, 33, 255, 256, 257, 4_095, 4_096, 4_097, 65_537] {
            let reach = Self.line(count, using: &rng)
            let tree = reach.withUnsafeBufferPointer { ReachTree(reach: $0) }
            #expect(tree.blockCount == (count + 15) / 16)
            var probes: [Float] = [-.infinity, .infinity, .nan, -1e30, 1e30, 0]
            if let first = reach.first, let last = reach.last {
                probes += [first.nextDown, first, last, last.nextUp]
            }
            // Every value of short lines, a random sample of long ones, and their neighbours.
            let picks = count <= 300 ? Array(reach.indices) : (0..<600).map { _ in Int.random(in: 0..<count, using: &rng) }
            for k in picks {
                probes += [reach[k], reach[k].nextDown, reach[k].nextUp]
            }
            for near in probes {
                let found = tree.firstBlock(reaching: near)
                let expected = Self.expectedBlock(reach, near)
                #expect(found == expected, "\(count) reaches, near \(near): block \(found), expected \(expected)")
                if found != expected { return }
            }
        }
    }

    /// `countBelow` is the number of a line's 16 values below the probe (NaN below nothing, and
    /// nothing below NaN), whatever the line's order.
    @Test func countBelowCountsTheLine() {
        var rng = SeededRandom(seed: 0xC0_0B1E)
        let specials: [Float] = [.nan, .infinity, -.infinity, 0, -0.0, 1, 1.5]
        for _ in 0..<2_000 {
            let values: [Float] = (0..<16).map { _ in
                Int.random(in: 0..<5, using: &rng) == 0
                    ? specials[Int.random(in: 0..<specials.count, using: &rng)] : Float(Int.random(in: -8...8, using: &rng)) / 2
            }
            let probe = Int.random(in: 0..<4, using: &rng) == 0
                ? specials[Int.random(in: 0..<specials.count, using: &rng)] : Float(Int.random(in: -9...9, using: &rng)) / 2
            // At an odd offset too: the loads are unaligned.
            let shifted = [Float(0)] + values
            let counted = values.withUnsafeBufferPointer { $0.baseAddress.map { ReachTree.countBelow(probe, in: $0) } }
            let countedShifted = shifted.withUnsafeBufferPointer { $0.baseAddress.map { ReachTree.countBelow(probe, in: $0 + 1) } }
            let expected = values.filter { $0 < probe }.count
            #expect(counted == expected && countedShifted == expected, "\(values) below \(probe)")
            if counted != expected || countedShifted != expected { return }
        }
    }
}
