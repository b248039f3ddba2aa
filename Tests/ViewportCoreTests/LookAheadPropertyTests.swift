import Testing
import ViewportCore
import ViewportTestSupport

/// The look-ahead by the round trip (docs/api.md "Round trips") against a model written from the
/// text: random traces with and without `rtt`, velocities from zero to the largest double, every
/// phase, caps from none to the default, several deceleration rates, buffers that lean. Every plan
/// also follows every rule of "Plans" (`SimulatedClient`), and a session never told a round trip
/// plans exactly as before.
///
/// Each case prints its seed; replay one with `swift test --filter LookAheadPropertyTests`.
struct LookAheadPropertyTests {
    /// The model: what the client sent, and the region docs/api.md says it materializes.
    struct Model {
        var offset: Point
        var viewport: Size
        let ahead: Double
        let behind: Double
        /// `lookAhead.max`, nil for the default.
        let cap: Double?
        let rate: Double
        /// The last `rtt` sent (the session keeps it).
        var rtt: Double?
        /// The region of the last update, as edges.
        var region: SentRegion

        init(offset: Point, viewport: Size, ahead: Double, behind: Double, cap: Double?, rate: Double, rtt: Double?) {
            (self.offset, self.viewport, self.ahead, self.behind, self.cap, self.rate, self.rtt) = (offset, viewport, ahead, behind, cap, rate, rtt)
            let still = Swift.max(ahead, behind)
            region = SentRegion(offset: offset, viewport: viewport, buffer: still)
        }

        /// Extents (low side, high side) along one axis: the buffer that leans toward the motion
        /// (the velocity's sign, else the offset's change), plus the look-ahead on the leading side.
        func extents(velocity v: Double?, from old: Double, to new: Double, length: Double, lifted: Bool) -> (Double, Double) {
            let direction = (v ?? 0) != 0 ? ((v ?? 0) > 0 ? 1 : -1) : (new > old ? 1 : new < old ? -1 : 0)
            guard direction != 0 else { return (Swift.max(ahead, behind), Swift.max(ahead, behind)) }
            var extra = 0.0
            if let v, v != 0, let rtt {
                // What the viewport covers in one round trip and one frame, at most the cap (by
                // default: viewport, buffers and look-ahead within 2.5 viewport lengths).
                let cap = self.cap ?? Swift.max(0, 2.5 * length - length - ahead - behind)
                let covered = abs(v) * (rtt + 1.0 / 60)
                extra = covered < cap ? covered : cap
                if lifted {
                    // Never past the end of the deceleration projection.
                    let rest = abs(v) / 1000 * (rate / (1 - rate))
                    if rest < extra { extra = rest }
                }
            }
            return direction > 0 ? (behind, ahead + extra) : (ahead + extra, behind)
        }

        mutating func update(offset new: Point, size: Size?, velocity: Point?, phase: ScrollPhase, rtt sent: Double?) {
            if let sent { rtt = sent }
            if let size { viewport = size }
            let lifted = phase == .dragEnd || phase == .decelerating
            let (left, right) = extents(velocity: velocity?.x, from: offset.x, to: new.x, length: viewport.width, lifted: lifted)
            let (top, bottom) = extents(velocity: velocity?.y, from: offset.y, to: new.y, length: viewport.height, lifted: lifted)
            offset = new
            region = SentRegion(
                minX: new.x - left, minY: new.y - top, maxX: new.x + viewport.width + right, maxY: new.y + viewport.height + bottom)
        }
    }

    static let caps: [Double?] = [nil, nil, 0, 120, 5000]
    static let rates = [PagingOptions.normalDecelerationRate, 0.99, 0.9]
    static let rtts: [Double?] = [nil, 0, 0.05, 0.1, 0.15, 0.4, 10]
    static let speeds: [Double] = [0, 0, 300, 1500, 4000, 8000, 16000, 1e6, 1e308]

