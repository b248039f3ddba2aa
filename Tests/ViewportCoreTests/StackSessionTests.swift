import Testing
import ViewportCore
import ViewportTestSupport

/// The anchor rules of docs/api.md "Stacks and edits", from the flow model's rects (not the session's).
func expectedEditOffset(
    anchor: EditAnchor, offset: Point, viewport: Size, insets: Insets, axis: Axis, old: [FlowModel.Item], new: [FlowModel.Item],
    oldContent: Size, newContent: Size
) -> (offset: Point, anchor: String?) {
    func upper(_ axis: Axis, _ content: Size) -> Double {
        let (lead, trail) = axis == .y ? (insets.top, insets.bottom) : (insets.left, insets.right)
        return max(-lead, axis.component(of: content) + trail - axis.component(of: viewport))
    }
    func lower(_ axis: Axis) -> Double { axis == .y ? -insets.top : -insets.left }
    func visible() -> (Point, String?) {
        let screen = Region(offset: offset, viewport: viewport, buffer: 0)
        for item in old where screen.intersects(item.rect) {
            guard let after = new.first(where: { $0.id == item.id }) else { continue }
            return (Point(x: offset.x + (after.rect.x - item.rect.x), y: offset.y + (after.rect.y - item.rect.y)), item.id)
        }
        return (offset, nil)
    }
    switch anchor {
    case .none: return (offset, nil)
    case .visible: return visible()
    case .end:
        guard abs(axis.component(of: offset) - upper(axis, oldContent)) <= 1 else { return visible() }
        let cross = max(lower(axis.cross), min(axis.cross.component(of: offset), upper(axis.cross, newContent)))
        return (axis.setting(upper(axis, newContent), in: axis.cross.setting(cross, in: offset)), nil)
    }
}

/// The ids on screen, as a client learns them from `enter` and `leave`.
struct ScreenClient {
    var onScreen: Set<String> = []

    mutating func apply(_ plan: Plan, layout: Layout) {
        let leaving = plan.previousLayout ?? layout
        for item in plan.leave { onScreen.remove(leaving.id(at: item)) }
        for entry in plan.enter { onScreen.insert(layout.id(at: entry.item)) }
    }
}

