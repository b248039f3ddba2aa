import Testing
@testable import ViewportCore
import ViewportTestSupport

/// `ShownViews` against `Dictionary` under random inserts, overwrites, removals and emptying,
/// with counts that cross `orderedLimit` both ways, so both forms and the moves between them run.
@Suite struct ShownViewsTests {
    @Test(arguments: [16, 100, 400, 1 << 40])
    func randomOperationsMatchADictionary(itemRange: Int) {
        var generator = SeededRandom(seed: UInt64(itemRange) &+ 7)
        var shown = ShownViews()
        var reference: [Int: Int] = [:]
        var sawOrdered = false
        var sawTable = false
        for step in 0..<30_000 {
            let item = Int(generator.next() % UInt64(itemRange))
            // Phases that grow past the limit, then shrink below a quarter of it.
            let growing = (step / 3_000) % 2 == 0
            switch generator.next() % 10 {
            case 0..<5 where growing, 0..<2:
                let view = generator.next() % 50 == 0 ? (1 << 33) + step : step
                shown[item] = view
                reference[item] = view
            case 9 where generator.next() % 200 == 0:
                shown.removeAll(keepingCapacity: generator.next() % 2 == 0)
                reference.removeAll()
            default:
                #expect(shown.removeValue(forKey: item) == reference.removeValue(forKey: item))
            }
            if shown.isOrdered { sawOrdered = true } else { sawTable = true }
            #expect(shown[item] == reference[item])
            #expect(shown.count == reference.count)
            if step % 499 == 0 {
                for (k, v) in reference { #expect(shown[k] == v) }
                #expect(Dictionary(uniqueKeysWithValues: shown.map { ($0.key, $0.value) }) == reference)
                if shown.isOrdered {
                    // The ordered form iterates in item order, what `shownItems` relies on.
                    #expect(shown.keys == reference.keys.sorted())
                    #expect(shown.count <= ShownViews.orderedLimit)
                }
            }
        }
        #expect(sawOrdered)
        if itemRange > ShownViews.orderedLimit { #expect(sawTable) }
    }

    /// A screenful stays ordered; one item past the limit moves to the hash form, and removals
    /// move it back at a quarter of the limit; a wide pair moves it to the hash form at once.
    @Test func formsFollowTheCount() {
        var shown = ShownViews()
        for item in (0..<ShownViews.orderedLimit).reversed() { shown[item * 3] = item }
        #expect(shown.isOrdered && shown.count == ShownViews.orderedLimit)
        #expect(shown.keys == (0..<ShownViews.orderedLimit).map { $0 * 3 })
        shown[1] = 99
        #expect(!shown.isOrdered && shown.count == ShownViews.orderedLimit + 1 && shown[1] == 99)
        var item = 0
        while shown.count > ShownViews.orderedLimit / 4 + 1 {
            shown[item * 3] = nil
            item += 1
        }
        #expect(!shown.isOrdered)
        shown[item * 3] = nil
        #expect(shown.isOrdered && shown.count == ShownViews.orderedLimit / 4)
        #expect(shown.keys == shown.keys.sorted() && shown[1] == 99)
        shown[5] = 1 << 40
        #expect(!shown.isOrdered && shown[5] == 1 << 40)
        shown.removeAll(keepingCapacity: true)
        #expect(shown.isOrdered && shown.isEmpty && shown[5] == nil)
    }
}
