import Testing
import ViewportCore
import ViewportTestSupport

/// Random traces against `ViewabilityModel` (docs/api.md's text, by brute force): direction-aware
/// buffers, visible-fraction thresholds (0, 0.5, 1) with zero-size items, `viewed` after `minTime`
/// of client time, updates with and without velocity and time, time steps of varying length, and
/// clocks going back (422, nothing changes). Every plan also follows every rule of "Plans"
/// (`SimulatedClient`).
///
/// Each case prints its seed; replay one with `swift test --filter ViewabilityPropertyTests` and
/// the seed's arguments (the test's arguments are the seed).
struct ViewabilityPropertyTests {
    static let thresholds = [0.0, 0.5, 1]
    static let minTimes: [Double?] = [nil, 0, 0.5, 2]

    @Test(arguments: LayoutKind.allCases, 0..<6)
    func randomTracesMatchTheModel(kind: LayoutKind, seed: Int) throws {
        print("ViewabilityPropertyTests.randomTracesMatchTheModel kind \(kind) seed \(seed)")
        var rng = SeededRandom(seed: UInt64(seed) &* 7919 &+ UInt64(kind.rawValue.count) &* 131)
        var specs = randomLayoutSpecs(kind, count: [8, 60, 250][Int.random(in: 0..<3, using: &rng)], using: &rng)
        // Zero-size items: points and lines, some on the screen's edges' paths.
        for k in 0..<Int.random(in: 3...12, using: &rng) {
            let x = Double(Int.random(in: -50...800, using: &rng))
            let y = Double(Int.random(in: -50...2000, using: &rng))
            let (w, h) = [(0.0, 0.0), (0, 30), (40, 0)][k % 3]
            specs.insert(ItemSpec(id: "zero-\(k)", rect: Rect(x: x, y: y, width: w, height: h), reuse: "z"), at: Int.random(in: 0...specs.count, using: &rng))
        }
        let layout = try makeLayout(specs)
        let rects = specs.map { [$0.rect.x, $0.rect.y, $0.rect.width, $0.rect.height] }

        let uniform = Int.random(in: 0..<4, using: &rng) == 0
        let ahead = Double([0, 40, 150, 600][Int.random(in: 0..<4, using: &rng)])
        let behind = uniform ? ahead : Double([0, 10, 40, 200][Int.random(in: 0..<4, using: &rng)])
        let threshold = Self.thresholds[(seed + kind.rawValue.count) % 3]
        let minTime = Self.minTimes[Int.random(in: 0..<4, using: &rng)]
        var viewport = [Double(Int.random(in: 60...400, using: &rng)), Double(Int.random(in: 60...700, using: &rng))]
        var offset = [Double(Int.random(in: -50...200, using: &rng)), Double(Int.random(in: -50...400, using: &rng))]
        let time: Double? = Int.random(in: 0..<3, using: &rng) == 0 ? nil : Double(Int.random(in: -5...100, using: &rng)) / 4

        var configuration = SessionConfiguration(viewport: Size(width: viewport[0], height: viewport[1]), offset: Point(x: offset[0], y: offset[1]), exposure: true)
        configuration.buffer = Buffer(ahead: ahead, behind: behind)
        configuration.exposureRule = ExposureRule(threshold: threshold, minTime: minTime)
        configuration.time = time
        let context = "kind \(kind) seed \(seed): ahead \(ahead) behind \(behind) threshold \(threshold) minTime \(String(describing: minTime))"

        var session = try ViewportSession(layout: layout, configuration: configuration)
        var model = ViewabilityModel(rects: rects, ahead: ahead, behind: behind, threshold: threshold, minTime: minTime, offset: offset, viewport: viewport)
        var client = SimulatedClient(specs: specs, caps: PoolCaps())
        let opening = model.open(time: time)
        client.apply(session.lastPlan, expected: opening.materialized)
        Self.check(session.lastPlan, opening, "\(context) opening")

        var lastTime = time
        for step in 1...300 {
            // A clock that goes back: 422 naming `time`, and nothing changes.
            if let last = lastTime, Int.random(in: 0..<25, using: &rng) == 0 {
                let before = (session.seq, session.offset, session.time)
                let back = ViewportUpdate(offset: Point(x: offset[0] + 5, y: offset[1] + 5), seq: UInt64(step), time: last - 0.25)
                #expect(ViewabilityTests.refusedField { try session.apply(back) } == "time", "\(context) step \(step)")
                #expect(session.seq == before.0 && session.offset == before.1 && session.time == before.2, "\(context) step \(step)")
            }

            var size: [Double]? = nil
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<55:
                offset = [offset[0] + Double(Int.random(in: -12...12, using: &rng)), offset[1] + Double(Int.random(in: -35...35, using: &rng))]
            case 55..<70:
                offset = [offset[0], offset[1] + Double(Int.random(in: -8...8, using: &rng))]
            case 70..<80:
                break  // still
            case 80..<88:
                size = [viewport[1], viewport[0]]
            default:
                offset = [Double(Int.random(in: -300...900, using: &rng)), Double(Int.random(in: -300...2500, using: &rng))]
            }
            if let size { viewport = size }
            var velocity: [Double]? = nil
            if Int.random(in: 0..<5, using: &rng) < 3 {
                // Components may be zero, or against the offset change: the velocity decides.
                velocity = [Double([-800, 0, 0, 300][Int.random(in: 0..<4, using: &rng)]), Double(Int.random(in: -3000...3000, using: &rng) / 500 * 500)]
            }
            var t: Double? = nil
            if Int.random(in: 0..<10, using: &rng) < 7 {
                let dt = [0, 0.016, 0.125, 0.5, 1, 2.5][Int.random(in: 0..<6, using: &rng)]
                t = (lastTime ?? Double(Int.random(in: 0...10, using: &rng))) + dt
                lastTime = t
            }
            let update = ViewportUpdate(
                offset: Point(x: offset[0], y: offset[1]), size: size.map { Size(width: $0[0], height: $0[1]) },
                velocity: velocity.map { Point(x: $0[0], y: $0[1]) }, seq: UInt64(step), time: t)
            let plan = try session.apply(update)
            let expected = model.update(offset: offset, viewport: size, velocity: velocity, time: t)
            client.apply(plan, expected: expected.materialized)
            Self.check(plan, expected, "\(context) step \(step)")
            #expect(session.time == lastTime, "\(context) step \(step)")
            if step % 50 == 0 {
                #expect(session.onScreen == model.onScreen.sorted(), "\(context) step \(step)")
            }
        }
    }

    static func check(_ plan: Plan, _ expected: ViewabilityModel.Step, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(plan.enter.map { [$0.item, $0.times] } == expected.enter, "\(context): enter", sourceLocation: sourceLocation)
        #expect(plan.leave == expected.leave, "\(context): leave", sourceLocation: sourceLocation)
        #expect(plan.viewed.map { [$0.item, $0.times] } == expected.viewed, "\(context): viewed", sourceLocation: sourceLocation)
    }
}
