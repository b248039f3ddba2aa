import Testing
import ViewportCore

/// A session is a value: the helpers' state lives in a box shared by copies until one of them
/// changes it (copy on write), and the options in an instance shared by sessions opened alike.
/// A copy that goes on must never change what the original does next.
struct SessionCopyTests {
    static func rows(_ count: Int) throws -> Layout {
        try makeLayout((0..<count).map { ItemSpec(id: "r\($0)", rect: Rect(x: 0, y: Double($0) * 40, width: 300, height: 40), reuse: $0 % 7 == 0 ? "header" : "row") })
    }

    @Test(arguments: [false, true])
    func aCopyThatGoesOnLeavesTheOriginalAsItWas(helpers: Bool) throws {
        let layout = try Self.rows(400)
        let configuration = SessionConfiguration(
            viewport: Size(width: 300, height: 600), insets: Insets(top: 10, left: 0, bottom: 0, right: 0),
            prefetch: helpers ? 0.3 : nil, lazyLoad: helpers, exposure: helpers)
        let steps = [120.0, 900, 4_000, 2_500, 60, 7_000, 7_040]
        var original = try ViewportSession(layout: layout, configuration: configuration)
        var copy = original
        // The copy scrolls, selects and is edited away from the original...
        for (k, y) in steps.reversed().enumerated() {
            _ = try copy.apply(ViewportUpdate(offset: Point(x: 0, y: y), velocity: Point(x: 0, y: 900), select: .item(k * 3), time: Double(k)))
        }
        // ...and the original answers exactly as a twin that never had a copy.
        var twin = try ViewportSession(layout: layout, configuration: configuration)
        #expect(original.selected == nil && copy.selected == (steps.count - 1) * 3)
        for (k, y) in steps.enumerated() {
            let update = ViewportUpdate(offset: Point(x: 0, y: y), velocity: Point(x: 0, y: -500), time: Double(k) / 2)
            #expect(try original.apply(update) == twin.apply(update))
        }
        #expect(original.visible == twin.visible)
        #expect(original.pooledViews.map(\.views) == twin.pooledViews.map(\.views))
        #expect(original.insets == configuration.insets && copy.insets == configuration.insets)
    }

    /// A retry (`seq` equal to the last) answers the last plan exactly, whether it moved views or
    /// nothing (a bare plan is kept as its `seq` and offset only), and changes nothing.
    @Test func aRetryAnswersTheLastPlanWhetherItMovedViewsOrNothing() throws {
        var session = try ViewportSession(layout: try Self.rows(400), configuration: SessionConfiguration(viewport: Size(width: 300, height: 600)))
        #expect(try session.apply(ViewportUpdate(offset: .zero, seq: 0)) == session.lastPlan)
        var bare = 0
        var moving = 0
        for (k, y) in [1.0, 2, 3, 300, 301, 5_000, 5_000, 5_003, 40, 41].enumerated() {
            let seq = UInt64(k + 1)
            let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y), seq: seq))
            #expect(plan.seq == seq && plan.offset == Point(x: 0, y: y))
            if plan.isEmpty { bare += 1 } else { moving += 1 }
            #expect(session.lastPlan == plan)
            let visible = session.visible
            #expect(try session.apply(ViewportUpdate(offset: Point(x: 0, y: y), seq: seq)) == plan)
            #expect(session.seq == seq && session.visible == visible)
        }
        #expect(bare > 0 && moving > 0)
    }
}
