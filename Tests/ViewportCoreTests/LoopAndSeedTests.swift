import Testing
import ViewportCore

/// The paging seeds: pages smaller than the viewport (paging-smaller-than-bounds.txt) and the
/// endless three-view carousel (reusable-paging-scrollview.txt).
struct LoopAndSeedTests {
    @Test func a375PointViewPaging250PointPagesMovesOnePageByTheVote() throws {
        let items = (0..<20).map { ItemSpec(id: "card-\($0)", rect: Rect(x: Double($0) * 250, y: 0, width: 240, height: 300), reuse: "card") }
        let layout = try makeLayout(items)
        var session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(
                viewport: Size(width: 375, height: 300),
                paging: PagingOptions(mode: .page, axis: .x, size: Size(width: 250, height: 300))))
        func drag(from b: Double, to o: Double, velocity v: Double) throws -> Plan {
            _ = try session.apply(ViewportUpdate(offset: Point(x: b, y: 0), phase: .dragBegin))
            return try session.apply(ViewportUpdate(offset: Point(x: o, y: 0), velocity: Point(x: v, y: 0), phase: .dragEnd))
        }
        // Forward drag, forward velocity: both vote for the next page.
        var plan = try drag(from: 0, to: 60, velocity: 300)
        #expect(plan.target == Point(x: 250, y: 0) && plan.page == 1)
        // Dragged forward but flung back: the votes cancel, the page stays.
        plan = try drag(from: 250, to: 260, velocity: -200)
        #expect(plan.target == Point(x: 250, y: 0) && plan.page == 1)
        // Backward on both counts: the page before.
        plan = try drag(from: 250, to: 200, velocity: -50)
        #expect(plan.target == Point(x: 0, y: 0) && plan.page == 0)
        // No velocity: the page nearest to the offset.
        plan = try drag(from: 250, to: 380, velocity: 0)
        #expect(plan.target == Point(x: 500, y: 0) && plan.page == 2)
        // Never before the first page...
        plan = try drag(from: 0, to: -40, velocity: -900)
        #expect(plan.target == Point(x: 0, y: 0) && plan.page == 0)
        // ...nor after the last (page 19 of ceil(4990 / 250) = 20), whose offset is clamped to the
        // content's end (4990 − 375).
        plan = try drag(from: 4750, to: 4800, velocity: 900)
        #expect(plan.page == 19)
        #expect(plan.target == Point(x: 4615, y: 0))
    }

    @Test func threeViewCarouselPagedTenThousandTimesEachWayWithLoopCreatesThreeViewsAndStaysBounded() throws {
        let width = 375.0
        let pages = 5
        let items = (0..<pages).map { ItemSpec(id: "page-\($0)", rect: Rect(x: Double($0) * width, y: 0, width: width, height: 600), reuse: "page") }
        let layout = try makeLayout(items)
        let period = Double(pages) * width
        var session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(
                viewport: Size(width: width, height: 600), buffer: width / 2, paging: PagingOptions(mode: .page, axis: .x), loop: true))
        // Page 0, page 1 after it, and the copy of page 4 before it (−375 … 0).
        #expect(session.lastPlan.create.map(\.item) == [0, 1, 4])
        var offset = 0.0
        var page = 0
        var client = LoopClient(specs: items)
        client.apply(session.lastPlan)
        for direction in [1.0, -1.0] {
            for _ in 0..<10_000 {
                client.apply(try session.apply(ViewportUpdate(offset: Point(x: offset, y: 0), phase: .dragBegin)))
                client.apply(try session.apply(ViewportUpdate(offset: Point(x: offset + 40 * direction, y: 0), phase: .dragging)))
                let end = try session.apply(ViewportUpdate(offset: Point(x: offset + 90 * direction, y: 0), velocity: Point(x: 700 * direction, y: 0), phase: .dragEnd))
                client.apply(end)
                page = (page + Int(direction) + pages) % pages
                #expect(end.page == page)
                let target = try #require(end.target)
                #expect(target.x == offset + width * direction)
                client.apply(try session.apply(ViewportUpdate(offset: Point(x: offset + 200 * direction, y: 0), phase: .decelerating)))
                let rest = try session.apply(ViewportUpdate(offset: target, phase: .idle))
                client.apply(rest)
                offset = target.x + (rest.recenter?.x ?? 0)
                #expect(session.offset.x == offset)
                #expect(offset >= 0 && offset < period)
                // The page on screen is the expected one, at the offset.
                #expect(client.itemOnScreen(at: offset, width: width) == page)
            }
        }
        #expect(session.stats.created == 3)
        #expect(session.stats.peakViews == 3)
        #expect(session.liveViews == 3)
    }

    @Test func loopWrapsMaterializationAcrossTheEndOfTheContent() throws {
        let items = (0..<4).map { ItemSpec(id: "p\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 100, height: 100), reuse: "p") }
        let layout = try makeLayout(items)
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 100), buffer: 50, paging: PagingOptions(axis: .y), loop: true))
        // At 0: page 0 and the copy of page 3 above it (−100 … 0, reaching into −50 … 0).
        #expect(session.visible.map(\.item) == [0, 1, 3])
        #expect(session.lastPlan.placements == [Placement(item: 3, rect: Rect(x: 0, y: -100, width: 100, height: 100))])
        #expect(placedRect(session.lastPlan, 3, items) == Rect(x: 0, y: -100, width: 100, height: 100))
        #expect(placedRect(session.lastPlan, 1, items) == Rect(x: 0, y: 100, width: 100, height: 100))
        // Dragging past the end: page 0 again, below page 3.
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 330), phase: .dragging))
        #expect(session.visible.map(\.item) == [0, 2, 3])
        // Page 0's view moves to the copy below page 3: it leaves and takes its own view back.
        // (Page 3 moves too: from the copy at −100 to its own rect at 300.)
        #expect(plan.recycle.map(\.item) == [0, 1, 3])
        #expect(plan.reuse.map(\.item) == [0, 2, 3])
        #expect(plan.reuse.first?.rebind == false)
        #expect(plan.placements == [Placement(item: 0, rect: Rect(x: 0, y: 400, width: 100, height: 100))])
        #expect(plan.recenter == nil)  // not while dragging
        let idle = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 420)))
        #expect(idle.recenter == Point(x: 0, y: -400))
        #expect(session.offset == Point(x: 0, y: 20))
        #expect(idle.reuse.map(\.item) == [1])
        #expect(placedRect(idle, 1, items) == Rect(x: 0, y: 500, width: 100, height: 100))
        // After the recenter, nothing moves: the same items at the same places.
        let still = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 20)))
        #expect(still.isEmpty && still.recenter == nil)
    }

    @Test func loopNeedsAUsablePeriod() throws {
        let items = (0..<2).map { ItemSpec(id: "p\($0)", rect: Rect(x: Double($0) * 375, y: 0, width: 375, height: 600), reuse: "p") }
        let layout = try makeLayout(items)
        // Two pages of 375 cannot hold a 750 pt materialized region plus a 375 pt page.
        #expect(throws: SessionError.self) {
            try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), buffer: 187.5, loop: true))
        }
        do {
            _ = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), buffer: 187.5, loop: true))
        } catch let SessionError.invalid(field, _) {
            #expect(field == "loop")
        } catch {
            Issue.record("unexpected \(error)")
        }
        // Without a buffer and 100 pt wide, it works; growing the viewport beyond the period is refused.
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 600), buffer: 0, loop: true))
        #expect(throws: SessionError.invalid(field: "size", reason: "loop needs content at least 1075.0 long along x (viewport + 2 × buffer + longest item); it is 750.0")) {
            try session.apply(ViewportUpdate(offset: .zero, size: Size(width: 700, height: 600)))
        }
        #expect(session.seq == 0)
        // Pages that do not divide the period.
        #expect(throws: SessionError.self) {
            try ViewportSession(layout: layout, configuration: SessionConfiguration(
                viewport: Size(width: 100, height: 600), buffer: 0, paging: PagingOptions(mode: .page, size: Size(width: 320, height: 600)), loop: true))
        }
    }
}

