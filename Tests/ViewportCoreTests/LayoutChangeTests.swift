import Testing
import ViewportCore
import ViewportTestSupport

/// A client keyed by item ids, so it follows a session across layouts, with a reference planner
/// for docs/api.md "Layout changes" and "Plans".
struct IDClient {
    struct Pooled {
        var view: Int
        /// Id of the item the view last showed, nil when that item is in no layout any more.
        var last: String?
        var pushedAt: Int
    }

    var caps: PoolCaps
    var shown: [String: Int] = [:]
    var pools: [String: [Pooled]] = [:]
    var seen: Set<Int> = []
    var step = 0

    /// Applies `plan`, made going from the layout of `old` to the layout of `new` (the same specs
    /// for an ordinary update), expecting the items `expected` (positions in `new`) afterwards.
    /// The layouts are known from the test's specs only.
    mutating func apply(
        _ plan: Plan, from old: [ItemSpec], to new: [ItemSpec], expected: [Int], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        step += 1
        let oldReuse = reuseNames(old)
        let newReuse = reuseNames(new)
        var oldIndexByID: [String: Int] = [:]
        for (k, spec) in old.enumerated() { oldIndexByID[spec.id] = k }
        var newIndexByID: [String: Int] = [:]
        for (k, spec) in new.enumerated() { newIndexByID[spec.id] = k }
        func oldIndex(_ id: String) -> Int { oldIndexByID[id] ?? -1 }
        func oldReuseOf(_ id: String) -> String? { oldIndexByID[id].flatMap { oldReuse[$0] } }
        func newReuseOf(_ id: String) -> String? { newIndexByID[id].flatMap { newReuse[$0] } }
        let expectedIDs = expected.map { new[$0].id }
        let expectedSet = Set(expectedIDs)
        let survivors = shown.keys.filter { id in expectedSet.contains(id) && oldReuseOf(id) == newReuseOf(id) }
        let survivorSet = Set(survivors)
        let leaving = shown.keys.filter { !survivorSet.contains($0) }.sorted { oldIndex($0) < oldIndex($1) }
        let entering = expectedIDs.filter { !survivorSet.contains($0) }

        for name in pools.keys {
            for k in pools[name, default: []].indices where pools[name]?[k].last.map({ newIndexByID[$0] == nil }) ?? false {
                pools[name]?[k].last = nil
            }
        }
        var refRecycle: [String] = []
        var refDiscard: [String] = []
        for id in leaving {
            if let reuse = oldReuseOf(id) {
                pools[reuse, default: []].append(Pooled(view: shown[id] ?? -1, last: newIndexByID[id] == nil ? nil : id, pushedAt: step))
            }
        }
        var refReuse: [(String, Int, Bool)] = []
        var refCreate: [String] = []
        var assigned: [String: (Int, Bool)] = [:]
        for id in entering {
            guard let reuse = newReuseOf(id), let at = pools[reuse]?.firstIndex(where: { $0.last == id }) else { continue }
            assigned[id] = (pools[reuse]?.remove(at: at).view ?? -1, false)
        }
        for id in entering where assigned[id] == nil {
            if let reuse = newReuseOf(id), let entry = pools[reuse]?.popLast() {
                assigned[id] = (entry.view, entry.last != id)
            } else {
                refCreate.append(id)
            }
        }
        for id in entering { if let (view, rebind) = assigned[id] { refReuse.append((id, view, rebind)) } }
        var capped: Set<Int> = []
        for (reuse, entries) in pools {
            guard let cap = poolCap(caps, reuse), entries.count > cap else { continue }
            var excess = entries.count - cap
            var kept: [Pooled] = []
            for entry in entries {
                if excess > 0 && entry.pushedAt == step {
                    capped.insert(entry.view)
                    excess -= 1
                } else {
                    kept.append(entry)
                }
            }
            pools[reuse] = kept
        }
        for id in leaving {
            let view = shown[id] ?? -1
            if oldReuseOf(id) == nil || capped.contains(view) { refDiscard.append(id) } else { refRecycle.append(id) }
        }
        #expect(plan.recycle.map { old[$0.item].id } == refRecycle, sourceLocation: sourceLocation)
        #expect(plan.discard.map { old[$0.item].id } == refDiscard, sourceLocation: sourceLocation)
        #expect(plan.reuse.map { new[$0.item].id } == refReuse.map(\.0), sourceLocation: sourceLocation)
        #expect(plan.reuse.map(\.view) == refReuse.map(\.1), sourceLocation: sourceLocation)
        #expect(plan.reuse.map(\.rebind) == refReuse.map(\.2), sourceLocation: sourceLocation)
        #expect(plan.create.map { new[$0.item].id } == refCreate, sourceLocation: sourceLocation)
        let refMoves = expectedIDs.filter { id in
            survivorSet.contains(id) && old[oldIndex(id)].rect != new[newIndexByID[id] ?? 0].rect
        }
        #expect(plan.move.map { new[$0.item].id } == refMoves, sourceLocation: sourceLocation)
        #expect(plan.move.allSatisfy { shown[new[$0.item].id] == $0.view }, sourceLocation: sourceLocation)

        for id in leaving { shown[id] = nil }
        for entry in plan.reuse { shown[new[entry.item].id] = entry.view }
        for entry in plan.create {
            #expect(!seen.contains(entry.view), "handle reused", sourceLocation: sourceLocation)
            seen.insert(entry.view)
            shown[new[entry.item].id] = entry.view
        }
        #expect(Set(shown.keys) == expectedSet, sourceLocation: sourceLocation)
    }