    @Test(arguments: LayoutKind.allCases, 0..<5)
    func randomTracesMatchTheModel(kind: LayoutKind, seed: Int) throws {
        print("LookAheadPropertyTests.randomTracesMatchTheModel kind \(kind) seed \(seed)")
        var rng = SeededRandom(seed: UInt64(seed) &* 6007 &+ UInt64(kind.rawValue.count) &* 17)
        let specs = randomLayoutSpecs(kind, count: [10, 80, 400][Int.random(in: 0..<3, using: &rng)], using: &rng)
        let layout = try makeLayout(specs)
        let ahead = Double([0, 20, 250][Int.random(in: 0..<3, using: &rng)])
        let behind = Bool.random(using: &rng) ? ahead : Double([0, 40][Int.random(in: 0..<2, using: &rng)])
        let cap = Self.caps[Int.random(in: 0..<Self.caps.count, using: &rng)]
        let rate = Self.rates[Int.random(in: 0..<Self.rates.count, using: &rng)]
        let openingRTT = Self.rtts[Int.random(in: 0..<Self.rtts.count, using: &rng)]
        let viewport = Size(width: Double(Int.random(in: 60...400, using: &rng)), height: Double(Int.random(in: 60...700, using: &rng)))
        let offset = Point(x: Double(Int.random(in: -50...200, using: &rng)), y: Double(Int.random(in: -50...400, using: &rng)))
        let context = "kind \(kind) seed \(seed): buffer \(ahead)/\(behind) cap \(String(describing: cap)) rate \(rate)"

        var configuration = SessionConfiguration(viewport: viewport, offset: offset, paging: PagingOptions(decelerationRate: rate))
        configuration.buffer = Buffer(ahead: ahead, behind: behind)
        configuration.lookAhead = LookAhead(max: cap)
        configuration.rtt = openingRTT
        var session = try ViewportSession(layout: layout, configuration: configuration)
        // The same session never told a round trip: what every session did before.
        var plain = configuration
        plain.rtt = nil
        plain.lookAhead = .standard
        var twin = try ViewportSession(layout: layout, configuration: plain)
        var model = Model(offset: offset, viewport: viewport, ahead: ahead, behind: behind, cap: cap, rate: rate, rtt: openingRTT)
        var client = SimulatedClient(specs: specs, caps: PoolCaps())
        client.apply(session.lastPlan, expected: oracle(specs, model.region))
        #expect(session.lastPlan == twin.lastPlan, "\(context): the opening plan has no motion to look ahead on")
        var lookedAhead = false

        for step in 1...250 {
            // A bad round trip: 422 naming `rtt`, and nothing changes.
            if Int.random(in: 0..<20, using: &rng) == 0 {
                let bad = [-0.001, .nan, .infinity, -.infinity, 10.000001, 1e308][Int.random(in: 0..<6, using: &rng)]
                let before = (session.seq, session.offset, session.region, session.rtt, session.snapshot())
                let update = ViewportUpdate(offset: Point(x: model.offset.x, y: model.offset.y + 50), velocity: Point(x: 0, y: 4000), seq: UInt64(step), rtt: bad)
                #expect(ViewabilityTests.refusedField { try session.apply(update) } == "rtt", "\(context) step \(step) rtt \(bad)")
                #expect(session.seq == before.0 && session.offset == before.1 && session.region == before.2 && session.rtt == before.3)
                #expect(session.snapshot() == before.4, "\(context) step \(step): nothing changed")
            }

            var offset = model.offset
            var size: Size?
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<60:
                offset = Point(x: offset.x + Double(Int.random(in: -10...10, using: &rng)), y: offset.y + Double(Int.random(in: -150...150, using: &rng)))
            case 60..<70:
                break
            case 70..<78:
                size = Size(width: model.viewport.height, height: model.viewport.width)
            default:
                offset = Point(x: Double(Int.random(in: -300...900, using: &rng)), y: Double(Int.random(in: -300...3000, using: &rng)))
            }
            var velocity: Point?
            if Int.random(in: 0..<5, using: &rng) > 0 {
                let speed = Self.speeds[Int.random(in: 0..<Self.speeds.count, using: &rng)]
                let cross = [0.0, 0, 200, -1500][Int.random(in: 0..<4, using: &rng)]
                velocity = Point(x: cross, y: Bool.random(using: &rng) ? speed : -speed)
            }
            let rtt: Double? = Int.random(in: 0..<3, using: &rng) == 0 ? Self.rtts[Int.random(in: 0..<Self.rtts.count, using: &rng)] : nil
            let phase = ScrollPhase.allCases[Int.random(in: 0..<ScrollPhase.allCases.count, using: &rng)]
            let update = ViewportUpdate(offset: offset, size: size, velocity: velocity, phase: phase, seq: UInt64(step), rtt: rtt)
            let plan = try session.apply(update)
            model.update(offset: offset, size: size, velocity: velocity, phase: phase, rtt: rtt)
            client.apply(plan, expected: oracle(specs, model.region))
            client.check(session)
            #expect(session.rtt == model.rtt, "\(context) step \(step)")

            // Bounded: with the default cap, the region along an axis of motion stays within 2.5
            // viewport lengths (when the buffers leave room for it).
            let r = session.region
            if cap == nil, session.motion.x != 0, ahead + behind <= 1.5 * model.viewport.width {
                #expect(r.maxX - r.minX <= 2.5 * model.viewport.width + 1e-6, "\(context) step \(step)")
            }
            if cap == nil, session.motion.y != 0, ahead + behind <= 1.5 * model.viewport.height {
                #expect(r.maxY - r.minY <= 2.5 * model.viewport.height + 1e-6, "\(context) step \(step)")
            }
            #expect(r.minY.isFinite && r.maxY.isFinite, "\(context) step \(step)")
            if model.rtt == nil || cap == 0 || velocity == nil { #expect(!session.motion.looksAhead, "\(context) step \(step)") }

            // Until the session first looks ahead, the twin plans the same, byte for byte; it
            // never materializes an item the session does not.
            var plainUpdate = update
            plainUpdate.rtt = nil
            let plainPlan = try twin.apply(plainUpdate)
            lookedAhead = lookedAhead || session.motion.looksAhead
            if !lookedAhead {
                #expect(plan == plainPlan, "\(context) step \(step): no look-ahead, the same plan")
            }
            #expect(Set(twin.visible.map(\.item)).isSubset(of: Set(session.visible.map(\.item))), "\(context) step \(step)")
        }
    }

