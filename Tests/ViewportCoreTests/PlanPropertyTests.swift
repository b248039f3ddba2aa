import Testing
import ViewportCore
import ViewportTestSupport

/// Random layouts and random scroll traces, each plan checked by a simulated client against a
/// reference planner and a brute-force oracle.
struct PlanPropertyTests {
    static let capChoices: [PoolCaps] = [
        PoolCaps(), PoolCaps(max: 0), PoolCaps(max: 1), PoolCaps(max: 3, perReuse: ["a": 0, "b": 5]),
        PoolCaps(perReuse: ["c": 1]),
    ]

    @Test(arguments: LayoutKind.allCases, 0..<6)
    func randomTracesFollowEveryPlanRule(kind: LayoutKind, seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7919 &+ UInt64(kind.rawValue.count))
        let count = [0, 1, 5, 40, 300][Int.random(in: 0..<5, using: &rng)]
        let specs = randomLayoutSpecs(kind, count: count, using: &rng)
        let layout = try makeLayout(specs)
        let caps = Self.capChoices[seed % Self.capChoices.count]
        var sent = SentState(
            offset: Point(x: Double(Int.random(in: -50...200, using: &rng)), y: Double(Int.random(in: -50...400, using: &rng))),
            viewport: Size(width: Double(Int.random(in: 0...500, using: &rng)), height: Double(Int.random(in: 0...800, using: &rng))),
            buffer: Double([0, 20, 37][Int.random(in: 0..<3, using: &rng)]))
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: sent.viewport, offset: sent.offset, buffer: sent.buffer, pool: caps))
        var client = SimulatedClient(specs: specs, caps: caps)
        client.apply(session.lastPlan, expected: oracle(specs, sent.region))
        client.check(session)

        let extent = max(layout.contentSize.width, layout.contentSize.height, 500)
        for step in 1...300 {
            var size: Size? = nil
            var offset = sent.offset
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<55:  // small steps, mostly along one axis
                let dy = Double(Int.random(in: -30...30, using: &rng))
                let dx = Int.random(in: 0..<4, using: &rng) == 0 ? Double(Int.random(in: -30...30, using: &rng)) : 0
                offset = Point(x: offset.x + dx, y: offset.y + dy)
            case 55..<80:  // flings
                let d = Double(Int.random(in: -2000...2000, using: &rng))
                offset = kind == .horizontal ? Point(x: offset.x + d, y: offset.y) : Point(x: offset.x, y: offset.y + d)
            case 80..<92:  // jumps, including negative (bounce) offsets
                offset = Point(x: Double(Int.random(in: -300...Int(extent), using: &rng)), y: Double(Int.random(in: -300...Int(extent), using: &rng)))
            case 92..<97:  // rotation, sometimes with a small scroll
                size = Size(width: sent.viewport.height, height: sent.viewport.width)
                if Bool.random(using: &rng) { offset.y += Double(Int.random(in: -10...10, using: &rng)) }
            default:  // resize and fractional offsets
                size = Size(width: Double(Int.random(in: 0...600, using: &rng)), height: Double(Int.random(in: 0...900, using: &rng)) + 0.5)
                offset = Point(x: offset.x + 0.25, y: offset.y - 0.75)
            }
            sent.send(offset: offset, size: size)
            let plan = try session.apply(ViewportUpdate(offset: offset, size: size, seq: UInt64(step)))
            #expect(plan.seq == UInt64(step))
            client.apply(plan, expected: oracle(specs, sent.region))
            client.check(session)
        }
    }

    @Test func retryAnswersTheLastPlanUnchangedAndAppliesNothing() throws {
        var rng = SeededRandom(seed: 3)
        let layout = try makeLayout(randomLayoutSpecs(.vertical, count: 200, using: &rng))
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 667)))
        let first = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 900), seq: 1))
        let stats = session.stats
        let retry = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5000), seq: 1))
        #expect(retry == first)
        #expect(session.offset == Point(x: 0, y: 900))
        #expect(session.stats == stats)
        #expect(throws: SessionError.sequenceConflict(current: 1, sent: 3)) {
            try session.apply(ViewportUpdate(offset: Point(x: 0, y: 0), seq: 3)) }
        #expect(throws: SessionError.sequenceConflict(current: 1, sent: 0)) {
            try session.apply(ViewportUpdate(offset: Point(x: 0, y: 0), seq: 0)) }
        #expect(session.seq == 1)
        let second = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 0)))
        #expect(second.seq == 2)
    }

    @Test func invalidUpdatesChangeNothing() throws {
        let layout = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: nil)])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 10, height: 10)))
        #expect(throws: SessionError.invalid(field: "size", reason: "width and height must be finite and not negative")) {
            try session.apply(ViewportUpdate(offset: .zero, size: Size(width: -1, height: 5)))
        }
        #expect(throws: SessionError.self) { try session.apply(ViewportUpdate(offset: Point(x: .nan, y: 0))) }
        #expect(session.seq == 0)
        #expect(throws: SessionError.invalid(field: "buffer", reason: "must be finite and not negative")) {
            try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 1, height: 1), buffer: -1))
        }
        #expect(throws: SessionError.invalid(field: "pool.perReuse.x", reason: "must not be negative")) {
            try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 1, height: 1), pool: PoolCaps(perReuse: ["x": -2])))
        }
    }

    @Test func itemWithoutReuseIdentifierIsDiscardedAndCreatedAgain() throws {
        let layout = try makeLayout([
            ItemSpec(id: "ad", rect: Rect(x: 0, y: 0, width: 100, height: 100), reuse: nil),
            ItemSpec(id: "far", rect: Rect(x: 0, y: 1000, width: 100, height: 100), reuse: ""),
        ])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 100), buffer: 0))
        let away = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000)))
        #expect(away.discard == [PlanEntry(item: 0, view: 1)])
        #expect(away.create == [PlanEntry(item: 1, view: 2)])
        let back = try session.apply(ViewportUpdate(offset: .zero))
        #expect(back.create == [PlanEntry(item: 0, view: 3)])
        #expect(session.pooledViews.isEmpty)
    }

    @Test func returningItemTakesBackItsOwnViewWithoutRebind() throws {
        let items = (0..<10).map { ItemSpec(id: "row\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 100, height: 100), reuse: "row") }
        let layout = try makeLayout(items)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 200), buffer: 0))
        // Rows 0 and 1 shown; shrinking to row 1 alone pools row 0's view, nothing takes it.
        let shrink = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 100), size: Size(width: 100, height: 100)))
        #expect(shrink.recycle == [PlanEntry(item: 0, view: 1)])
        let back = try session.apply(ViewportUpdate(offset: .zero, size: Size(width: 100, height: 200)))
        #expect(back.reuse == [ReuseEntry(item: 0, view: 1, rebind: false)])
        #expect(session.stats.rebindFree == 1)
    }
}

