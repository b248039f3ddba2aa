import Testing
@testable import ViewportCore
import ViewportTestSupport

/// `IntMap` against `Dictionary` under random inserts, overwrites and removals, with keys drawn
/// from small ranges so probe runs collide, wrap around the table's end and shift back on removal.
@Suite struct IntMapTests {
    @Test(arguments: [8, 64, 5_000, 1 << 40])
    func randomOperationsMatchADictionary(keyRange: Int) {
        var generator = SeededRandom(seed: UInt64(keyRange))
        var map = IntMap()
        var reference: [Int: Int] = [:]
        for step in 0..<40_000 {
            let key = Int(generator.next() % UInt64(keyRange))
            switch generator.next() % 4 {
            case 0, 1:
                map[key] = step
                reference[key] = step
            case 2:
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            default:
                // A conditional removal, with the value there or another one.
                let value = generator.next() % 2 == 0 ? (reference[key] ?? step) : step &+ 1
                let removes = reference[key] == value
                #expect(map.removeValue(forKey: key, ifEqualTo: value) == removes)
                if removes { reference[key] = nil }
            }
            if step % 997 == 0 {
                #expect(map.count == reference.count)
                for (k, v) in reference { #expect(map[k] == v) }
            }
            #expect(map[key] == reference[key])
        }
        #expect(map.count == reference.count)
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == reference)
        #expect(map.keys.sorted() == reference.keys.sorted())
    }

    /// `removeAll(keepingCapacity:)` empties narrow and wide maps, copies keep their entries, and
    /// the emptied map works like a new one.
    @Test(arguments: [false, true], [false, true])
    func removingAllEmptiesTheMap(wide: Bool, keepingCapacity: Bool) {
        var map = IntMap()
        let big = wide ? 1 << 40 : 0
        for k in 0..<100 { map[k * 7 + big] = k }
        let copy = map
        map.removeAll(keepingCapacity: keepingCapacity)
        #expect(map.isEmpty && map.count == 0)
        #expect(map.keys.isEmpty)
        for k in 0..<100 { #expect(map[k * 7 + big] == nil) }
        #expect(copy.count == 100 && copy[7 + big] == 1)
        for k in 0..<50 { map[k * 3 + big] = k + 1 }
        #expect(map.count == 50)
        for k in 0..<50 { #expect(map[k * 3 + big] == k + 1) }
        #expect(map.removeValue(forKey: 3 + big) == 2)
        #expect(map.count == 49)
    }

    @Test func emptyingAndRefillingKeepsLookupsExact() {
        var map = IntMap()
        for round in 0..<5 {
            for k in 0..<1_000 { map[k * 7] = k + round }
            #expect(map.count == 1_000)
            for k in stride(from: 999, through: 0, by: -1) { #expect(map.removeValue(forKey: k * 7) == k + round) }
            #expect(map.isEmpty)
            #expect(map[0] == nil)
        }
    }

    /// Narrow slots hold keys below 2^32 − 1 and values below 2^32; the first pair that does not
    /// fit (at any point of the map's life) moves every entry to wide slots, where they all stay
    /// exact; keys too large for narrow slots are absent from a narrow map, not truncated.
    @Test(arguments: [0, 1, 500, 3_000])
    func aPairTooWideForNarrowSlotsWidensTheMap(after steps: Int) {
        var generator = SeededRandom(seed: UInt64(steps) &+ 7)
        var map = IntMap()
        var reference: [Int: Int] = [:]
        let edges = [0xffff_fffe, 0xffff_ffff, 1 << 32, Int.max]
        for key in edges { #expect(map[key] == nil && map.removeValue(forKey: key) == nil) }
        for step in 0..<6_000 {
            let key: Int
            let value: Int
            if step == steps {
                // Alternately a key and a value that do not fit; the edge that does fit first.
                map[0xffff_fffe] = 0xffff_ffff
                reference[0xffff_fffe] = 0xffff_ffff
                (key, value) = steps % 2 == 0 ? (0xffff_ffff, 1) : (5, 1 << 32)
            } else {
                (key, value) = (Int(generator.next() % 2_000), Int(generator.next() % 1_000_000))
            }
            if step != steps, generator.next() % 4 == 0 {
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                map[key] = value
                reference[key] = value
            }
            #expect(map[key] == reference[key])
            if step % 499 == 0 || step == steps {
                #expect(map.count == reference.count)
                for (k, v) in reference { #expect(map[k] == v) }
                for key in edges { #expect(map[key] == reference[key]) }
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == reference)
        #expect(map.keys.sorted() == reference.keys.sorted())
    }

    @Test func copiesAreIndependent() {
        var a = IntMap()
        a[1] = 10
        var b = a
        b[1] = 20
        b[2] = 30
        #expect(a[1] == 10 && a[2] == nil && a.count == 1)
        #expect(b[1] == 20 && b[2] == 30 && b.count == 2)
    }

    /// The same-item key is one to one over items and classes below 2^31, and narrow (below
    /// 2^32 − 1) for the first 16 M items of the first 255 classes.
    @Test func pooledItemKeysRoundTripAndStayNarrowWhereTheyCan() {
        let items = [0, 1, 255, 256, (1 << 24) - 1, 1 << 24, (1 << 31) - 1]
        let classes = [0, 1, 254, 255, 256, 65_535, (1 << 31) - 1]
        var seen = Set<Int>()
        for item in items {
            for reuseClass in classes {
                let packed = PooledItemKey(item: item, reuseClass: reuseClass).packed
                #expect(packed >= 0)
                #expect(seen.insert(packed).inserted)
                let back = PooledItemKey(packed: packed)
                #expect(back.item == item && back.reuseClass == reuseClass)
                #expect((packed < 0xffff_ffff) == (item < 1 << 24 && reuseClass < 255))
            }
        }
    }
}
