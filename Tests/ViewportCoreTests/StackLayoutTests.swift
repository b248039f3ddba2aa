import Testing
import ViewportCore
import ViewportTestSupport

/// Random layouts with stacks and random edits of them, for the model tests (seeds replay).
enum StackScenario {
    static let reuses: [String?] = ["msg", "photo", nil, ""]

    static func size(_ laneSize: Double, using rng: inout SeededRandom, axis: Axis) -> Size {
        let main = Double(Int.random(in: 0...800, using: &rng)) / 4
        return axis == .y ? Size(width: laneSize, height: main) : Size(width: main, height: laneSize)
    }

    static func randomModel(using rng: inout SeededRandom, axis: Axis = .y, count: ClosedRange<Int> = 0...150) -> FlowModel {
        var sections: [FlowModel.Section] = []
        var n = 0
        if Bool.random(using: &rng) {
            let headers = (0..<Int.random(in: 0...3, using: &rng)).map { k -> FlowModel.Placed in
                n += 1
                return FlowModel.Placed(
                    id: "h\(k)", rect: Rect(x: Double(k * 10), y: Double(k * 30), width: 100, height: 30),
                    reuse: reuses.randomElement(using: &rng) ?? nil)
            }
            sections.append(.items(headers))
        }
        for s in 0..<Int.random(in: 1...2, using: &rng) {
            let lanes = Int.random(in: 1...3, using: &rng)
            let laneSize = Double([100, 180, 375][Int.random(in: 0...2, using: &rng)])
            let estimate: Size? = Bool.random(using: &rng) ? (axis == .y ? Size(width: laneSize, height: 80) : Size(width: 80, height: laneSize)) : nil
            let items = (0..<Int.random(in: count, using: &rng)).map { k -> (id: String, size: Size?, reuse: String?) in
                let measured = estimate == nil || Bool.random(using: &rng)
                return ("s\(s)m\(k)", measured ? size(laneSize, using: &rng, axis: axis) : nil, Int.random(in: 0..<4, using: &rng) == 0 ? (reuses.randomElement(using: &rng) ?? nil) : nil)
            }
            sections.append(.stack(FlowModel.makeStack(
                id: "stack\(s)", reuse: ["msg", nil][Int.random(in: 0...1, using: &rng)], items: items, estimate: estimate,
                spacing: Double(Int.random(in: 0...8, using: &rng)), lanes: lanes, laneSize: laneSize, axis: axis)))
            if Bool.random(using: &rng) {
                sections.append(.list(id: "list\(s)", reuse: "row", count: Int.random(in: 0...20, using: &rng), size: axis == .y ? Size(width: 375, height: 44) : Size(width: 44, height: 375), spacing: 2))
            }
            if Bool.random(using: &rng) {
                sections.append(.items([FlowModel.Placed(id: "f\(s)", rect: Rect(x: 5, y: 5, width: 50, height: 60), reuse: "footer")]))
            }
        }
        _ = n
        return FlowModel(
            axis: axis, insets: Insets(top: Double(Int.random(in: 0...20, using: &rng)), left: 3, bottom: 7, right: 2), spacing: Double(Int.random(in: 0...10, using: &rng)),
            sections: sections)
    }

    /// Every stack item's id in the model.
    static func stackIDs(_ model: FlowModel) -> [String] {
        model.sections.flatMap { section -> [String] in
            if case .stack(let stack) = section { return stack.items.map(\.id) }
            return []
        }
    }

    static func stackNames(_ model: FlowModel) -> [String] {
        model.sections.compactMap { section in
            if case .stack(let stack) = section { return stack.id }
            return nil
        }
    }