/// A client of a looping session: applies plans, placing views where the plan says, and moves
/// everything on `recenter`.
struct LoopClient {
    let specs: [ItemSpec]
    /// View → (item, rect in the client's coordinates).
    var views: [Int: (item: Int, rect: Rect)] = [:]

    init(specs: [ItemSpec]) { self.specs = specs }

    mutating func apply(_ plan: Plan) {
        for entry in plan.recycle + plan.discard { views[entry.view] = nil }
        for entry in plan.reuse { views[entry.view] = (entry.item, placedRect(plan, entry.item, specs)) }
        for entry in plan.create { views[entry.view] = (entry.item, placedRect(plan, entry.item, specs)) }
        if let shift = plan.recenter {
            for (view, shown) in views {
                let r = shown.rect
                views[view] = (shown.item, Rect(x: r.x + shift.x, y: r.y + shift.y, width: r.width, height: r.height))
            }
        }
    }

    /// The item whose view covers the viewport's leading edge.
    func itemOnScreen(at offset: Double, width: Double) -> Int? {
        views.values.first { $0.rect.x == offset }?.item
    }
}

/// Where a looping session's plan puts an entering item's view, as a client reads it (docs/api.md
/// "Scrolling helpers", `loop`; docs/loop.md): its `placements` rect when listed, else its layout rect from the test's specs.
func placedRect(_ plan: Plan, _ item: Int, _ specs: [ItemSpec]) -> Rect {
    plan.placements.first { $0.item == item }?.rect ?? specs[item].rect
}
