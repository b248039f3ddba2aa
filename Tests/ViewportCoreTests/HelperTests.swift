import Testing
import ViewportCore

/// docs/api.md "Scrolling helpers", one behaviour per test.
struct HelperTests {
    /// 100 rows of 100 pt in a 100 × 300 viewport.
    static func rows(_ count: Int = 100) throws -> Layout {
        try makeLayout((0..<count).map { ItemSpec(id: "row\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 100, height: 100), reuse: "row") })
    }

    static func session(_ layout: Layout, buffer: Double = 0, _ configure: (inout SessionConfiguration) -> Void) throws -> ViewportSession {
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 300), buffer: buffer)
        configure(&configuration)
        return try ViewportSession(layout: layout, configuration: configuration)
    }

    // MARK: prefetch

    @Test func prefetchListsItemsSweptAheadOnceAndCancelsThoseNoLongerPredicted() throws {
        var session = try Self.session(Self.rows()) { $0.prefetch = 0.5 }
        #expect(session.lastPlan.prefetch.isEmpty)
        // 400 pt/s × 0.5 s = 200 pt ahead of 0 … 300: rows 3 and 4.
        var plan = try session.apply(ViewportUpdate(offset: .zero, velocity: Point(x: 0, y: 400), phase: .dragging))
        #expect(plan.prefetch == [3, 4])
        // Row 3 enters (silently no longer a prediction), row 5 is new, row 4 is not listed again.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 50), velocity: Point(x: 0, y: 400), phase: .dragging))
        #expect(plan.create.map(\.item) == [3])
        #expect(plan.prefetch == [5])
        #expect(plan.cancelPrefetch.isEmpty)
        // Reversing: nothing ahead above row 0; rows 4 and 5 are cancelled.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 60), velocity: Point(x: 0, y: -400), phase: .dragging))
        #expect(plan.prefetch.isEmpty)
        #expect(plan.cancelPrefetch == [4, 5])
        // Predict again, then an update without velocity cancels everything outstanding.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 60), velocity: Point(x: 0, y: 100), phase: .dragging))
        #expect(plan.prefetch == [4])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 70)))
        #expect(plan.cancelPrefetch == [4])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 75)))
        #expect(plan.cancelPrefetch.isEmpty && plan.prefetch.isEmpty)
    }

    @Test func prefetchSweepsTheWholeWayForAFling() throws {
        var session = try Self.session(Self.rows()) { $0.prefetch = 1 }
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000), velocity: Point(x: 0, y: 2000), phase: .decelerating))
        // Shown: rows 10 … 12; swept down to 1300 + 2000: rows 13 … 32.
        #expect(plan.prefetch == Array(13...32))
    }

    // MARK: lazyLoad

    @Test func lazyLoadLoadsOnIdleAndDragBeginAndAtTheDragEndTargetButNeverWhileMoving() throws {
        var session = try Self.session(Self.rows(), buffer: 50) { $0.lazyLoad = true }
        // Opening plan counts as idle: rows 0 … 3 (0 … 350).
        #expect(session.lastPlan.load == [0, 1, 2, 3])
        var plan = try session.apply(ViewportUpdate(offset: .zero, phase: .dragBegin))
        #expect(plan.load.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 120), phase: .dragging))
        #expect(plan.create.map(\.item) == [4])
        #expect(plan.load.isEmpty)
        // Fling: target 130 + 100 000/1000 · 0.998/0.002 = 50 030 → clamped to 9700; rows 97 … 99 load now.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 130), velocity: Point(x: 0, y: 100_000), phase: .dragEnd))
        #expect(plan.target == Point(x: 0, y: 9700))
        #expect(plan.load == [97, 98, 99])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 3000), phase: .decelerating))
        #expect(plan.load.isEmpty)
        // The view stopped early (the user caught it): idle loads what is materialized there.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5000), phase: .idle))
        #expect(plan.load == [49, 50, 51, 52, 53])
        // Rows 97 … 99 were never materialized: forgotten at the next drag-begin, loaded again later.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5000), phase: .dragBegin))
        #expect(plan.load.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 9700)))
        #expect(plan.load == [96, 97, 98, 99])
        // Row 0 left long ago, so it loads again when it comes back.
        plan = try session.apply(ViewportUpdate(offset: .zero))
        #expect(plan.load == [0, 1, 2, 3])
    }

    @Test func lazyLoadKeepsDragEndLoadsThatBecameMaterialized() throws {
        var session = try Self.session(Self.rows()) { $0.lazyLoad = true; $0.paging = PagingOptions(mode: .page) }
        _ = try session.apply(ViewportUpdate(offset: .zero, phase: .dragBegin))
        let end = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 40), velocity: Point(x: 0, y: 100), phase: .dragEnd))
        #expect(end.target == Point(x: 0, y: 300))
        #expect(end.load == [3, 4, 5])
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 300), phase: .decelerating))
        #expect(plan.load.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 300), phase: .dragBegin))
        #expect(plan.load.isEmpty)  // 3 … 5 are materialized and stay loaded
    }

    // MARK: exposure

    @Test func exposureCountsEveryEntryIntoTheScreenRegion() throws {
        var session = try Self.session(Self.rows(), buffer: 100) { $0.exposure = true }
        // Screen 0 … 300: rows 0 … 2 (the buffer does not count).
        #expect(session.lastPlan.enter == [0, 1, 2].map { ExposureEntry(item: $0, times: 1) })
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 150)))
        #expect(plan.enter == [ExposureEntry(item: 3, times: 1), ExposureEntry(item: 4, times: 1)])
        #expect(plan.leave == [0])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 50)))
        #expect(plan.enter == [ExposureEntry(item: 0, times: 2)])
        #expect(plan.leave == [4])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 51)))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)
        // A row that only touches the screen's edge is not on it.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100)))
        #expect(plan.leave == [0])
        plan = try session.apply(ViewportUpdate(offset: .zero, size: Size(width: 100, height: 600)))
        #expect(plan.enter == [ExposureEntry(item: 0, times: 3), ExposureEntry(item: 4, times: 2), ExposureEntry(item: 5, times: 1)])
    }

    // MARK: links

    @Test func linksFollowAtTheSameScrollProgressClamped() throws {
        let layout = try makeLayout([ItemSpec(id: "tall", rect: Rect(x: 0, y: 0, width: 375, height: 2000), reuse: nil)])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(
            viewport: Size(width: 375, height: 500), insets: Insets(top: 100, left: 0, bottom: 0, right: 0),
            links: ["header": LinkedScrollView(viewport: Size(width: 300, height: 200), contentSize: Size(width: 900, height: 1200)),
                    "back": LinkedScrollView(viewport: Size(width: 10, height: 10), contentSize: Size(width: 5, height: 5))]))
        // Range −100 … 1500: offset 0 is progress 1/16.
        #expect(session.lastPlan.linked == [
            LinkedOffset(name: "back", offset: Point(x: 0, y: 0)),
            LinkedOffset(name: "header", offset: Point(x: 0, y: 62.5)),
        ])
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 700)))
        #expect(plan.linked.last == LinkedOffset(name: "header", offset: Point(x: 0, y: 500)))
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 701)))  // no view changes: still linked
        #expect(plan.isEmpty)
        #expect(plan.linked.last?.offset.y == 500 + 1000.0 / 1600)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 50, y: 9000)))
        #expect(plan.linked.last == LinkedOffset(name: "header", offset: Point(x: 0, y: 1000)))
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: -400)))
        #expect(plan.linked.last == LinkedOffset(name: "header", offset: Point(x: 0, y: 0)))
    }

    // MARK: select

    @Test func selectFlagsTheSelectedItemUntilClearedAndAbsentKeepsIt() throws {
        var session = try Self.session(Self.rows()) { (_: inout SessionConfiguration) in }
        var plan = try session.apply(ViewportUpdate(offset: .zero, select: .item(5)))
        #expect(plan.selected == 5 && session.selected == 5)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 400)))
        #expect(plan.selected == 5)
        #expect(plan.reuse.map(\.item).contains(5))
        plan = try session.apply(ViewportUpdate(offset: .zero, select: .clear))
        #expect(plan.selected == nil && session.selected == nil)
        #expect(throws: SessionError.invalid(field: "select", reason: "item 100 is not in the layout")) {
            try session.apply(ViewportUpdate(offset: .zero, select: .item(100)))
        }
        #expect(session.seq == 3)
    }

    // MARK: scrollTo

    @Test func scrollToPutsTheItemAtStartCenterEndOrTheLeastMovement() throws {
        let layout = try makeLayout((0..<40).map {
            ItemSpec(id: "c\($0)", rect: Rect(x: Double($0 % 4) * 200, y: Double($0 / 4) * 150, width: 180, height: 140), reuse: "c")
        })
        // Content 780 × 1490, viewport 400 × 300.
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 400, height: 300)))
        func go(_ item: Int, _ align: ScrollAlignment) throws -> Point {
            try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: item, align: align))).offset
        }
        // Item 13: x 200 … 380, y 450 … 590.
        #expect(try go(13, .start) == Point(x: 200, y: 450))
        #expect(try go(13, .center) == Point(x: 90, y: 370))
        #expect(try go(13, .end) == Point(x: 0, y: 290))
        // Shown whole already: no movement.
        #expect(try go(13, .auto) == Point(x: 0, y: 290))
        // Item 14 (x 400 … 580, y 450 … 590): right of the viewport → its end; y fine.
        #expect(try go(14, .auto) == Point(x: 180, y: 290))
        // Item 1 (y 0 … 140) above → its start.
        #expect(try go(1, .auto) == Point(x: 180, y: 0))
        // Clamped at the end of the content (1490 − 300 = 1190, 780 − 400 = 380).
        #expect(try go(39, .start) == Point(x: 380, y: 1190))
        #expect(session.offset == Point(x: 380, y: 1190))
        #expect(throws: SessionError.invalid(field: "scrollTo.id", reason: "item 40 is not in the layout")) {
            try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: 40, align: .start)))
        }
    }

    @Test func scrollToAutoShowsTheStartOfAnItemLargerThanTheViewport() throws {
        let layout = try makeLayout([
            ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 100, height: 100), reuse: nil),
            ItemSpec(id: "big", rect: Rect(x: 0, y: 500, width: 100, height: 900), reuse: nil),
            ItemSpec(id: "z", rect: Rect(x: 0, y: 1400, width: 100, height: 1000), reuse: nil),
        ])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 300)))
        let plan = try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: 1, align: .auto)))
        #expect(plan.offset == Point(x: 0, y: 500))
        #expect(plan.create.map(\.item) == [1])
    }

    // MARK: validation

    @Test func invalidOptionsAreRefusedNamingTheField() throws {
        let layout = try Self.rows(3)
        func field(_ configure: (inout SessionConfiguration) -> Void) -> String? {
            do {
                _ = try Self.session(layout, configure)
                return nil
            } catch let SessionError.invalid(field, _) {
                return field
            } catch {
                return "\(error)"
            }
        }
        #expect(field { $0.paging.decelerationRate = 0 } == "paging.decelerationRate")
        #expect(field { $0.paging.decelerationRate = 1 } == "paging.decelerationRate")
        #expect(field { $0.paging.decelerationRate = .nan } == "paging.decelerationRate")
        #expect(field { $0.paging.size = Size(width: -1, height: 10) } == "paging.size")
        #expect(field { $0.paging = PagingOptions(mode: .page, axis: .y, size: Size(width: 0, height: 0)) } == "paging.size")
        #expect(field { $0.paging = PagingOptions(mode: .page, axis: .x, size: Size(width: 10, height: 0)) } == nil)
        #expect(field { $0.prefetch = -0.1 } == "prefetch")
        #expect(field { $0.prefetch = .infinity } == "prefetch")
        #expect(field { $0.links = ["p": LinkedScrollView(viewport: Size(width: -1, height: 1), contentSize: .zero)] } == "links.p.viewport")
        #expect(field { $0.links = ["p": LinkedScrollView(viewport: .zero, contentSize: Size(width: 1, height: -5))] } == "links.p.contentSize")
        #expect(field { $0.loop = true } == "loop")  // 300 pt of rows cannot loop a 300 pt viewport
        var session = try Self.session(layout) { (_: inout SessionConfiguration) in }
        #expect(throws: SessionError.invalid(field: "velocity", reason: "must be finite")) {
            try session.apply(ViewportUpdate(offset: .zero, velocity: Point(x: .infinity, y: 0)))
        }
        #expect(session.seq == 0)
    }
}
