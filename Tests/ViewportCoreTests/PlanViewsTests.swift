import Testing
@testable import ViewportCore
import ViewportTestSupport

/// A plan's four view lists in their one allocation: what is written is what every reader sees
/// (the array getters, the counts, `withViewLists`), and replacing one list keeps the others.
@Suite struct PlanViewsTests {
    @Test(arguments: 0..<40)
    func listsReadBackAsWrittenThroughEveryAccessor(seed: Int) {
        var generator = SeededRandom(seed: UInt64(seed) &+ 11)
        func entries(_ count: Int) -> [PlanEntry] {
            (0..<count).map { _ in PlanEntry(item: Int(generator.next() % 1_000), view: Int(generator.next() % 100)) }
        }
        let recycle = entries(Int(generator.next() % 5))
        let discard = entries(Int(generator.next() % 3))
        let reuse = entries(Int(generator.next() % 5)).map { ReuseEntry(item: $0.item, view: $0.view, rebind: generator.next() % 2 == 0) }
        let create = entries(Int(generator.next() % 4))
        var plan = Plan(seq: 3, offset: Point(x: 0, y: 10), recycle: recycle, discard: discard, reuse: reuse, create: create)
        #expect(plan.recycle == recycle && plan.discard == discard && plan.reuse == reuse && plan.create == create)
        #expect([plan.recycleCount, plan.discardCount, plan.reuseCount, plan.createCount] == [recycle.count, discard.count, reuse.count, create.count])
        #expect(plan.isBare == (recycle.isEmpty && discard.isEmpty && reuse.isEmpty && create.isEmpty))
        plan.withViewLists { lists in
            #expect(lists.recycle.map { PlanEntry(item: $0.item, view: $0.view) } == recycle)
            #expect(lists.discard.map { PlanEntry(item: $0.item, view: $0.view) } == discard)
            #expect(Array(lists.reuse) == reuse)
            #expect(lists.create.map { PlanEntry(item: $0.item, view: $0.view) } == create)
        }
        // One list replaced: the others stay, and a copy made before keeps the old lists.
        let before = plan
        let newCreate = entries(3)
        plan.create = newCreate
        #expect(plan.create == newCreate && plan.recycle == recycle && plan.reuse == reuse && plan.discard == discard)
        #expect(before.create == create)
        plan.recycle = []
        plan.discard = []
        plan.reuse = []
        plan.create = []
        #expect(plan.isBare && plan.isEmpty && plan.createCount == 0)
        plan.withViewLists { lists in
            #expect(lists.recycle.isEmpty && lists.discard.isEmpty && lists.reuse.isEmpty && lists.create.isEmpty)
        }
    }

    /// The planner writes its lists in place: a jump's plan holds every leaving view in `recycle`
    /// and every entering item in `reuse` or `create`, each list in layout order.
    @Test func aJumpsPlanIsWrittenInPlaceInLayoutOrder() throws {
        let items = (0..<1_000).map { ItemSpec(id: "\($0)", rect: Rect(x: 0, y: Double($0) * 50, width: 375, height: 50), reuse: $0 % 3 == 0 ? "a" : "b") }
        let layout = try makeLayout(items)
        let viewport = Size(width: 375, height: 667)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: viewport))
        let first = session.lastPlan
        #expect(first.create.map(\.item) == oracle(items.map(\.rect), SentRegion(offset: .zero, viewport: viewport, buffer: 20)))
        let target = Point(x: 0, y: 20_000)
        let jump = try session.apply(ViewportUpdate(offset: target, seq: 1))
        #expect(jump.recycle == first.create)
        #expect(jump.discard.isEmpty)
        let entering = (jump.reuse.map(\.item) + jump.create.map(\.item)).sorted()
        #expect(entering == oracle(items.map(\.rect), SentRegion(offset: target, viewport: viewport, buffer: 20)))
        #expect(jump.reuse.map(\.item) == jump.reuse.map(\.item).sorted())
        #expect(jump.create.map(\.item) == jump.create.map(\.item).sorted())
        // Every pooled view is reused (as many as left), the rest are new.
        #expect(jump.reuseCount == min(first.createCount, entering.count))
        #expect(jump.createCount == entering.count - jump.reuseCount)
        #expect(Set(jump.reuse.map(\.view)).isSubset(of: Set(first.create.map(\.view))))
    }
}
