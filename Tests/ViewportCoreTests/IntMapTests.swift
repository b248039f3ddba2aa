import Testing
import ViewportCore
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
            switch generator.next() % 3 {
            case 0, 1:
                map[key] = step
                reference[key] = step
            default:
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
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

    @Test func copiesAreIndependent() {
        var a = IntMap()
        a[1] = 10
        var b = a
        b[1] = 20
        b[2] = 30
        #expect(a[1] == 10 && a[2] == nil && a.count == 1)
        #expect(b[1] == 20 && b[2] == 30 && b.count == 2)
    }
}
