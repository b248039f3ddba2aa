import Testing
import ViewportCore
import ViewportTestSupport

/// Resync: a session that lost updates (restored from an older snapshot) adopts the views its
/// client really has, then plans from them.
struct ResyncTests {
    /// The client's views as a resync body.
    static func state(of client: SimulatedClient, seq: UInt64, offset: Point, viewport: Size?) -> ResyncState {
        ResyncState(
            seq: seq, offset: offset, viewport: viewport,
            visible: client.shown.map { PlanEntry(item: $0.key, view: $0.value) }.sorted { $0.item < $1.item },
            pool: client.pools.sorted { $0.key < $1.key }.map { reuse, entries in
                (reuse, entries.map { ResyncState.PooledView(view: $0.view, item: $0.lastItem) })
            })
    }

    @Test(arguments: LayoutKind.allCases, 0..<4)
    func aSessionBehindItsClientAdoptsTheClientsViewsAndContinuesCorrectly(kind: LayoutKind, seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 6151 &+ UInt64(kind.rawValue.count))
        print("ResyncTests seed \(seed) kind \(kind)")
        let specs = randomLayoutSpecs(kind, count: [5, 40, 300, 300][seed], using: &rng)
        let layout = try makeLayout(specs)
        let caps = PlanPropertyTests.capChoices[seed % PlanPropertyTests.capChoices.count]
        var viewport = Size(width: 320, height: 480)
        var offset = Point.zero
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: viewport, buffer: 20, pool: caps, prefetch: 0.5, lazyLoad: true))
        var client = SimulatedClient(specs: specs, caps: caps)
        // What the test sent, with its own arithmetic (never the session's region).
        func expected() -> [Int] { oracle(specs, SentRegion(offset: offset, viewport: viewport, buffer: 20)) }
        client.apply(session.lastPlan, expected: expected())
        func randomMove() {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: offset = Point(x: offset.x + Double(Int.random(in: -20...20, using: &rng)), y: offset.y + Double(Int.random(in: -60...60, using: &rng)))
            case 6..<9: offset = Point(x: Double(Int.random(in: -100...1200, using: &rng)), y: Double(Int.random(in: -100...3000, using: &rng)))
            default: viewport = Size(width: viewport.height, height: viewport.width)
            }
        }
        var stored = session.snapshot()
        for round in 0..<6 {
            // The owner applies updates; some reach the store, then it dies.
            for _ in 0..<Int.random(in: 1...30, using: &rng) {
                randomMove()
                let plan = try session.apply(ViewportUpdate(offset: offset, size: viewport, seq: session.seq + 1))
                client.apply(plan, expected: expected())
                if Int.random(in: 0..<4, using: &rng) == 0 { stored = session.snapshot() }
            }
            // The next owner starts from the stored state, above every handle handed out (the
            // store reserves handle blocks ahead), and the client is ahead of it.
            var next = try ViewportSession(restoring: stored, layouts: { $0 == layout.digest ? layout : nil })
            next.reserveHandles(from: session.nextHandle)
            let clientSeq = session.seq
            if next.seq != clientSeq {
                #expect(throws: SessionError.sequenceConflict(current: next.seq, sent: clientSeq + 1)) {
                    try next.apply(ViewportUpdate(offset: offset, seq: clientSeq + 1))
                }
            }
            try next.resync(Self.state(of: client, seq: clientSeq, offset: offset, viewport: viewport))
            #expect(next.seq == clientSeq)
            #expect(next.visible == client.shown.map { PlanEntry(item: $0.key, view: $0.value) }.sorted { $0.item < $1.item })
            #expect(try next.apply(ViewportUpdate(offset: Point(x: -1, y: -1), seq: clientSeq)) == Plan(seq: clientSeq, offset: offset))
            // A hop before the first update after the resync keeps the pending full diff.
            if round % 2 == 1 { next = try ViewportSession(restoring: next.snapshot(), layouts: { _ in layout }) }
            session = next
            // From here, every plan follows the rules against the client's real views.
            for _ in 0..<Int.random(in: 1...20, using: &rng) {
                randomMove()
                let plan = try session.apply(ViewportUpdate(offset: offset, size: viewport, seq: session.seq + 1))
                client.apply(plan, expected: expected())
            }
            stored = session.snapshot()
        }
    }

    @Test(arguments: [false, true])
    func theClientsShownItemsNeedNotBeWhatIsMaterialized(hopBeforeTheNextUpdate: Bool) throws {
        let layout = try makeLayout((0..<50).map { ItemSpec(id: "r\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 375, height: 100), reuse: "row") })
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 300), buffer: 0))
        // The client shows r10 and r30 (stale), pools a view of r1; the screen at 1000 needs r10…r12.
        try session.resync(ResyncState(
            seq: 40, offset: Point(x: 0, y: 1000), visible: [PlanEntry(item: 10, view: 7), PlanEntry(item: 30, view: 3)],
            pool: [("row", [ResyncState.PooledView(view: 12, item: 1)])]))
        #expect(session.nextHandle == 13)
        if hopBeforeTheNextUpdate { session = try ViewportSession(restoring: session.snapshot(), layouts: { _ in layout }) }
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000), seq: 41))
        #expect(plan.recycle == [PlanEntry(item: 30, view: 3)])
        #expect(plan.reuse == [ReuseEntry(item: 11, view: 3, rebind: true), ReuseEntry(item: 12, view: 12, rebind: true)])
        #expect(plan.create.isEmpty)
        #expect(session.visible.map(\.item) == [10, 11, 12])
    }

    @Test func invalidResyncsNameTheFieldAndChangeNothing() throws {
        var builder = LayoutBuilder()
        for k in 0..<20 { try builder.append(id: "r\(k)", rect: Rect(x: 0, y: Double(k) * 100, width: 375, height: 100), reuse: k % 5 == 0 ? "ad" : "row") }
        let layout = try builder.build()
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 300)))
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 450), seq: 1))
        let before = session.snapshot()
        func expectInvalid(_ field: String, _ state: ResyncState, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try session.resync(state)
                Issue.record("accepted", sourceLocation: sourceLocation)
            } catch {
                if case .invalid(let got, _) = error {
                    #expect(got == field, sourceLocation: sourceLocation)
                } else {
                    Issue.record("\(error)", sourceLocation: sourceLocation)
                }
            }
            #expect(session.snapshot() == before, sourceLocation: sourceLocation)
        }
        let origin = Point(x: 0, y: 450)
        expectInvalid("visible[1].view", ResyncState(seq: 5, offset: origin, visible: [PlanEntry(item: 4, view: 1), PlanEntry(item: 6, view: 0)]))
        expectInvalid("visible[1].view", ResyncState(seq: 5, offset: origin, visible: [PlanEntry(item: 4, view: 2), PlanEntry(item: 6, view: 2)]))
        expectInvalid("visible[1].id", ResyncState(seq: 5, offset: origin, visible: [PlanEntry(item: 4, view: 1), PlanEntry(item: 4, view: 2)]))
        expectInvalid("pool.row[0].view", ResyncState(
            seq: 5, offset: origin, visible: [PlanEntry(item: 4, view: 9)], pool: [("row", [ResyncState.PooledView(view: 9, item: 1)])]))
        expectInvalid("pool.row[1].id", ResyncState(
            seq: 5, offset: origin, visible: [],
            pool: [("row", [ResyncState.PooledView(view: 3, item: 1), ResyncState.PooledView(view: 4, item: 5)])]))
        expectInvalid("pool.banner", ResyncState(seq: 5, offset: origin, visible: [], pool: [("banner", [])]))
        expectInvalid("offset", ResyncState(seq: 5, offset: Point(x: .nan, y: 0), visible: []))
        expectInvalid("viewport", ResyncState(seq: 5, offset: origin, viewport: Size(width: -1, height: 3), visible: []))
    }
}
