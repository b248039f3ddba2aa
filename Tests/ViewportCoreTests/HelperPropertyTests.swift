import Testing
import ViewportCore
import ViewportTestSupport

/// Random traces on sessions with helpers on: every plan rule still holds (checked by the
/// simulated client), and the helpers' outputs match brute-force models.
struct HelperPropertyTests {
    @Test(arguments: LayoutKind.allCases, 0..<4)
    func randomTracesWithHelpersFollowEveryPlanRuleAndTheHelpersModels(kind: LayoutKind, seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 31337 &+ UInt64(kind.rawValue.count))
        let count = [5, 40, 300][Int.random(in: 0..<3, using: &rng)]
        let specs = randomLayoutSpecs(kind, count: count, using: &rng)
        let layout = try makeLayout(specs)
        let caps = PlanPropertyTests.capChoices[seed % PlanPropertyTests.capChoices.count]
        let viewport = Size(width: Double(Int.random(in: 50...500, using: &rng)), height: Double(Int.random(in: 50...800, using: &rng)))
        let buffer = Double([0, 20, 37][Int.random(in: 0..<3, using: &rng)])
        let offset = Point(x: Double(Int.random(in: -50...200, using: &rng)), y: Double(Int.random(in: -50...400, using: &rng)))
        var sent = SentState(offset: offset, viewport: viewport, buffer: buffer)
        let seconds = [0.0, 0.25, 1][Int.random(in: 0..<3, using: &rng)]
        let configuration = SessionConfiguration(
            viewport: viewport, offset: offset, buffer: buffer, pool: caps,
            paging: PagingOptions(mode: PagingMode.allCases[seed % 4]), prefetch: seconds, lazyLoad: true, exposure: true,
            links: ["f": LinkedScrollView(viewport: Size(width: 100, height: 100), contentSize: Size(width: 400, height: 900))])
        var session = try ViewportSession(layout: layout, configuration: configuration)
        var client = SimulatedClient(specs: specs, caps: caps)
        client.apply(session.lastPlan, expected: oracle(specs, sent.region))
        client.check(session)

        func screen(_ o: Point, _ v: Size) -> Set<Int> { Set(oracle(specs, SentRegion(offset: o, viewport: v, buffer: 0))) }
        var onScreen = screen(sent.offset, sent.viewport)
        var times: [Int: Int] = [:]
        for item in onScreen { times[item] = 1 }
        #expect(session.lastPlan.enter.map(\.item) == onScreen.sorted())
        var predicted: Set<Int> = []
        var loaded = Set(session.lastPlan.load)
        var fromDragEnd: Set<Int> = []
        #expect(loaded == Set(oracle(specs, sent.region)))

        for step in 1...250 {
            var size: Size? = nil
            var offset = sent.offset
            let phase = ScrollPhase.allCases[Int.random(in: 0..<5, using: &rng)]
            var velocity: Point? = nil
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<60:
                offset = Point(x: offset.x + Double(Int.random(in: -20...20, using: &rng)), y: offset.y + Double(Int.random(in: -30...30, using: &rng)))
                velocity = Point(x: Double(Int.random(in: -500...500, using: &rng)), y: Double(Int.random(in: -3000...3000, using: &rng)))
            case 60..<85:
                offset = Point(x: offset.x, y: offset.y + Double(Int.random(in: -2000...2000, using: &rng)))
            case 85..<95:
                size = Size(width: sent.viewport.height, height: sent.viewport.width)
            default:
                offset = Point(x: Double(Int.random(in: -300...1500, using: &rng)), y: Double(Int.random(in: -300...3000, using: &rng)))
            }
            sent.send(offset: offset, size: size)
            let select: Selection? = layout.count > 0 && Int.random(in: 0..<10, using: &rng) == 0
                ? .item(Int.random(in: 0..<layout.count, using: &rng)) : nil
            let previousScreen = onScreen
            let plan = try session.apply(ViewportUpdate(offset: offset, size: size, velocity: velocity, phase: phase, seq: UInt64(step), select: select))
            let materialized = oracle(specs, sent.region)
            client.apply(plan, expected: materialized)
            client.check(session)
            let materializedSet = Set(materialized)

            // exposure
            onScreen = screen(sent.offset, sent.viewport)
            let entered = onScreen.subtracting(previousScreen).sorted()
            for item in entered { times[item, default: 0] += 1 }
            #expect(plan.enter == entered.map { ExposureEntry(item: $0, times: times[$0] ?? 0) })
            #expect(plan.leave == previousScreen.subtracting(onScreen).sorted())

            // prefetch: the swept box, minus what is materialized
            var now: Set<Int> = []
            if let v = velocity {
                let r = sent.region
                let d = Point(x: v.x * seconds, y: v.y * seconds)
                let swept = SentRegion(minX: min(r.minX, r.minX + d.x), minY: min(r.minY, r.minY + d.y),
                                   maxX: max(r.maxX, r.maxX + d.x), maxY: max(r.maxY, r.maxY + d.y))
                now = Set(oracle(specs, swept)).subtracting(materializedSet)
            }
            #expect(plan.prefetch == now.subtracting(predicted).sorted())
            #expect(plan.cancelPrefetch == predicted.subtracting(now).subtracting(materializedSet).sorted())
            predicted = now

            // lazyLoad, modelled from the text of docs/api.md "Scrolling helpers"
            let left = plan.recycle.map(\.item) + plan.discard.map(\.item)
            loaded.subtract(left)
            fromDragEnd.subtract(left)
            switch phase {
            case .dragBegin:
                loaded.subtract(fromDragEnd.subtracting(materializedSet))
                fromDragEnd = []
                #expect(plan.load == materializedSet.subtracting(loaded).sorted())
            case .idle:
                #expect(plan.load == materializedSet.subtracting(loaded).sorted())
            case .dragEnd:
                let target = try #require(plan.target)
                #expect(plan.load == screen(target, sent.viewport).subtracting(loaded).sorted())
                fromDragEnd.formUnion(plan.load)
            case .dragging, .decelerating:
                #expect(plan.load.isEmpty)
            }
            loaded.formUnion(plan.load)

            #expect(plan.linked.count == 1)
            #expect(plan.selected == session.selected)
            #expect((plan.target != nil) == (phase == .dragEnd))
        }
    }
}
