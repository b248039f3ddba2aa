import Testing
import ViewportCore
import ViewportTestSupport

/// Session snapshots: a session restored from one continues exactly as the original (same plans,
/// same state), whatever it has been through.
struct SnapshotTests {
    /// Every stored property of `ViewportSession`, and of each of its parts. A property added to the
    /// session or to a part must be written by `snapshot()` and read by `init(restoring:layouts:)`
    /// (or derived there), then listed here.
    static let handledProperties: [String: Set<String>] = [
        "layout": [], "shown": [], "stats": [], "edits": [],
        "options": ["insets", "paging", "loop", "maxViews", "lookAhead"],
        "scroll": ["buffer", "offset", "viewport", "motion", "region", "time", "rtt", "diffBasis", "pinned", "dragBegin"],
        "pools": ["caps", "byClass", "sameItem", "count", "extraNames", "capByClass", "defaultCap", "indexed"],
        "handles": ["next"],
        "sequence": ["seq", "recorded", "bareSeq", "bareOffset"],
        "helpersBox": ["areOn", "selected", "prefetcher", "lazyLoader", "exposureTracker", "links", "loopShifts"],
    ]

    @Test func everyStoredPropertyOfASessionIsHandledBySnapshots() throws {
        let layout = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: "r")])
        // With a helper on, so that the helpers' box is there to look into.
        let session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 100), lazyLoad: true))
        let parts = Mirror(reflecting: session).children
        let labels = Set(parts.compactMap(\.label))
        let handled = Set(Self.handledProperties.keys)
        #expect(labels == handled, "new: \(labels.subtracting(handled)), gone: \(handled.subtracting(labels)); update ViewportSession+Snapshot.swift")
        for part in parts {
            guard let name = part.label, let expected = Self.handledProperties[name], !expected.isEmpty else { continue }
            let found = Set(Self.fields(of: part.value).compactMap(\.label))
            #expect(found == expected, "\(name): new: \(found.subtracting(expected)), gone: \(expected.subtracting(found)); update ViewportSession+Snapshot.swift")
        }
    }

    /// The stored properties of `value`, looking through an optional and a box (a class whose one
    /// stored property is `value`).
    static func fields(of value: Any) -> Mirror.Children {
        var mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional, let some = mirror.children.first { mirror = Mirror(reflecting: some.value) }
        if mirror.displayStyle == .class, mirror.children.count == 1, let only = mirror.children.first, only.label == "value" {
            mirror = Mirror(reflecting: only.value)
        }
        return mirror.children
    }

    /// A random session of one of several kinds, and the layouts it may move to.
    struct Scenario {
        var layouts: [Layout]
        var configuration: SessionConfiguration
        var canChangeLayout: Bool
    }

    static func scenario(_ seed: Int, using rng: inout SeededRandom) throws -> Scenario {
        let caps = PlanPropertyTests.capChoices[seed % PlanPropertyTests.capChoices.count]
        var configuration = SessionConfiguration(
            viewport: Size(width: Double(Int.random(in: 100...500, using: &rng)), height: Double(Int.random(in: 100...800, using: &rng))),
            offset: Point(x: 0, y: Double(Int.random(in: -50...400, using: &rng))),
            buffer: Double([0, 20, 37][Int.random(in: 0..<3, using: &rng)]), pool: caps,
            paging: PagingOptions(mode: PagingMode.allCases[Int.random(in: 0..<4, using: &rng)]))
        if Bool.random(using: &rng) {
            configuration.prefetch = [0.0, 0.25, 1][Int.random(in: 0..<3, using: &rng)]
            configuration.lazyLoad = Bool.random(using: &rng)
            configuration.exposure = Bool.random(using: &rng)
            if Bool.random(using: &rng) {
                configuration.links = ["f": LinkedScrollView(viewport: Size(width: 100, height: 100), contentSize: Size(width: 400, height: 900))]
            }
            if configuration.exposure && Bool.random(using: &rng) {
                // Viewability: thresholds and dwell times, so stays and their clocks are in the snapshot.
                configuration.exposureRule = ExposureRule(
                    threshold: [0, 0.5, 1][Int.random(in: 0..<3, using: &rng)],
                    minTime: [nil, 0, 0.3, 1][Int.random(in: 0..<4, using: &rng)])
            }
        }
        if Bool.random(using: &rng) {
            // A buffer that leans toward the motion.
            configuration.buffer = Buffer(ahead: Double(Int.random(in: 0...600, using: &rng)), behind: Double(Int.random(in: 0...60, using: &rng)))
        }
        switch seed % 4 {
        case 0:  // a list whose layout changes
            var specs = randomLayoutSpecs(.vertical, count: Int.random(in: 0...300, using: &rng), using: &rng)
            var layouts = [try makeLayout(specs)]
            for generation in 1...4 {
                specs = LayoutChangeTests.mutate(specs, generation: generation, using: &rng)
                layouts.append(try makeLayout(specs))
            }
            return Scenario(layouts: layouts, configuration: configuration, canChangeLayout: true)
        case 1:  // sticky headers
            let layout = try StickyHeaderTests.layout(sections: (0..<12).map { _ in Int.random(in: 0...6, using: &rng) })
            configuration.insets = Insets(top: Double(Int.random(in: 0...64, using: &rng)), left: 0, bottom: 0, right: 0)
            return Scenario(layouts: [layout], configuration: configuration, canChangeLayout: false)
        case 2:  // generated sections
            let (specs, stack) = GeneratedLayoutTests.randomSections(using: &rng)
            return Scenario(layouts: [try GeneratedLayoutTests.build(specs, stack)], configuration: configuration, canChangeLayout: false)
        default:  // a looping carousel
            let width = 250.0
            let items = (0..<8).map { ItemSpec(id: "page-\($0)", rect: Rect(x: Double($0) * width, y: 0, width: width, height: 300), reuse: $0 % 3 == 0 ? "ad" : "page") }
            configuration.viewport = Size(width: width, height: 300)
            configuration.offset = .zero
            configuration.buffer = 50
            configuration.paging = PagingOptions(mode: .page, axis: .x)
            configuration.loop = true
            return Scenario(layouts: [try makeLayout(items)], configuration: configuration, canChangeLayout: false)
        }
    }

    /// One random step: a viewport update (moves, flings, jumps, rotations, scrollTo, select, every
    /// phase, sometimes a retry or a bad seq) or a layout change.
    enum Step {
        case update(ViewportUpdate)
        case change(Layout, LayoutAnchor, UInt64?)
    }

    static func step(for session: ViewportSession, scenario: Scenario, using rng: inout SeededRandom) -> Step {
        let layout = session.layout
        if scenario.canChangeLayout, Int.random(in: 0..<8, using: &rng) == 0, let next = scenario.layouts.randomElement(using: &rng) {
            return .change(next, Bool.random(using: &rng) ? .visible : .none, session.seq + 1)
        }
        var seq: UInt64? = session.seq + 1
        switch Int.random(in: 0..<30, using: &rng) {
        case 0: seq = session.seq  // a retry
        case 1: seq = session.seq + 3  // a conflict
        case 2: seq = nil
        default: break
        }
        let phase = ScrollPhase.allCases[Int.random(in: 0..<5, using: &rng)]
        let velocity: Point? = Bool.random(using: &rng)
            ? Point(x: Double(Int.random(in: -800...800, using: &rng)), y: Double(Int.random(in: -3000...3000, using: &rng))) : nil
        let select: Selection? = layout.count > 0 && Int.random(in: 0..<8, using: &rng) == 0
            ? (Bool.random(using: &rng) ? .item(Int.random(in: 0..<layout.count, using: &rng)) : .clear) : nil
        var offset = session.offset
        var size: Size?
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<55:
            offset = Point(x: offset.x + Double(Int.random(in: -20...20, using: &rng)), y: offset.y + Double(Int.random(in: -40...40, using: &rng)))
        case 55..<75:
            offset.y += Double(Int.random(in: -1500...1500, using: &rng))
            offset.x += scenario.configuration.loop ? Double(Int.random(in: -1500...1500, using: &rng)) : 0
        case 75..<85 where layout.count > 0:
            let target = ScrollTarget(item: Int.random(in: 0..<layout.count, using: &rng), align: [.start, .center, .end, .auto].randomElement(using: &rng) ?? .auto)
            return .update(ViewportUpdate(scrollTo: target, velocity: velocity, phase: phase, seq: seq, select: select))
        case 85..<90 where !scenario.configuration.loop:
            size = Size(width: session.viewport.height, height: session.viewport.width)
        default:
            offset = Point(x: Double(Int.random(in: -300...1500, using: &rng)), y: Double(Int.random(in: -300...4000, using: &rng)) + 0.5)
        }
        var update = ViewportUpdate(offset: offset, size: size, velocity: velocity, phase: phase, seq: seq, select: select)
        // The client's clock, on most updates, moving on by up to half a second.
        if Int.random(in: 0..<4, using: &rng) > 0 {
            update.time = (session.time ?? 0) + Double(Int.random(in: 0...500, using: &rng)) / 1000
        }
        return .update(update)
    }

    static func apply(_ step: Step, to session: inout ViewportSession) -> Result<Plan, SessionError> {
        do {
            switch step {
            case .update(let update): return .success(try session.apply(update))
            case .change(let layout, let anchor, let seq): return .success(try session.changeLayout(to: layout, anchor: anchor, seq: seq))
            }
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: 0..<24)
    func aRestoredSessionContinuesWithTheSamePlansAsTheOriginal(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 104_729 &+ 17)
        print("SnapshotTests seed \(seed)")
        let scenario = try Self.scenario(seed, using: &rng)
        var original = try ViewportSession(layout: scenario.layouts[0], configuration: scenario.configuration)
        let byDigest = Dictionary(scenario.layouts.map { ($0.digest, $0) }, uniquingKeysWith: { a, _ in a })
        func restore(_ bytes: [UInt8]) throws -> ViewportSession {
            let needed = try ViewportSession.snapshotLayouts(bytes)
            #expect(byDigest[needed.layout] != nil)
            return try ViewportSession(restoring: bytes, layouts: { byDigest[$0] })
        }
        var restored = try restore(original.snapshot())
        #expect(restored.lastPlan == original.lastPlan)
        for stepNumber in 1...200 {
            let step = Self.step(for: original, scenario: scenario, using: &rng)
            let expected = Self.apply(step, to: &original)
            let got = Self.apply(step, to: &restored)
            #expect(got == expected, "step \(stepNumber)")
            guard got == expected else { return }
            // Hop: continue from a snapshot of the copy, as an instance taking the session over.
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let bytes = restored.snapshot()
                restored = try restore(bytes)
                #expect(restored.snapshot() == bytes, "step \(stepNumber): a restored session snapshots to the same bytes")
                #expect(restored.lastPlan == original.lastPlan)
            }
        }
        #expect(restored.snapshot() == original.snapshot())
        #expect(restored.visible == original.visible && restored.stats == original.stats && restored.seq == original.seq)
    }

    @Test func aSnapshotAfterALayoutChangeNamesBothLayouts() throws {
        let a = try makeLayout(LayoutChangeHelperTests.rows(["x", "y", "z"]))
        let b = try makeLayout(LayoutChangeHelperTests.rows(["w", "y", "z"]))
        var session = try ViewportSession(layout: a, configuration: SessionConfiguration(viewport: Size(width: 375, height: 150)))
        _ = try session.changeLayout(to: b, anchor: .none)
        let bytes = session.snapshot()
        let needed = try ViewportSession.snapshotLayouts(bytes)
        #expect(needed.layout == b.digest && needed.previous == a.digest)
        #expect(throws: BinaryFormatError.self) { try ViewportSession(restoring: bytes, layouts: { $0 == b.digest ? b : nil }) }
        let restored = try ViewportSession(restoring: bytes, layouts: { id in [a, b].first { $0.digest == id } })
        #expect(restored.lastPlan == session.lastPlan)
        #expect(restored.lastPlan.recycle.map { a.id(at: $0.item) } == ["x"])
    }

    @Test func truncatedOrCorruptSnapshotsAreRefusedWithoutCrashing() throws {
        var rng = SeededRandom(seed: 8)
        let scenario = try Self.scenario(4, using: &rng)
        var session = try ViewportSession(layout: scenario.layouts[0], configuration: scenario.configuration)
        for _ in 0..<30 { _ = Self.apply(Self.step(for: session, scenario: scenario, using: &rng), to: &session) }
        let bytes = session.snapshot()
        let layouts = { (id: String) in scenario.layouts.first { $0.digest == id } }
        for length in 0..<bytes.count {
            #expect(throws: BinaryFormatError.self) { try ViewportSession(restoring: Array(bytes[..<length]), layouts: layouts) }
        }
        for _ in 0..<2000 {
            var corrupt = bytes
            corrupt[Int.random(in: 0..<corrupt.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            _ = try? ViewportSession(restoring: corrupt, layouts: layouts)
        }
        var newer = bytes
        newer[3] = 9
        #expect(throws: BinaryFormatError.unsupported("session snapshot version 9 (this build reads 3 to 5)")) {
            try ViewportSession(restoring: newer, layouts: layouts)
        }
    }
}

