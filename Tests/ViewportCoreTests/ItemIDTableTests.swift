import Testing
@testable import ViewportCore

/// The id table's lookup, in item order (small tables) and partitioned by home slot (from
/// `ItemIDTable.partitionedMinimum` ids): the same answers either way.
@Suite struct ItemIDTableTests {
    private func table(_ ids: [String]) -> ItemIDTable {
        var t = ItemIDTable()
        for id in ids { t.append(Array(id.utf8)) }
        return t
    }

    private func index(_ t: ItemIDTable, _ id: String) -> Int? {
        Array(id.utf8).withUnsafeBytes { t.index(ofBytes: $0) }
    }

    @Test(arguments: [10, ItemIDTable.partitionedMinimum - 1, ItemIDTable.partitionedMinimum, 3 * ItemIDTable.partitionedMinimum + 7])
    func everyIDIsFoundAtItsPosition(count: Int) {
        let ids = (0..<count).map { "item-\($0)" }
        var t = table(ids)
        #expect(t.buildLookup() == nil)
        for k in stride(from: 0, to: count, by: max(1, count / 5000)) { #expect(index(t, ids[k]) == k) }
        #expect(index(t, ids[count - 1]) == count - 1)
        #expect(index(t, "item-\(count)") == nil)
        #expect(index(t, "") == nil)
    }

    @Test(arguments: [100, 2 * ItemIDTable.partitionedMinimum])
    func theFirstRepeatedIDIsNamedInItemOrder(count: Int) {
        // Three ids repeat; the answer is the repeat with the smallest later position (what an
        // insertion in item order meets first), whatever the order of their home slots.
        var ids = (0..<count).map { "item-\($0)" }
        ids[count - 1] = "item-3"
        ids[count / 2] = "item-\(count / 2 + 10)"  // repeated later, at count/2 + 10
        ids[count - 2] = "item-1"
        var t = table(ids)
        let pair = t.buildLookup()
        #expect(pair?.0 == count / 2 && pair?.1 == count / 2 + 10)
    }

    @Test func emptyIDsAndSharedPrefixesAreDistinct() {
        var ids = (0..<ItemIDTable.partitionedMinimum).map { String(repeating: "a", count: $0 % 40) + "\($0)" }
        ids.append("")
        var t = table(ids)
        #expect(t.buildLookup() == nil)
        #expect(index(t, "") == ids.count - 1)
        #expect(index(t, ids[12345]) == 12345)
    }
}
