import Testing
import ViewportCore

/// The scenarios of the articles in shared/seeds/, as named tests.
struct SeedScenarioTests {
    /// LazyScrollView's 11-item home page (lazyscrollview.txt).
    static let lazyScrollViewItems: [ItemSpec] = [
        ("0/0", Rect(x: 25, y: 15, width: 156, height: 150)),
        ("0/1", Rect(x: 194, y: 15, width: 156, height: 150)),
        ("0/2", Rect(x: 25, y: 180, width: 156, height: 150)),
        ("0/3", Rect(x: 194, y: 180, width: 156, height: 150)),
        ("1/0", Rect(x: 5, y: 360, width: 177.5, height: 150)),
        ("1/1", Rect(x: 192.5, y: 426, width: 84, height: 84)),
        ("1/2", Rect(x: 192.5, y: 360, width: 177.5, height: 56)),
        ("1/3", Rect(x: 286.5, y: 426, width: 83.5, height: 84)),
        ("2/0", Rect(x: 25, y: 530, width: 325, height: 150)),
        ("2/1", Rect(x: 25, y: 695, width: 325, height: 150)),
        ("2/2", Rect(x: 25, y: 860, width: 325, height: 150)),
    ].map { ItemSpec(id: $0.0, rect: $0.1, reuse: "card") }

    @Test func lazyScrollViewScreen242to949WithBuffer20MaterializesExactly0_2Through2_2() throws {
        let layout = try makeLayout(Self.lazyScrollViewItems)
        let session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(viewport: Size(width: 375, height: 949 - 242), offset: Point(x: 0, y: 242), buffer: 20))
        let created = session.lastPlan.create.map { layout.id(at: $0.item) }
        #expect(created == ["0/2", "0/3", "1/0", "1/1", "1/2", "1/3", "2/0", "2/1", "2/2"])
        #expect(session.visible.map(\.item) == Array(2...10))
    }

    @Test func horizontalOptionBarReusesCellsOf0And1For8And9() throws {
        let items = (0..<20).map { ItemSpec(id: "option-\($0)", rect: Rect(x: Double($0) * 60, y: 0, width: 60, height: 44), reuse: "cell") }
        let layout = try makeLayout(items)
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: 480, height: 44), buffer: 0))
        #expect(session.lastPlan.create.map(\.item) == Array(0...7))
        let viewOf = Dictionary(uniqueKeysWithValues: session.lastPlan.create.map { ($0.item, $0.view) })

        let plan = try session.apply(ViewportUpdate(offset: Point(x: 120, y: 0)))
        #expect(session.visible.map(\.item) == Array(2...9))
        #expect(plan.recycle.map(\.item) == [0, 1])
        #expect(plan.create.isEmpty)
        #expect(plan.reuse.map(\.item) == [8, 9])
        #expect(Set(plan.reuse.map(\.view)) == [viewOf[0], viewOf[1]])
        // The newest pooled view (item 1's) goes to the first entering item.
        #expect(plan.reuse.first?.view == viewOf[1])
        #expect(plan.reuse.allSatisfy { $0.rebind })
    }

    @Test func thousandPageCarouselWithHalfPageBufferCreatesExactlyThreeViews() throws {
        let width = 375.0
        let items = (0..<1000).map { ItemSpec(id: "page-\($0)", rect: Rect(x: Double($0) * width, y: 0, width: width, height: 600), reuse: "page") }
        let layout = try makeLayout(items)
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: width, height: 600), buffer: width / 2))
        for page in Array(1..<1000) + Array((0..<999).reversed()) {
            let plan = try session.apply(ViewportUpdate(offset: Point(x: Double(page) * width, y: 0)))
            #expect(plan.discard.isEmpty)
        }
        #expect(session.stats.created == 3)
        #expect(session.stats.peakViews == 3)
        #expect(session.liveViews == 3)
    }
}