/// Snapshots of sessions that edited their stacks: the snapshot names the stored layout and the
/// edits that made the session's version; restored, the session continues with the same plans.
struct EditedSnapshotTests {
    /// Plans compared by content: an edit's plan names its previous layout version, which a
    /// restored session has made again (an equal version, not the same object).
    static func same(_ a: Plan, _ b: Plan) -> Bool {
        a.seq == b.seq && a.offset == b.offset && a.recycle == b.recycle && a.discard == b.discard && a.reuse == b.reuse
            && a.create == b.create && a.move == b.move && a.pin == b.pin && a.unpin == b.unpin && a.target == b.target
            && a.page == b.page && a.prefetch == b.prefetch && a.cancelPrefetch == b.cancelPrefetch && a.load == b.load
            && a.enter == b.enter && a.leave == b.leave && a.viewed == b.viewed && a.linked == b.linked && a.selected == b.selected
            && a.placements == b.placements && a.recenter == b.recenter && a.contentSize == b.contentSize
            && a.previousLayout?.digest == b.previousLayout?.digest
            && a.previousLayout?.editHistory?.count == b.previousLayout?.editHistory?.count
            && a.previousLayout.map(modelItems(of:)) == b.previousLayout.map(modelItems(of:))
    }

    @Test(arguments: 0..<8)
    func aRestoredEditedSessionContinuesWithTheSamePlans(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 31_337)
        var model = StackScenario.randomModel(using: &rng, count: 20...200)
        let stored = try model.build()
        var configuration = SessionConfiguration(
            viewport: Size(width: 375, height: Double(Int.random(in: 200...700, using: &rng))),
            offset: Point(x: 0, y: Double(Int.random(in: 0...2000, using: &rng))), buffer: 30, insets: model.insets)
        configuration.exposure = seed % 2 == 0
        configuration.prefetch = seed % 3 == 0 ? 0.5 : nil
        var original = try ViewportSession(layout: stored, configuration: configuration)
        let layouts = { (id: String) in id == stored.digest ? stored : nil }
        var counter = 0
        for step in 0..<60 {
            // The session as another instance would restore it now.
            let bytes = original.snapshot()
            #expect(try ViewportSession.snapshotLayouts(bytes).layout == stored.digest)
            var restored = try ViewportSession(restoring: bytes, layouts: layouts)
            #expect(restored.snapshot() == bytes, "seed \(seed) step \(step): a restored snapshot writes the same bytes")
            #expect(Self.same(restored.lastPlan, original.lastPlan), "seed \(seed) step \(step)")
            if Int.random(in: 0..<2, using: &rng) == 0 {
                let update = ViewportUpdate(offset: Point(x: 0, y: original.offset.y + Double(Int.random(in: -500...500, using: &rng))), seq: original.seq + 1)
                #expect(Self.same(try restored.apply(update), try original.apply(update)), "seed \(seed) step \(step)")
            } else {
                let edit = StackScenario.randomEdit(model, using: &rng, counter: &counter)
                let anchor = EditAnchor.allCases.randomElement(using: &rng) ?? .visible
                let a = try original.apply(edit, anchor: anchor, seq: original.seq + 1)
                let b = try restored.apply(edit, anchor: anchor, seq: restored.seq + 1)
                #expect(Self.same(a, b), "seed \(seed) step \(step)")
                try model.apply(edit)
            }
            #expect(modelItems(of: restored.layout) == modelItems(of: original.layout), "seed \(seed) step \(step)")
            #expect(restored.edits == original.edits)
            original = restored
        }
        #expect(original.edits > 0)
    }
}