    func check(_ session: ViewportSession, sourceLocation: SourceLocation = #_sourceLocation) {
        let visible = Dictionary(uniqueKeysWithValues: session.visible.map { (session.layout.id(at: $0.item), $0.view) })
        #expect(visible == shown, sourceLocation: sourceLocation)
        let sessionPools = Dictionary(uniqueKeysWithValues: session.pooledViews.map { ($0.reuse, $0.views) })
        #expect(sessionPools == pools.filter { !$0.value.isEmpty }.mapValues { $0.map(\.view) }, sourceLocation: sourceLocation)
    }
}

struct LayoutChangeTests {
    /// Derives a new layout from `specs`: deletions, insertions (some above everything), moved and
    /// resized items, changed reuse identifiers.
    static func mutate(_ specs: [ItemSpec], generation: Int, using rng: inout SeededRandom) -> [ItemSpec] {
        var out: [ItemSpec] = []
        let prepend = Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 1...8, using: &rng) : 0
        let shift = Double(prepend) * 50
        for k in 0..<prepend {
            out.append(ItemSpec(id: "g\(generation)-top\(k)", rect: Rect(x: 0, y: Double(k) * 50, width: 375, height: 50), reuse: "a"))
        }
        for var spec in specs {
            switch Int.random(in: 0..<20, using: &rng) {
            case 0, 1: continue  // deleted
            case 2: spec.rect.y += Double(Int.random(in: -40...40, using: &rng))
            case 3: spec.rect.height = Double(Int.random(in: 0...150, using: &rng))
            case 4: spec.reuse = ["a", "b", "c", nil, "d"].randomElement(using: &rng) ?? nil
            case 5:
                out.append(ItemSpec(
                    id: "g\(generation)-\(out.count)", rect: Rect(x: 0, y: spec.rect.y, width: 375, height: 30),
                    reuse: ["a", "b", nil].randomElement(using: &rng) ?? nil))
            default: break
            }
            spec.rect.y += shift
            out.append(spec)
        }
        return out
    }

    @Test(arguments: 0..<12)
    func randomLayoutSwapsFollowEveryPlanRule(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 1000)
        var specs = randomLayoutSpecs(.vertical, count: Int.random(in: 0...200, using: &rng), using: &rng)
        var layout = try makeLayout(specs)
        let caps = PlanPropertyTests.capChoices[seed % PlanPropertyTests.capChoices.count]
        var sent = SentState(offset: Point(x: 0, y: Double(Int.random(in: 0...2000, using: &rng))), viewport: Size(width: 375, height: 500), buffer: 20)
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: sent.viewport, offset: sent.offset, buffer: sent.buffer, pool: caps))
        var client = IDClient(caps: caps)
        client.apply(session.lastPlan, from: specs, to: specs, expected: oracle(specs, sent.region))
        for generation in 1...60 {
            if Int.random(in: 0..<3, using: &rng) == 0 {
                sent.send(offset: Point(x: sent.offset.x, y: sent.offset.y + Double(Int.random(in: -300...300, using: &rng))))
                let plan = try session.apply(ViewportUpdate(offset: sent.offset))
                client.apply(plan, from: specs, to: specs, expected: oracle(specs, sent.region))
            } else {
                let nextSpecs = Self.mutate(specs, generation: generation, using: &rng)
                let next = try makeLayout(nextSpecs)
                let anchor: LayoutAnchor = Bool.random(using: &rng) ? .visible : .none
                let expectedOffset = Self.anchoredOffset(sent: sent, from: specs, to: nextSpecs, anchor: anchor)
                let plan = try session.changeLayout(to: next, anchor: anchor, seq: session.seq + 1)
                #expect(plan.offset == expectedOffset)
                #expect(plan.seq == session.seq)
                sent.send(offset: expectedOffset)
                client.apply(plan, from: specs, to: nextSpecs, expected: oracle(nextSpecs, sent.region))
                specs = nextSpecs
                layout = next
            }
            client.check(session)
        }
        _ = layout
    }

    /// docs/api.md "Layout changes": the first item on screen (previous layout order) present in both layouts keeps its
    /// place on screen; the shift applies to both axes, unclamped.
    static func anchoredOffset(sent: SentState, from old: [ItemSpec], to new: [ItemSpec], anchor: LayoutAnchor) -> Point {
        guard anchor == .visible else { return sent.offset }
        let screen = sent.screen
        for spec in old where screen.meets(spec.rect) {
            guard let moved = new.first(where: { $0.id == spec.id }) else { continue }
            return Point(x: sent.offset.x + moved.rect.x - spec.rect.x, y: sent.offset.y + moved.rect.y - spec.rect.y)
        }
        return sent.offset
    }

    @Test func chatPrependOf30MessagesLeavesTheScreenStill() throws {
        let messages = (0..<200).map { ItemSpec(id: "m\($0)", rect: Rect(x: 0, y: Double($0) * 60, width: 375, height: 60), reuse: "bubble") }
        var session = try ViewportSession(
            layout: try makeLayout(messages),
            configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 3000)))
        let before = session.visible.map { (session.layout.id(at: $0.item), $0.view) }
        let history = (0..<30).map { ItemSpec(id: "old\($0)", rect: Rect(x: 0, y: Double($0) * 60, width: 375, height: 60), reuse: "bubble") }
        let shifted = messages.map { ItemSpec(id: $0.id, rect: Rect(x: 0, y: $0.rect.y + 1800, width: 375, height: 60), reuse: $0.reuse) }
        let plan = try session.changeLayout(to: try makeLayout(history + shifted), anchor: .visible)
        #expect(plan.offset == Point(x: 0, y: 4800))
        #expect(plan.recycle.isEmpty && plan.discard.isEmpty && plan.reuse.isEmpty && plan.create.isEmpty)
        #expect(plan.move.count == before.count)
        let after = session.visible.map { (session.layout.id(at: $0.item), $0.view) }
        #expect(after.map(\.0) == before.map(\.0))
        #expect(after.map(\.1) == before.map(\.1))
    }

    @Test func itemWhoseReuseIdentifierChangedLeavesAndEnters() throws {
        let a = try makeLayout([ItemSpec(id: "x", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: "card")])
        let b = try makeLayout([ItemSpec(id: "x", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: "banner")])
        var session = try ViewportSession(layout: a, configuration: SessionConfiguration(viewport: Size(width: 10, height: 10)))
        let plan = try session.changeLayout(to: b, anchor: .none)
        #expect(plan.recycle == [PlanEntry(item: 0, view: 1)])
        #expect(plan.create == [PlanEntry(item: 0, view: 2)])
        #expect(session.pooledViews.map(\.reuse) == ["card"])
        // Back to "card": the item takes its own old view back without a rebind.
        let back = try session.changeLayout(to: a, anchor: .none)
        #expect(back.reuse == [ReuseEntry(item: 0, view: 1, rebind: false)])
    }

    @Test func layoutChangeTakesTheNextSeqAndAnswersRetries() throws {
        let a = try makeLayout([ItemSpec(id: "x", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: "card")])
        let b = try makeLayout([ItemSpec(id: "x", rect: Rect(x: 0, y: 5, width: 10, height: 10), reuse: "card")])
        var session = try ViewportSession(layout: a, configuration: SessionConfiguration(viewport: Size(width: 10, height: 10)))
        let plan = try session.changeLayout(to: b, anchor: .none, seq: 1)
        #expect(plan.move == [PlanEntry(item: 0, view: 1)])
        #expect(try session.changeLayout(to: a, anchor: .none, seq: 1) == plan)
        #expect(throws: SessionError.sequenceConflict(current: 1, sent: 5)) { try session.changeLayout(to: a, anchor: .none, seq: 5) }
        #expect(session.stats.updates == 1)
    }
}