    /// A valid random edit: resizes, inserts (next to items or at an end) and removes.
    static func randomEdit(_ model: FlowModel, using rng: inout SeededRandom, counter: inout Int, near: [String] = []) -> StackEdit {
        let ids = stackIDs(model)
        var edit = StackEdit()
        let pool = near.isEmpty ? ids : near
        if !pool.isEmpty {
            for _ in 0..<Int.random(in: 0...10, using: &rng) {
                guard let id = pool.randomElement(using: &rng) else { break }
                edit.resize.append(.init(id: id, size: size(Double([100, 180, 375][Int.random(in: 0...2, using: &rng)]), using: &rng, axis: model.axis)))
            }
        }
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            let place: StackEdit.Place
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !ids.isEmpty: place = .before(ids.randomElement(using: &rng) ?? "")
            case 1 where !ids.isEmpty: place = .after(ids.randomElement(using: &rng) ?? "")
            case 2: place = .start(section: stackNames(model).randomElement(using: &rng) ?? "")
            default: place = .end(section: stackNames(model).randomElement(using: &rng) ?? "")
            }
            let items = (0..<Int.random(in: 1...4, using: &rng)).map { _ -> StackEdit.NewItem in
                counter += 1
                let measured = Bool.random(using: &rng)
                return .init(id: "n\(counter)", size: measured ? size(180, using: &rng, axis: model.axis) : nil, reuse: Int.random(in: 0..<3, using: &rng) == 0 ? "new\(counter % 3)" : nil)
            }
            edit.insert.append(.init(place: place, items: items))
        }
        let removable = ids.filter { id in
            !edit.insert.contains { insert in
                switch insert.place {
                case .before(let a), .after(let a): return a == id
                default: return false
                }
            }
        }
        var removed = Set<String>()
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            guard let id = removable.randomElement(using: &rng), !removed.contains(id) else { continue }
            removed.insert(id)
            edit.remove.append(id)
        }
        // An edit whose model application fails (an unmeasured insert into a stack without an
        // estimate) is replaced by a resize-only one.
        var check = model
        if (try? check.apply(edit)) == nil || !insertsHaveSizes(model, edit) { return StackEdit(resize: edit.resize) }
        return edit
    }

    /// Whether every inserted item without a size goes into a stack with an estimate.
    static func insertsHaveSizes(_ model: FlowModel, _ edit: StackEdit) -> Bool {
        var copy = model
        for (i, insert) in edit.insert.enumerated() {
            let stack: FlowModel.Stack?
            switch insert.place {
            case .before(let id), .after(let id):
                stack = copy.find(id).flatMap { if case .stack(let s) = copy.sections[$0.section] { return s } else { return nil } }
            case .start(let name), .end(let name):
                stack = copy.sections.compactMap { if case .stack(let s) = $0, s.id == name { return s } else { return nil } }.first
            }
            guard let stack else { return false }
            if stack.estimate == nil && insert.items.contains(where: { $0.size == nil }) { return false }
            if (try? copy.apply(StackEdit(insert: [edit.insert[i]]))) == nil { return false }
        }
        return true
    }
}

func normalized(_ items: [FlowModel.Item]) -> [FlowModel.Item] {
    items.map { var i = $0; if i.reuse == "" { i.reuse = nil }; return i }
}