struct StackSessionTests {
    @Test(arguments: 0..<30)
    func randomEditsInterleavedWithScrollingKeepPlansExactAndTheAnchorStill(seed: Int) throws {
        print("StackSessionTests seed \(seed): swift test --filter randomEditsInterleavedWithScrollingKeepPlansExactAndTheAnchorStill")
        var rng = SeededRandom(seed: UInt64(seed) &+ 9000)
        var model = StackScenario.randomModel(using: &rng, count: 20...250)
        var layout = try model.build()
        let caps = PlanPropertyTests.capChoices[seed % PlanPropertyTests.capChoices.count]
        let viewport = Size(width: 375, height: Double(Int.random(in: 200...700, using: &rng)))
        var configuration = SessionConfiguration(
            viewport: viewport, offset: Point(x: 0, y: Double(Int.random(in: 0...3000, using: &rng))), buffer: Double(Int.random(in: 0...80, using: &rng)),
            insets: model.insets, pool: caps)
        configuration.exposure = seed % 2 == 0
        configuration.lazyLoad = seed % 3 == 0
        configuration.prefetch = seed % 4 == 1 ? 0.5 : nil
        var session = try ViewportSession(layout: layout, configuration: configuration)
        var client = IDClient(caps: caps)
        var screen = ScreenClient()
        // The offset as the test knows it: what it sent, or what the model says an edit's anchor
        // gives (checked below); the region is the test's arithmetic, never the session's.
        var sent = SentState(offset: configuration.offset, viewport: viewport, buffer: configuration.buffer.ahead)
        client.apply(session.lastPlan, from: model.specs, to: model.specs, expected: oracle(model.specs, sent.region))
        screen.apply(session.lastPlan, layout: layout)
        var counter = 0
        for step in 0..<50 {
            let context = "seed \(seed) step \(step)"
            if Int.random(in: 0..<3, using: &rng) == 0 {
                let y = Int.random(in: 0..<4, using: &rng) == 0
                    ? Double(Int.random(in: -100...Int(model.contentSize.height) + 100, using: &rng))
                    : session.offset.y + Double(Int.random(in: -400...400, using: &rng))
                let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y), velocity: Point(x: 0, y: Double(Int.random(in: -2000...2000, using: &rng)))))
                sent.send(offset: Point(x: 0, y: y))
                client.apply(plan, from: model.specs, to: model.specs, expected: oracle(model.specs, sent.region))
                screen.apply(plan, layout: layout)
            } else {
                // Mostly sizes measured near the viewport, as a client reports them.
                let near = session.visible.map { layout.id(at: $0.item) }.filter { id in StackScenario.stackIDs(model).contains(id) }
                let edit = StackScenario.randomEdit(model, using: &rng, counter: &counter, near: Bool.random(using: &rng) ? near : [])
                let anchor = EditAnchor.allCases.randomElement(using: &rng) ?? .visible
                var next = model
                try next.apply(edit)
                let old = layout
                let oldOffset = session.offset
                let (expected, anchorID) = expectedEditOffset(
                    anchor: anchor, offset: session.offset, viewport: viewport, insets: model.insets, axis: .y, old: normalized(model.items),
                    new: normalized(next.items), oldContent: model.contentSize, newContent: next.contentSize)
                let edits = session.edits
                let plan = try session.apply(edit, anchor: anchor, seq: session.seq + 1)
                #expect(plan.offset == expected, "\(context) \(anchor)")
                #expect(session.offset == expected)
                #expect(session.edits == edits + 1)
                layout = session.layout
                #expect(modelItems(of: layout) == normalized(next.items), "\(context)")
                #expect(plan.contentSize == (next.contentSize != model.contentSize ? next.contentSize : nil), "\(context)")
                if let anchorID, let before = old.item(withID: anchorID), let after = layout.item(withID: anchorID) {
                    // Exactly where it was on screen.
                    #expect(layout.rects[after].y - session.offset.y == old.rects[before].y - oldOffset.y, "\(context)")
                }
                sent.send(offset: expected)
                client.apply(plan, from: model.specs, to: next.specs, expected: oracle(next.specs, sent.region))
                screen.apply(plan, layout: layout)
                model = next
            }
            if Int.random(in: 0..<4, using: &rng) == 0 {
                // A valid edit spoiled at a random place: refused, and nothing changes.
                var bad = StackScenario.randomEdit(model, using: &rng, counter: &counter)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bad.resize.insert(.init(id: "nope", size: .zero), at: Int.random(in: 0...bad.resize.count, using: &rng))
                case 1: bad.remove.append(StackScenario.stackIDs(model).first ?? "nope")
                    bad.remove.append(StackScenario.stackIDs(model).first ?? "nope")
                case 2: bad.insert.append(.init(place: .end(section: "nope"), items: [.init(id: "fresh")]))
                default: bad.resize.append(.init(id: StackScenario.stackIDs(model).first ?? "nope", size: Size(width: 1, height: .infinity)))
                }
                let snapshot = (session.seq, session.offset, session.visible, session.pooledViews.map(\.views), session.stats, session.lastPlan, session.edits)
                let current = session.layout
                #expect(throws: SessionError.self, "\(context)") { try session.apply(bad, anchor: .visible) }
                #expect(session.layout === current && session.seq == snapshot.0 && session.offset == snapshot.1 && session.visible == snapshot.2)
                #expect(session.pooledViews.map(\.views) == snapshot.3 && session.stats == snapshot.4 && session.lastPlan == snapshot.5 && session.edits == snapshot.6)
                #expect(modelItems(of: layout) == normalized(model.items), "\(context)")
            }
            client.check(session)
            if configuration.exposure {
                let onScreen = Set(oracle(layout, sent.screen).map { layout.id(at: $0) })
                #expect(screen.onScreen == onScreen, "\(context)")
            }
        }
    }

    static func chat(count: Int, measured: Bool = false) throws -> (FlowModel, Layout) {
        let items = (0..<count).map { ("m\($0)", measured ? Size(width: 375, height: Double(40 + $0 % 7 * 10)) : nil, String?.none) }
        let model = FlowModel(sections: [.stack(FlowModel.makeStack(
            id: "chat", reuse: "msg", items: items, estimate: Size(width: 375, height: 80), spacing: 4, lanes: 1, laneSize: 375, axis: .y))])
        return (model, try model.build())
    }

    @Test func aChatFollowsItsEndAndMeasurementsAboveTheScreenMoveNothingOnIt() throws {
        let (_, layout) = try Self.chat(count: 100)
        // 100 × 80 + 99 × 4 = 8396; at the end: 8396 − 600.
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 7796)))
        let shown = session.visible
        // A message arrives, with anchor end: the viewport follows the end.
        let arrived = try session.apply(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "new", size: Size(width: 375, height: 100))])]), anchor: .end)
        #expect(arrived.offset == Point(x: 0, y: 7900))
        #expect(arrived.contentSize == Size(width: 375, height: 8500))
        // m92 leaves; "new" takes its view in the same plan.
        #expect(arrived.recycle.map { layout.id(at: $0.item) } == ["m92"])
        #expect(arrived.reuse.map { session.layout.id(at: $0.item) } == ["new"])
        #expect(arrived.move.isEmpty && arrived.create.isEmpty)
        // Messages above the screen measured: the screen does not move, only the offset does.
        let before = session.visible
        let measured = try session.apply(StackEdit(resize: (80..<85).map { .init(id: "m\($0)", size: Size(width: 375, height: 30)) }), anchor: .visible)
        #expect(measured.offset == Point(x: 0, y: 7900 - 5 * 50))
        #expect(measured.recycle.isEmpty && measured.create.isEmpty && measured.reuse.isEmpty)
        #expect(measured.move.count == before.count)
        #expect(session.visible.map(\.view) == before.map(\.view))
        #expect(measured.contentSize == Size(width: 375, height: 8250))
        // Not at the end: "end" keeps the first visible item still.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 4000)))
        let away = try session.apply(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "later")])]), anchor: .end)
        #expect(away.offset == Point(x: 0, y: 4000))
        _ = shown
    }

    @Test func historyInsertedAboveKeepsTheScreenStill() throws {
        let (_, layout) = try Self.chat(count: 50, measured: true)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 1000)))
        let views = session.visible.map(\.view)
        let firstOnScreen = try #require(session.visible.map(\.item).first { Region(offset: session.offset, viewport: session.viewport, buffer: 0).intersects(layout.rects[$0]) })
        let screenY = layout.rects[firstOnScreen].y - 1000
        let id = layout.id(at: firstOnScreen)
        let history = (0..<30).map { StackEdit.NewItem(id: "old\($0)", size: Size(width: 375, height: 55)) }
        let plan = try session.apply(StackEdit(insert: [.init(place: .start(section: "chat"), items: history)]))
        #expect(plan.offset.y == 1000 + 30 * 59)
        #expect(plan.recycle.isEmpty && plan.create.isEmpty && plan.reuse.isEmpty && plan.discard.isEmpty)
        #expect(session.visible.map(\.view) == views)
        let now = try #require(session.layout.item(withID: id))
        #expect(session.layout.rects[now].y - session.offset.y == screenY)
    }

    @Test func masonryItemsKeepTheirLanesAndAppendedOnesJoinTheShortest() throws {
        let items = (0..<6).map { ("p\($0)", Optional(Size(width: 100, height: 100)), String?.none) }
        let model = FlowModel(sections: [.stack(FlowModel.makeStack(
            id: "grid", reuse: "photo", items: items, estimate: Size(width: 100, height: 100), spacing: 10, lanes: 2, laneSize: 100, axis: .y))])
        let layout = try model.build()
        #expect((0..<6).map { layout.rects[$0].x } == [0, 110, 0, 110, 0, 110])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 210, height: 1000)))
        // Lane 0's items grow: they stay in lane 0, and new items go to lane 1 until it catches up.
        _ = try session.apply(StackEdit(resize: [.init(id: "p0", size: Size(width: 100, height: 400))]))
        _ = try session.apply(StackEdit(insert: [.init(place: .end(section: "grid"), items: (0..<3).map { .init(id: "q\($0)", size: Size(width: 100, height: 100)) })]))
        let edited = session.layout
        #expect((0..<6).map { edited.rects[edited.item(withID: "p\($0)") ?? 0].x } == [0, 110, 0, 110, 0, 110])
        #expect((0..<3).map { edited.rects[edited.item(withID: "q\($0)") ?? 0].x } == [110, 110, 110])
        // Inserted after an item: its lane.
        _ = try session.apply(StackEdit(insert: [.init(place: .after("p0"), items: [.init(id: "r")])]))
        #expect(session.layout.rects[session.layout.item(withID: "r") ?? 0].x == 0)
        #expect(session.layout.rects[session.layout.item(withID: "r") ?? 0].y == 410)
    }

    @Test func twoSessionsOnOneLayoutNeverSeeEachOthersEdits() throws {
        let (_, layout) = try Self.chat(count: 40)
        let configuration = SessionConfiguration(viewport: Size(width: 375, height: 600))
        var a = try ViewportSession(layout: layout, configuration: configuration)
        var b = try ViewportSession(layout: layout, configuration: configuration)
        let base = modelItems(of: layout)
        _ = try a.apply(StackEdit(resize: [.init(id: "m0", size: Size(width: 375, height: 300))], insert: [.init(place: .start(section: "chat"), items: [.init(id: "a1")])]))
        _ = try b.apply(StackEdit(insert: [.init(place: .start(section: "chat"), items: [.init(id: "b1")])], remove: ["m3"]))
        #expect(modelItems(of: layout) == base)
        #expect(a.layout.item(withID: "b1") == nil && b.layout.item(withID: "a1") == nil)
        #expect(a.layout.item(withID: "m3") != nil && b.layout.item(withID: "m3") == nil)
        #expect(b.layout.rects[b.layout.item(withID: "m0") ?? 0].height == 80)
        #expect(a.layout.rects[a.layout.item(withID: "m0") ?? 0].height == 300)
        // b may insert the id a inserted: it is new in b's layout.
        _ = try b.apply(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "a1")])]))
        #expect(a.layout.item(withID: "a1") == 0 && b.layout.item(withID: "a1") == b.layout.count - 1)
        #expect(a.layout.digest == layout.digest && b.layout.digest == layout.digest)
    }

    @Test func invalidEditsAndConflictsChangeNothingAndRetriesAnswerTheLastPlan() throws {
        let (_, layout) = try Self.chat(count: 40)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 500)))
        let insert = StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "x")])])
        let plan = try session.apply(insert, seq: 1)
        let snapshot = (session.seq, session.offset, session.visible, session.pooledViews.map(\.views), session.stats, session.edits, session.lastPlan)
        let current = session.layout
        // A retry answers the last plan again (the insert itself would now be refused).
        #expect(try session.apply(insert, seq: 1) == plan)
        #expect(throws: SessionError.invalid(field: "insert[0].items[0].id", reason: "\"x\" is already an item of the layout")) { try session.apply(insert, seq: 2) }
        #expect(throws: SessionError.sequenceConflict(current: 1, sent: 5)) { try session.apply(StackEdit(remove: ["m1"]), seq: 5) }
        #expect(throws: SessionError.invalid(field: "remove[0]", reason: "\"nope\" is not an item of the layout")) { try session.apply(StackEdit(remove: ["nope"]), seq: 5) }
        #expect(session.layout === current)
        #expect(session.seq == snapshot.0 && session.offset == snapshot.1 && session.visible == snapshot.2)
        #expect(session.pooledViews.map(\.views) == snapshot.3 && session.stats == snapshot.4 && session.edits == snapshot.5 && session.lastPlan == snapshot.6)
    }

    @Test func stickyHeadersScrollToPagingAndPrefetchWorkOnStacks() throws {
        let model = FlowModel(sections: [
            .stack(FlowModel.makeStack(
                id: "top", reuse: "msg", items: (0..<20).map { ("t\($0)", Size(width: 375, height: 100), nil) }, estimate: nil, spacing: 0, lanes: 1,
                laneSize: 375, axis: .y)),
            .items([FlowModel.Placed(id: "header", rect: Rect(x: 0, y: 0, width: 375, height: 50), reuse: "header", sticky: true)]),
            .stack(FlowModel.makeStack(
                id: "feed", reuse: "msg", items: (0..<50).map { ("f\($0)", Size(width: 375, height: 100), nil) }, estimate: nil, spacing: 0, lanes: 1,
                laneSize: 375, axis: .y)),
        ])
        let layout = try model.build()
        var configuration = SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 2500))
        configuration.paging = PagingOptions(mode: .items)
        configuration.prefetch = 1
        var session = try ViewportSession(layout: layout, configuration: configuration)
        #expect(session.pinned?.item == 20)
        #expect(session.pinned?.rect.y == 2500)
        // The stack above grows by 500: the header moves down with its section, and unpins.
        let plan = try session.apply(StackEdit(resize: (0..<5).map { .init(id: "t\($0)", size: Size(width: 375, height: 200)) }), anchor: .none)
        #expect(session.layout.rects[20].y == 2500)
        #expect(session.pinned == nil)
        #expect(plan.unpin.map(\.item) == [20])
        // Pins again further down.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 3000)))
        #expect(session.pinned?.item == 20 && session.pinned?.rect.y == 3000)
        // scrollTo a stack item inserted by an edit.
        _ = try session.apply(StackEdit(insert: [.init(place: .after("f10"), items: [.init(id: "ins", size: Size(width: 375, height: 30))])]), anchor: .none)
        let target = try #require(session.layout.item(withID: "ins"))
        let scrolled = try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: target, align: .start)))
        #expect(scrolled.offset.y == session.layout.rects[target].y)
        #expect(scrolled.offset.y == 2000 + 500 + 50 + 1100)
        // Paging items: the nearest leading edge among all items.
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 3000), phase: .dragBegin))
        let drag = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 3020), velocity: .zero, phase: .dragEnd))
        #expect(drag.target == Point(x: 0, y: 3050))
        // Prefetch predicts stack items ahead.
        let flung = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 3020), velocity: Point(x: 0, y: 300), phase: .decelerating))
        #expect(!flung.prefetch.isEmpty)
        #expect(flung.prefetch.allSatisfy { session.layout.rects[$0].y >= 3020 + 600 + 20 })
    }

    @Test func resizesAloneRenumberNothingAndPlanOnlyMoves() throws {
        let (_, layout) = try Self.chat(count: 1000)
        var configuration = SessionConfiguration(viewport: Size(width: 375, height: 600), offset: Point(x: 0, y: 40_000))
        configuration.exposure = true
        var session = try ViewportSession(layout: layout, configuration: configuration)
        let visible = session.visible
        let plan = try session.apply(StackEdit(resize: visible.map { .init(id: layout.id(at: $0.item), size: Size(width: 375, height: 81)) }), anchor: .visible)
        #expect(session.visible.map(\.item) == visible.map(\.item) || !plan.create.isEmpty || !plan.reuse.isEmpty)
        #expect(plan.move.allSatisfy { session.layout.rects[$0.item].height == 81 || session.layout.rects[$0.item].y != layout.rects[$0.item].y })
    }
}