struct LayoutChangeHelperTests {
    static func rows(_ ids: [String], height: Double = 100) -> [ItemSpec] {
        ids.enumerated().map { ItemSpec(id: $0.element, rect: Rect(x: 0, y: Double($0.offset) * height, width: 100, height: height), reuse: "row") }
    }

    @Test func selectionExposureCountsAndLoadsFollowItemsById() throws {
        let a = try makeLayout(Self.rows((0..<20).map { "r\($0)" }))
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 200), buffer: 0)
        configuration.exposure = true
        configuration.lazyLoad = true
        var session = try ViewportSession(layout: a, configuration: configuration)
        #expect(session.lastPlan.enter.map(\.item) == [0, 1])
        #expect(session.lastPlan.load == [0, 1])
        _ = try session.apply(ViewportUpdate(offset: .zero, select: .item(1)))
        // Two rows prepended; the visible anchor keeps r0 and r1 on screen.
        let b = try makeLayout(Self.rows(["n0", "n1"] + (0..<20).map { "r\($0)" }))
        let plan = try session.changeLayout(to: b, anchor: .visible)
        #expect(plan.offset == Point(x: 0, y: 200))
        #expect(plan.enter.isEmpty && plan.leave.isEmpty)
        #expect(plan.load.isEmpty)
        #expect(plan.selected == 3)
        #expect(session.selected == 3)
        // Scrolling r0 out and back in counts a second exposure for it, not a first.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 400)))
        let back = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 200)))
        #expect(back.enter.map(\.times) == [2, 2])
    }

    @Test func exposureCountsOfItemsRemovedAndRestoredContinue() throws {
        let a = try makeLayout(Self.rows(["a", "b", "c"]))
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 200), buffer: 0)
        configuration.exposure = true
        var session = try ViewportSession(layout: a, configuration: configuration)
        #expect(session.lastPlan.enter.map(\.times) == [1, 1])
        // "a" is removed, then restored: it entered the screen a second time in this session.
        let without = try session.changeLayout(to: try makeLayout(Self.rows(["b", "c"])), anchor: .none)
        #expect(without.leave.map { a.id(at: $0) } == ["a"])
        let back = try session.changeLayout(to: a, anchor: .none)
        #expect(back.enter.map { a.id(at: $0.item) } == ["a"])
        #expect(back.enter.map(\.times) == [2])
    }

    @Test func itemsRemovedFromTheScreenLeaveNamedInThePreviousLayout() throws {
        let a = try makeLayout(Self.rows(["a", "b", "c"]))
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 200), buffer: 0)
        configuration.exposure = true
        var session = try ViewportSession(layout: a, configuration: configuration)
        let b = try makeLayout(Self.rows(["b", "c"]))
        let plan = try session.changeLayout(to: b, anchor: .none)
        #expect(plan.leave.map { a.id(at: $0) } == ["a"])
        #expect(plan.enter.map { b.id(at: $0.item) } == ["c"])
        #expect(plan.discard.isEmpty && plan.recycle.map { a.id(at: $0.item) } == ["a"])
    }

    @Test func aLayoutChangeCancelsOutstandingPredictionsOfRemovedItemsToo() throws {
        let a = try makeLayout(Self.rows((0..<10).map { "r\($0)" }))
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 200), buffer: 0)
        configuration.prefetch = 1
        var session = try ViewportSession(layout: a, configuration: configuration)
        let predicted = try session.apply(ViewportUpdate(offset: .zero, velocity: Point(x: 0, y: 150), phase: .dragging))
        #expect(predicted.prefetch == [2, 3])
        // r2 removed, r3 still off screen: both cancelled, named by the previous layout.
        let b = try makeLayout(Self.rows(["r0", "r1"] + (3..<10).map { "r\($0)" }))
        let plan = try session.changeLayout(to: b, anchor: .none)
        #expect(plan.previousLayout === a)
        #expect(plan.cancelPrefetch.map { a.id(at: $0) } == ["r2", "r3"])
        #expect(try session.apply(ViewportUpdate(offset: .zero)).cancelPrefetch.isEmpty)
    }

    @Test func loopingSessionsRefuseLayoutChanges() throws {
        let pages = (0..<5).map { ItemSpec(id: "p\($0)", rect: Rect(x: Double($0) * 100, y: 0, width: 100, height: 100), reuse: "page") }
        var configuration = SessionConfiguration(viewport: Size(width: 100, height: 100), buffer: 50)
        configuration.loop = true
        configuration.paging = PagingOptions(mode: .page, axis: .x)
        var session = try ViewportSession(layout: try makeLayout(pages), configuration: configuration)
        #expect(throws: SessionError.self) { try session.changeLayout(to: try makeLayout(Array(pages.prefix(4))), anchor: .none) }
        #expect(session.seq == 0)
    }
}