struct StackLayoutTests {
    @Test(arguments: 0..<24)
    func stackLayoutsMatchTheFlowModel(seed: Int) throws {
        print("StackLayoutTests seed \(seed): swift test --filter stackLayoutsMatchTheFlowModel")
        var rng = SeededRandom(seed: UInt64(seed) &+ 500)
        let model = StackScenario.randomModel(using: &rng, axis: seed % 3 == 2 ? .x : .y)
        let layout = try model.build()
        #expect(modelItems(of: layout) == normalized(model.items), "seed \(seed)")
        #expect(layout.contentSize == model.contentSize, "seed \(seed)")
        // Lanes named explicitly: the same rects.
        let named = try model.build(lanes: true)
        #expect(modelItems(of: named) == modelItems(of: layout))
        #expect(named.digest == layout.digest)
        // Ids find their items; queries match brute force.
        for item in 0..<layout.count { #expect(layout.item(withID: layout.id(at: item)) == item) }
        for _ in 0..<20 {
            let region = SentRegion(
                offset: Point(x: Double(Int.random(in: -100...600, using: &rng)), y: Double(Int.random(in: -100...6000, using: &rng))),
                viewport: Size(width: Double(Int.random(in: 0...400, using: &rng)), height: Double(Int.random(in: 0...700, using: &rng))), buffer: 0)
            #expect(layout.items(in: region.region) == oracle(layout, region), "seed \(seed)")
        }
    }

    @Test func aStackLayoutIsNotTheSameItemsPostedExplicitly() throws {
        // Same rects, but the stack takes edits the explicit items do not (docs/api.md "Identity
        // and ids"): another id, not identical (sharing one, whichever was posted first would
        // answer for both).
        var rng = SeededRandom(seed: 9)
        let model = StackScenario.randomModel(using: &rng, count: 50...80)
        let layout = try model.build()
        let explicit = try makeLayout(
            modelItems(of: layout).map { ItemSpec(id: $0.id, rect: $0.rect, reuse: $0.reuse) }, contentSize: layout.contentSize)
        #expect(layout.digest != explicit.digest)
        #expect(!layout.isIdentical(to: explicit) && !explicit.isIdentical(to: layout))
        // The same model built again is the same layout.
        let again = try model.build()
        #expect(again.digest == layout.digest && again.isIdentical(to: layout))
        // One size differs: another id.
        guard case .stack(var stack) = model.sections.first(where: { if case .stack = $0 { return true } else { return false } }) else { return }
        var other = model
        stack.items[0].size = Size(width: 1, height: 1)
        other.sections[other.sections.firstIndex { if case .stack = $0 { return true } else { return false } } ?? 0] = .stack(stack)
        #expect(try other.build(lanes: true).digest != layout.digest)
    }

    @Test func stackErrorsNameTheSectionFieldAndItem() throws {
        func build(_ spec: StackSpec) throws(LayoutError) -> Layout {
            var builder = LayoutBuilder()
            var stack = SectionStack(withStacks: true)
            try stack.append(SectionSpec(id: "chat", shape: .stack(spec)), to: &builder)
            return try builder.build()
        }
        #expect(throws: LayoutError.invalidSection(field: "sections[0].stack.items[1].size", reason: "required when the stack has no estimate (item \"b\")")) {
            try build(StackSpec(items: [.init(id: "a", size: Size(width: 1, height: 1)), .init(id: "b")]))
        }
        #expect(throws: LayoutError.invalidSection(field: "sections[0].stack.items[0].size", reason: "must be finite and not negative (item \"a\")")) {
            try build(StackSpec(items: [.init(id: "a", size: Size(width: 1, height: -1))]))
        }
        #expect(throws: LayoutError.invalidSection(field: "sections[0].stack.items[0].lane", reason: "must be 0…1, not 2 (item \"a\")")) {
            try build(StackSpec(items: [.init(id: "a", size: Size(width: 1, height: 1), lane: 2)], lanes: 2, laneSize: 10))
        }
        #expect(throws: LayoutError.invalidSection(field: "sections[0].stack.items[1].id", reason: "must not be empty")) {
            try build(StackSpec(items: [.init(id: "a"), .init(id: "")], estimate: Size(width: 1, height: 1)))
        }
        #expect(throws: LayoutError.duplicateID(id: "a", first: 0, second: 1)) {
            try build(StackSpec(items: [.init(id: "a"), .init(id: "a")], estimate: Size(width: 1, height: 1)))
        }
    }

    @Test(arguments: 0..<30)
    func randomEditsFollowTheModelAndLeaveEarlierVersionsAlone(seed: Int) throws {
        print("StackLayoutTests seed \(seed): swift test --filter randomEditsFollowTheModelAndLeaveEarlierVersionsAlone")
        var rng = SeededRandom(seed: UInt64(seed) &+ 7000)
        var model = StackScenario.randomModel(using: &rng, axis: seed % 4 == 3 ? .x : .y)
        var layout = try model.build()
        let base = layout
        let baseItems = modelItems(of: base)
        var counter = 0
        for step in 0..<25 {
            let edit = StackScenario.randomEdit(model, using: &rng, counter: &counter)
            let before = modelItems(of: layout)
            let edited = try layout.applying(edit)
            try model.apply(edit)
            let after = modelItems(of: edited.layout)
            #expect(after == normalized(model.items), "seed \(seed) step \(step)")
            #expect(edited.layout.contentSize == model.contentSize, "seed \(seed) step \(step)")
            #expect(modelItems(of: layout) == before, "the edited version changed")
            // Old positions map to the new ones by id.
            for item in 0..<layout.count {
                let id = before[item].id
                #expect(edited.newPosition(ofOld: item) == edited.layout.item(withID: id), "seed \(seed) step \(step) \(id)")
            }
            for (k, item) in after.enumerated() { #expect(edited.layout.item(withID: item.id) == k) }
            // Posted again with every lane named: the same rects, to the bit.
            let again = try model.build(lanes: true)
            #expect(modelItems(of: again) == after, "seed \(seed) step \(step)")
            #expect(again.contentSize == edited.layout.contentSize)
            for _ in 0..<5 {
                let region = SentRegion(
                    offset: Point(x: Double(Int.random(in: -100...600, using: &rng)), y: Double(Int.random(in: -100...8000, using: &rng))),
                    viewport: Size(width: Double(Int.random(in: 0...400, using: &rng)), height: Double(Int.random(in: 0...700, using: &rng))), buffer: 0)
                #expect(edited.layout.items(in: region.region) == oracle(edited.layout, region), "seed \(seed) step \(step)")
            }
            layout = edited.layout
        }
        #expect(modelItems(of: base) == baseItems)
    }

    @Test func invalidEditsNameTheFieldAndChangeNothing() throws {
        let model = FlowModel(sections: [
            .items([FlowModel.Placed(id: "title", rect: Rect(x: 0, y: 0, width: 375, height: 40), reuse: nil)]),
            .stack(FlowModel.makeStack(
                id: "chat", reuse: "msg", items: [("m1", Size(width: 375, height: 64), nil), ("m2", nil, nil)], estimate: Size(width: 375, height: 80),
                spacing: 4, lanes: 1, laneSize: 375, axis: .y)),
            .list(id: "feed", reuse: "row", count: 5, size: Size(width: 375, height: 44), spacing: 0),
            .stack(FlowModel.makeStack(
                id: "strict", reuse: nil, items: [("s1", Size(width: 375, height: 10), nil)], estimate: nil, spacing: 0, lanes: 1, laneSize: 375, axis: .y)),
        ])
        let layout = try model.build()
        let before = modelItems(of: layout)
        let cases: [(StackEdit, SessionError)] = [
            (StackEdit(resize: [.init(id: "zz", size: Size(width: 1, height: 1))]), .invalid(field: "resize[0].id", reason: "\"zz\" is not an item of the layout")),
            (StackEdit(resize: [.init(id: "title", size: Size(width: 1, height: 1))]),
             .invalid(field: "resize[0].id", reason: "\"title\" is an item of an items section, not of a stack")),
            (StackEdit(resize: [.init(id: "feed-2", size: Size(width: 1, height: 1))]),
             .invalid(field: "resize[0].id", reason: "\"feed-2\" is an item of the generated section \"feed\", not of a stack")),
            (StackEdit(resize: [.init(id: "m1", size: Size(width: 1, height: -1))]),
             .invalid(field: "resize[0].size", reason: "must be finite and not negative (item \"m1\")")),
            (StackEdit(insert: [.init(place: .after("m2"), items: [.init(id: "m1")])]),
             .invalid(field: "insert[0].items[0].id", reason: "\"m1\" is already an item of the layout")),
            (StackEdit(insert: [.init(place: .after("m2"), items: [.init(id: "title")])]),
             .invalid(field: "insert[0].items[0].id", reason: "\"title\" is already an item of the layout")),
            (StackEdit(insert: [.init(place: .after("m2"), items: [.init(id: "feed-4")])]),
             .invalid(field: "insert[0].items[0].id", reason: "\"feed-4\" is already an item of the layout")),
            (StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "x"), .init(id: "x")])]),
             .invalid(field: "insert[0].items[1].id", reason: "\"x\" is also insert[0].items[0]")),
            (StackEdit(insert: [.init(place: .end(section: "feed"), items: [.init(id: "x")])]),
             .invalid(field: "insert[0].section", reason: "\"feed\" is not a stack section of the layout")),
            (StackEdit(insert: [.init(place: .before("title"), items: [.init(id: "x")])]),
             .invalid(field: "insert[0].before", reason: "\"title\" is an item of an items section, not of a stack")),
            (StackEdit(insert: [.init(place: .end(section: "strict"), items: [.init(id: "x")])]),
             .invalid(field: "insert[0].items[0].size", reason: "required: the stack has no estimate (item \"x\")")),
            (StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "")])]), .invalid(field: "insert[0].items[0].id", reason: "must not be empty")),
            // Sequential: the first insert's item is an item for the second; a second remove of one id is not.
            (StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "n")]), .init(place: .after("n"), items: [.init(id: "n")])]),
             .invalid(field: "insert[1].items[0].id", reason: "\"n\" is already an item of the layout")),
            (StackEdit(resize: [.init(id: "m1", size: Size(width: 375, height: 10))], remove: ["m2", "m2"]),
             .invalid(field: "remove[1]", reason: "\"m2\" is not an item of the layout")),
        ]
        for (edit, error) in cases {
            #expect(throws: error) { try layout.applying(edit) }
            #expect(modelItems(of: layout) == before)
        }
        #expect(throws: SessionError.tooLarge(field: "insert[0].items", reason: "the layout would have 11 items, more than 10 (layouts.maxItems)")) {
            try layout.applying(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "x"), .init(id: "y")])]), maxItems: 10)
        }
        // A removed item's id is free again; inserted items are found, removed ones are not.
        let removed = try layout.applying(StackEdit(remove: ["m1"])).layout
        #expect(removed.item(withID: "m1") == nil)
        let edited = try removed.applying(StackEdit(insert: [.init(place: .after("m2"), items: [.init(id: "m1", size: Size(width: 375, height: 5))])]))
        #expect(edited.layout.item(withID: "m1") == 2)
        #expect(edited.layout.id(at: 2) == "m1")
        let again = try edited.layout.applying(StackEdit(remove: ["m1"]))
        #expect(again.layout.item(withID: "m1") == nil)
        #expect(again.layout.count == layout.count - 1)
        // A layout without stacks has nothing to edit.
        let plain = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 1, height: 1))])
        #expect(throws: SessionError.self) { try plain.applying(StackEdit(resize: [.init(id: "a", size: .zero)])) }
    }

    @Test func itemsModeFindsTheNearestLeadingEdgeAcrossStacksAndOtherSections() throws {
        var rng = SeededRandom(seed: 77)
        for _ in 0..<10 {
            let model = StackScenario.randomModel(using: &rng)
            let layout = try model.build()
            for axis in Axis.allCases {
                let edges = (0..<layout.count).map { axis.leadingEdge(of: layout.rects[$0]) }
                for _ in 0..<30 {
                    let p = Double(Int.random(in: -200...9000, using: &rng)) / 2
                    let expected = edges.min { (abs($0 - p), $0) < (abs($1 - p), $1) }
                    #expect(layout.nearestLeadingEdge(along: axis, to: p) == expected)
                }
            }
        }
    }
}