    /// The rule on a plain list: how far ahead the region reaches for a fling, and where it stops.
    @Test func aFlingReachesAheadByWhatTheViewportCoversInARoundTripAndAFrame() throws {
        let layout = try makeLayout((0..<2000).map { ItemSpec(id: "\($0)", rect: Rect(x: 0, y: Double($0) * 50, width: 375, height: 50), reuse: "row") })
        var configuration = SessionConfiguration(viewport: Size(width: 375, height: 600), buffer: 0)
        configuration.lookAhead = LookAhead(max: 2000)
        var session = try ViewportSession(layout: layout, configuration: configuration)
        // 3,000 pt/s, 100 ms: 3000 × (0.1 + 1/60) = 350 pt ahead, down.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000), velocity: Point(x: 0, y: 3000), phase: .dragging, rtt: 0.1))
        let reach: Double = 3000 * (0.1 + 1.0 / 60)
        #expect(session.region.maxY == 1000 + 600 + reach)
        #expect(session.region.minY == 1000 && session.region.minX == 0 && session.region.maxX == 375)
        // The session keeps the round trip; upward, the reach is above.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 900), velocity: Point(x: 0, y: -3000), phase: .dragging))
        #expect(session.region.minY == 900 - reach && session.region.maxY == 1500)
        // Capped by `lookAhead.max`.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 900), velocity: Point(x: 0, y: -60000), phase: .dragging))
        #expect(session.region.minY == 900 - 2000)
        // Lifted, at a fast deceleration rate (0.99): the projection ends 0.99/0.01/1000 s of
        // velocity away, 30 × 0.099 = 2.97 pt at 30 pt/s, before a round trip (3.5 pt).
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 900), phase: .idle))
        var fast = configuration
        fast.paging = PagingOptions(decelerationRate: 0.99)
        fast.rtt = 0.1
        var lifted = try ViewportSession(layout: layout, configuration: fast)
        _ = try lifted.apply(ViewportUpdate(offset: Point(x: 0, y: 500), velocity: Point(x: 0, y: 30), phase: .decelerating))
        let rest: Double = 30.0 / 1000 * (0.99 / 0.01)
        #expect(abs(lifted.region.maxY - (500 + 600 + rest)) < 1e-9)
        _ = try lifted.apply(ViewportUpdate(offset: Point(x: 0, y: 510), velocity: Point(x: 0, y: 30), phase: .dragging))
        let slow: Double = 30 * (0.1 + 1.0 / 60)
        #expect(lifted.region.maxY == 510 + 600 + slow, "while dragging the projection does not bound it")
        // No velocity: no look-ahead, the still region.
        _ = try lifted.apply(ViewportUpdate(offset: Point(x: 0, y: 510)))
        #expect(lifted.region == Region(minX: 0, minY: 510, maxX: 375, maxY: 1110))
    }

    /// A huge but valid velocity or round trip materializes no more than the default cap: the
    /// region along the axis stays within 2.5 viewports, every number finite.
    @Test(arguments: [1e4, 1e12, 1e308, 1.7976931348623157e308])
    func aHugeVelocityMaterializesNoMoreThanTheCap(speed: Double) throws {
        let layout = try makeLayout((0..<5000).map { ItemSpec(id: "\($0)", rect: Rect(x: 0, y: Double($0) * 40, width: 375, height: 40), reuse: "row") })
        var configuration = SessionConfiguration(viewport: Size(width: 375, height: 800), offset: Point(x: 0, y: 40000), buffer: 100)
        configuration.rtt = LookAhead.maxRTT
        var session = try ViewportSession(layout: layout, configuration: configuration)
        for (k, phase) in ScrollPhase.allCases.enumerated() {
            for sign in [1.0, -1.0] {
                let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 40000 + Double(k) * 10), velocity: Point(x: sign * speed, y: sign * speed), phase: phase))
                let r = session.region
                #expect(r.maxY - r.minY <= 2.5 * 800 && r.maxX - r.minX <= 2.5 * 375, "\(phase) \(sign * speed)")
                #expect(session.visible.count <= Int(2.5 * 800 / 40) + 1)
                let numbers: [Double] = [r.minX, r.minY, r.maxX, r.maxY, plan.offset.x, plan.offset.y]
                #expect(numbers.allSatisfy { $0.isFinite })
            }
        }
    }

    /// `lookAhead` and `rtt` at the opening are checked like every option; the error names them.
    @Test func badOptionsAreRefusedNamingTheField() throws {
        let layout = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: "r")])
        for bad in [-1, Double.nan, .infinity] {
            var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100))
            configuration.lookAhead = LookAhead(max: bad)
            #expect(ViewabilityTests.refusedField { try ViewportSession(layout: layout, configuration: configuration) } == "lookAhead.max")
        }
        for bad in [-1, Double.nan, .infinity, 11, 1e308] {
            var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100))
            configuration.rtt = bad
            #expect(ViewabilityTests.refusedField { try ViewportSession(layout: layout, configuration: configuration) } == "rtt")
        }
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100))
        configuration.rtt = 10
        configuration.lookAhead = LookAhead(max: 1e308)
        #expect(try ViewportSession(layout: layout, configuration: configuration).rtt == 10)
    }

    /// An edit while the region looks ahead keeps it reaching: the items ahead stay.
    @Test func anEditKeepsTheLookAhead() throws {
        let layout = try makeLayout((0..<200).map { ItemSpec(id: "\($0)", rect: Rect(x: 0, y: Double($0) * 50, width: 375, height: 50), reuse: "row") })
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 500), buffer: 0))
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1000), velocity: Point(x: 0, y: 3000), phase: .dragging, rtt: 0.1))
        let shown = session.visible
        let plan = try session.changeLayout(to: layout, anchor: .visible)
        #expect(plan.recycle.isEmpty && plan.create.isEmpty && session.visible == shown)
    }

    /// Snapshots carry the cap, the round trip and the motion's reach: a session restored mid-fling
    /// continues with the same plans. One that never looked ahead still writes the version older
    /// builds read.
    @Test(arguments: 0..<8)
    func aRestoredSessionKeepsItsLookAhead(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7717 &+ 3)
        print("LookAheadPropertyTests.aRestoredSessionKeepsItsLookAhead seed \(seed)")
        var scenario = try SnapshotTests.scenario(seed, using: &rng)
        let plain = try ViewportSession(layout: scenario.layouts[0], configuration: scenario.configuration)
        #expect(plain.snapshot()[3] == 3, "no look-ahead, no checkpoint: version 3")
        scenario.configuration.lookAhead = LookAhead(max: Self.caps[seed % Self.caps.count])
        scenario.configuration.rtt = seed % 2 == 0 ? 0.1 : nil
        var original = try ViewportSession(layout: scenario.layouts[0], configuration: scenario.configuration)
        let byDigest = Dictionary(scenario.layouts.map { ($0.digest, $0) }, uniquingKeysWith: { a, _ in a })
        var restored = try ViewportSession(restoring: original.snapshot(), layouts: { byDigest[$0] })
        var lookedAhead = false
        for stepNumber in 1...200 {
            var step = SnapshotTests.step(for: original, scenario: scenario, using: &rng)
            if case .update(var update) = step, Int.random(in: 0..<4, using: &rng) == 0 {
                update.rtt = Self.rtts[Int.random(in: 1..<Self.rtts.count, using: &rng)]
                step = .update(update)
            }
            let expected = SnapshotTests.apply(step, to: &original)
            let got = SnapshotTests.apply(step, to: &restored)
            #expect(got == expected, "step \(stepNumber)")
            guard got == expected else { return }
            lookedAhead = lookedAhead || original.motion.looksAhead
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let bytes = restored.snapshot()
                restored = try ViewportSession(restoring: bytes, layouts: { byDigest[$0] })
                #expect(bytes[3] == (original.rtt != nil || original.lookAhead != .standard ? 5 : bytes[3]))
                #expect(restored.snapshot() == bytes && restored.region == original.region && restored.rtt == original.rtt)
                #expect(restored.lookAhead == original.lookAhead && restored.motion == original.motion)
            }
        }
        #expect(restored.snapshot() == original.snapshot())
        #expect(lookedAhead || scenario.configuration.lookAhead.max == 0, "seed \(seed): the trace looked ahead somewhere")
    }
}
