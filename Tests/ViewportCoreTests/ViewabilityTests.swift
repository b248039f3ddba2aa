import Testing
import ViewportCore
import ViewportTestSupport

/// docs/api.md "Viewability, direction-aware buffers, time", one behaviour per test.
struct ViewabilityTests {
    /// 100 rows of 100 pt in a 100 × 300 viewport.
    static func rows(_ count: Int = 100) throws -> Layout { try HelperTests.rows(count) }

    static func session(
        _ layout: Layout, buffer: Buffer = 0, threshold: Double = 0, minTime: Double? = nil, time: Double? = nil,
        _ configure: (inout SessionConfiguration) -> Void = { _ in }
    ) throws -> ViewportSession {
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 300), exposure: true)
        configuration.buffer = buffer
        configuration.exposureRule = ExposureRule(threshold: threshold, minTime: minTime)
        configuration.time = time
        configure(&configuration)
        return try ViewportSession(layout: layout, configuration: configuration)
    }

    static func entries(_ list: [ExposureEntry]) -> [String] { list.map { "\($0.item):\($0.times)" } }

    /// The field a refused call names (nil when it succeeds).
    static func refusedField(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            if case .invalid(let field, _)? = error as? SessionError { return field }
            return "\(error)"
        }
    }

    // MARK: thresholds

    @Test func anItemIsOnScreenWhenThePartInsideTheViewportIsAtLeastTheThreshold() throws {
        var session = try Self.session(Self.rows(), threshold: 0.5)
        // Screen 0 … 300: rows 0 … 2 whole.
        #expect(Self.entries(session.lastPlan.enter) == ["0:1", "1:1", "2:1"])
        // Screen 49 … 349: row 0 shows 51 % (on), row 3 49 % (off).
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 49)))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)
        // Screen 50 … 350: exactly half of rows 0 and 3: both on.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 50)))
        #expect(Self.entries(plan.enter) == ["3:1"])
        // Screen 51 … 351: row 0 shows 49 %: it leaves.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 51)))
        #expect(plan.leave == [0] && plan.enter.isEmpty)
        // Across x too: half the width out is still half (rows 1 … 3 whole along y).
        plan = try session.apply(ViewportUpdate(offset: Point(x: 50, y: 100)))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 51, y: 100)))
        #expect(plan.leave == [1, 2, 3] && plan.enter.isEmpty)
        #expect(session.onScreen.isEmpty)
    }

    @Test func thresholdOneNeedsTheWholeItemAndAnItemLargerThanTheViewportIsNever() throws {
        let layout = try makeLayout([
            ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 100, height: 100), reuse: nil),
            ItemSpec(id: "tall", rect: Rect(x: 0, y: 100, width: 100, height: 400), reuse: nil),
            ItemSpec(id: "b", rect: Rect(x: 0, y: 500, width: 100, height: 100), reuse: nil),
        ])
        var session = try Self.session(layout, threshold: 1)
        #expect(Self.entries(session.lastPlan.enter) == ["0:1"])
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 0.5)))
        #expect(plan.leave == [0])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 300)))
        #expect(Self.entries(plan.enter) == ["2:1"] && plan.leave.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 150)))
        #expect(plan.leave == [2] && plan.enter.isEmpty)  // "tall" is on no screen of 300 pt
    }

    @Test func aZeroAreaItemIsOnScreenWhenStrictlyInside() throws {
        let layout = try makeLayout([
            ItemSpec(id: "point", rect: Rect(x: 50, y: 100, width: 0, height: 0), reuse: nil),
            ItemSpec(id: "line", rect: Rect(x: 50, y: 250, width: 0, height: 100), reuse: nil),
        ])
        var session = try Self.session(layout, threshold: 0.5)
        // The line crosses the bottom edge (300): not inside. With threshold 0 it would be on.
        #expect(Self.entries(session.lastPlan.enter) == ["0:1"])
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100)))
        // The point on the top edge is not strictly inside; the line (250 … 350) is now.
        #expect(plan.leave == [0] && Self.entries(plan.enter) == ["1:1"])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 99)))
        #expect(Self.entries(plan.enter) == ["0:2"] && plan.leave.isEmpty)
        var strict = try Self.session(layout)
        #expect(Self.entries(strict.lastPlan.enter) == ["0:1", "1:1"])
        plan = try strict.apply(ViewportUpdate(offset: Point(x: 0, y: 100)))
        #expect(plan.leave == [0])
    }

    @Test func aLoopingCarouselCountsTheCopyOnScreenByItsFraction() throws {
        let layout = try makeLayout((0..<10).map { ItemSpec(id: "p\($0)", rect: Rect(x: Double($0) * 100, y: 0, width: 100, height: 100), reuse: "p") })
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100), buffer: 0, exposure: true, loop: true)
        configuration.exposureRule = ExposureRule(threshold: 0.5)
        var session = try ViewportSession(layout: layout, configuration: configuration)
        #expect(Self.entries(session.lastPlan.enter) == ["0:1"])
        var plan = try session.apply(ViewportUpdate(offset: Point(x: -49, y: 0), phase: .dragging))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)  // p9's copy shows 49 %
        plan = try session.apply(ViewportUpdate(offset: Point(x: -51, y: 0), phase: .dragging))
        #expect(Self.entries(plan.enter) == ["9:1"] && plan.leave == [0])
        // Far along the loop: the copy of p0 at 10 000 … 10 100.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 9_960, y: 0), phase: .dragging))
        #expect(Self.entries(plan.enter) == ["0:2"] && plan.leave == [9])
        // An idle plan recenters into [0, 1000): the picture, and what is on screen, stay.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 9_960, y: 0)))
        #expect(plan.recenter == Point(x: -9_000, y: 0))
        plan = try session.apply(ViewportUpdate(offset: Point(x: 961, y: 0)))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)
        #expect(session.onScreen == [0])
    }

    // MARK: viewed and time

    @Test func viewedListsAStayOnceItHasLastedMinTimeOfClientTime() throws {
        var session = try Self.session(Self.rows(), minTime: 1, time: 10)
        #expect(session.lastPlan.viewed.isEmpty)
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 10.5))
        #expect(Self.entries(plan.enter) == ["3:1"] && plan.leave == [0] && plan.viewed.isEmpty)
        // 1 s after the opening: rows 1 and 2 (there since 10); row 0 left before.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 11))
        #expect(Self.entries(plan.viewed) == ["1:1", "2:1"])
        // Once per stay.
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 11.4))
        #expect(plan.viewed.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 11.5))
        #expect(Self.entries(plan.viewed) == ["3:1"])
        // Row 1 leaves and comes back: a new stay, viewed again after another second.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 200), time: 12))
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 12.5))
        #expect(Self.entries(plan.enter) == ["1:2"])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 13.5))
        #expect(Self.entries(plan.viewed) == ["1:2"])
    }

    @Test func minTimeZeroViewsAtEntryAndAnItemLeavingIsNotViewed() throws {
        let session = try Self.session(Self.rows(), minTime: 0, time: 0)
        #expect(Self.entries(session.lastPlan.viewed) == ["0:1", "1:1", "2:1"])
        var long = try Self.session(Self.rows(), minTime: 5, time: 0)
        // Row 0 leaves at 100 s: it stayed long enough, but it is not on screen at that update.
        let plan = try long.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 100))
        #expect(Self.entries(plan.viewed) == ["1:1", "2:1"])
    }

    @Test func anUpdateWithoutTimeStartsNoClockAndViewsNothing() throws {
        var session = try Self.session(Self.rows(), minTime: 1)  // opened without time
        // No clock yet: nothing is viewed, however long.
        var plan = try session.apply(ViewportUpdate(offset: .zero))
        #expect(plan.viewed.isEmpty)
        // The first update with time starts the clocks of the stays that had none.
        plan = try session.apply(ViewportUpdate(offset: .zero, time: 50))
        #expect(plan.viewed.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100)))  // no time: views nothing
        #expect(Self.entries(plan.enter) == ["3:1"] && plan.viewed.isEmpty)
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 51))
        // Rows 1 and 2 from 50; row 3 entered without time: its clock started at 51.
        #expect(Self.entries(plan.viewed) == ["1:1", "2:1"])
        plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), time: 52))
        #expect(Self.entries(plan.viewed) == ["3:1"])
        #expect(session.time == 52)
    }

    @Test func staysFollowTheirItemsAcrossALayoutChangeWhichStartsNoClock() throws {
        var session = try Self.session(Self.rows(), buffer: Buffer(ahead: 200, behind: 0), minTime: 1, time: 0)
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 10), time: 0.5))
        #expect(session.motion == Motion(x: 0, y: 1))
        // row1 is replaced by "new"; row0 and row2 stay on screen.
        var specs = (0..<100).map { ItemSpec(id: "row\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 100, height: 100), reuse: "row") }
        specs[1].id = "new"
        let plan = try session.changeLayout(to: try makeLayout(specs), anchor: .none)
        #expect(Self.entries(plan.enter) == ["1:1"] && plan.leave == [1] && plan.viewed.isEmpty)
        // No motion after a layout change: max(200, 0) on both sides.
        #expect(session.motion == .none && session.region.minY == -190)
        // row3 entered at 0.5 (the screen is 10 … 310).
        var next = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 10), time: 1))
        #expect(Self.entries(next.viewed) == ["0:1", "2:1"])
        next = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 10), time: 2))
        #expect(Self.entries(next.viewed) == ["1:1", "3:1"])  // "new": its clock started at 1
    }

    @Test func aTimeLowerThanTheSessionsLastIsRefusedAndChangesNothing() throws {
        var session = try Self.session(Self.rows(), minTime: 1, time: 5)
        #expect(session.time == 5)
        #expect(throws: SessionError.self) { try session.apply(ViewportUpdate(offset: Point(x: 0, y: 500), time: 4.999)) }
        #expect(Self.refusedField { try session.apply(ViewportUpdate(offset: Point(x: 0, y: 500), seq: 1, time: 4)) } == "time")
        #expect(session.seq == 0 && session.offset == .zero && session.time == 5)
        // Equal is fine; no time keeps the last one.
        _ = try session.apply(ViewportUpdate(offset: .zero, time: 5))
        _ = try session.apply(ViewportUpdate(offset: .zero))
        #expect(session.time == 5 && session.seq == 2)
        // A retry answers the last plan again.
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 7), time: 6))
        #expect(try session.apply(ViewportUpdate(offset: Point(x: 0, y: 7), seq: 3, time: 6)) == plan)
        #expect(throws: SessionError.self) { try session.apply(ViewportUpdate(offset: .zero, time: .infinity)) }
        #expect(throws: SessionError.invalid(field: "time", reason: "must be finite")) {
            try Self.session(Self.rows(), time: .nan)
        }
    }

    @Test func invalidExposureAndBufferOptionsNameTheirField() throws {
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
        #expect(field { $0.exposureRule.threshold = 1.01 } == "exposure.threshold")
        #expect(field { $0.exposureRule.threshold = -0.1 } == "exposure.threshold")
        #expect(field { $0.exposureRule.threshold = .nan } == "exposure.threshold")
        #expect(field { $0.exposureRule.minTime = -1 } == "exposure.minTime")
        #expect(field { $0.buffer = Buffer(ahead: -1, behind: 5) } == "buffer.ahead")
        #expect(field { $0.buffer = Buffer(ahead: 1, behind: .infinity) } == "buffer.behind")
        #expect(field { $0.buffer = -2 } == "buffer")
        #expect(field { $0.scrollTo = ScrollTarget(item: 7) } == "scrollTo.id")
        #expect(field { $0.scrollTo = ScrollTarget(item: 1, margin: -3) } == "scrollTo.margin")
        #expect(field { $0.exposureRule = ExposureRule(threshold: 1, minTime: 0) } == nil)
    }

    // MARK: direction-aware buffer

    @Test func theBufferLeansTowardTheMotionVelocityFirstThenTheOffsetChange() throws {
        var session = try Self.session(Self.rows(), buffer: Buffer(ahead: 300, behind: 50))
        // Opening: no motion, max(300, 50) on both sides.
        #expect(session.region == Region(minX: -300, minY: -300, maxX: 400, maxY: 600))
        // Moving down by offset change: 300 below, 50 above; x has no motion.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000)))
        #expect(session.region == Region(minX: -300, minY: 950, maxX: 400, maxY: 1600))
        // The velocity wins over the offset change.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1010), velocity: Point(x: 0, y: -200)))
        #expect(session.region == Region(minX: -300, minY: 710, maxX: 400, maxY: 1360))
        // Zero velocity on an axis: the offset change decides there.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 5, y: 1000), velocity: Point(x: 0, y: 0)))
        #expect(session.region == Region(minX: -45, minY: 700, maxX: 405, maxY: 1350))
        // Still: max on both sides again.
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 5, y: 1000)))
        #expect(session.region == Region(minX: -295, minY: 700, maxX: 405, maxY: 1600))
        #expect(plan.create.map(\.item) + plan.reuse.map(\.item) == [14, 15])
        #expect(session.motion == .none)
    }

    @Test func smallStepsAndDirectionFlipsMaterializeExactlyTheLeaningRegion() throws {
        let specs = (0..<400).map {
            ItemSpec(id: "r\($0)", rect: Rect(x: 0, y: Double($0) * 37, width: 100, height: Double(10 + $0 % 30)), reuse: "r")
        }
        let layout = try makeLayout(specs)
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 300))
        configuration.buffer = Buffer(ahead: 600, behind: 40)
        var session = try ViewportSession(layout: layout, configuration: configuration)
        var client = SimulatedClient(specs: specs, caps: PoolCaps())
        client.apply(session.lastPlan, expected: oracle(specs, SentRegion(minX: -600, minY: -600, maxX: 700, maxY: 900)))
        var y = 3000.0
        var rng = SeededRandom(seed: 12)
        for step in 0..<3000 {
            let dy = Double(Int.random(in: 1...9, using: &rng)) * (step / 300 % 2 == 0 ? 1 : -1)
            y += dy
            let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y)))
            let region = dy > 0
                ? SentRegion(minX: -600, minY: y - 40, maxX: 700, maxY: y + 900)
                : SentRegion(minX: -600, minY: y - 600, maxX: 700, maxY: y + 340)
            client.apply(plan, expected: oracle(specs, region))
        }
    }

    // MARK: scrollTo on open, margin

    @Test func scrollToOnOpenStartsTheOpeningPlanThere() throws {
        let layout = try Self.rows()
        let session = try Self.session(layout) { $0.scrollTo = ScrollTarget(item: 50, align: .start) }
        #expect(session.offset == Point(x: 0, y: 5000))
        #expect(session.lastPlan.offset == Point(x: 0, y: 5000))
        #expect(session.lastPlan.create.map(\.item) == [50, 51, 52])
        #expect(Self.entries(session.lastPlan.enter) == ["50:1", "51:1", "52:1"])
        // auto from the top: the least movement that shows it.
        let auto = try Self.session(layout) { $0.scrollTo = ScrollTarget(item: 50, margin: 10) }
        #expect(auto.offset == Point(x: 0, y: 5100 - 300 + 10))
        let end = try Self.session(layout) { $0.scrollTo = ScrollTarget(item: 99, align: .end) }
        #expect(end.offset == Point(x: 0, y: 9700))  // clamped
    }

    @Test func scrollToMarginKeepsPointsBetweenTheItemAndTheViewportsEdge() throws {
        var session = try Self.session(Self.rows()) { _ in }
        func go(_ item: Int, _ align: ScrollAlignment, _ margin: Double) throws -> Double {
            try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: item, align: align, margin: margin))).offset.y
        }
        #expect(try go(20, .start, 16) == 1984)
        #expect(try go(20, .end, 16) == 2100 - 300 + 16)
        #expect(try go(20, .center, 16) == 2050 - 150)
        // auto: shown whole with its margins: no movement; else the least that shows it so.
        #expect(try go(20, .auto, 16) == 1900)
        #expect(try go(21, .auto, 16) == 2200 - 300 + 16)
        #expect(try go(19, .auto, 16) == 1900 - 16)
        // An item that does not fit with its margins: its start, less the margin.
        #expect(try go(30, .auto, 101) == 2899)
        #expect(throws: SessionError.invalid(field: "scrollTo.margin", reason: "must be finite and not negative")) {
            try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: 3, margin: -1)))
        }
    }
}