struct ViewLimitTests {
    static func grid(_ count: Int) throws -> Layout {
        try makeLayout((0..<count).map { ItemSpec(id: "c\($0)", rect: Rect(x: Double($0 % 10) * 10, y: Double($0 / 10) * 10, width: 10, height: 10), reuse: "cell") })
    }

    @Test func moreMaterializedItemsThanTheLimitIsRefusedAndChangesNothing() throws {
        let layout = try Self.grid(1000)
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100), buffer: 0)
        configuration.maxViews = 150
        var session = try ViewportSession(layout: layout, configuration: configuration)
        #expect(session.visible.count == 100)
        let before = (session.seq, session.offset, session.visible, session.stats)
        // Growing the viewport to 100 × 200 would materialize 200 items.
        #expect(throws: SessionError.self) { try session.apply(ViewportUpdate(offset: .zero, size: Size(width: 100, height: 200))) }
        #expect(session.seq == before.0 && session.offset == before.1 && session.visible == before.2 && session.stats == before.3)
        // Within the limit it applies, and the next steps work from the unchanged state.
        #expect(try session.apply(ViewportUpdate(offset: Point(x: 0, y: 40), size: Size(width: 100, height: 140))).seq == 1)
        #expect(session.visible.count == 140)
        configuration.maxViews = 50
        #expect(throws: SessionError.self) { try ViewportSession(layout: layout, configuration: configuration) }
        // A layout change that would exceed it is refused too.
        let dense = try makeLayout((0..<1000).map { ItemSpec(id: "d\($0)", rect: Rect(x: 0, y: 60, width: 1, height: 1)) })
        #expect(throws: SessionError.self) { try session.changeLayout(to: dense, anchor: .none) }
        #expect(session.layout === layout && session.seq == 1)
    }
}
