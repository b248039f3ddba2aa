import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// A chat layout as JSON, with a model of its rects written from docs/api.md "Stacks and edits": a header items
/// section, a stack (one or two lanes) whose items each start where the previous item of their
/// lane ends plus `spacing`, and a footer items section after the stack; sizes are whole points,
/// so the sums are exact.
struct ChatModel {
    struct Message {
        var id: String
        var size: [Double]?
        var reuse: String?
        var lane: Int
    }

    var messages: [Message]
    var estimate: [Double]? = [375, 80]
    var spacing: Double = 4
    var lanes = 1
    var laneSize: Double = 375
    var sectionSpacing: Double = 10
    var top: Double = 8

    static let header = TestItem(id: "title", rect: [0, 0, 375, 44], reuse: "title")
    static let footer = TestItem(id: "composer", rect: [0, 0, 375, 50], reuse: nil)

    func size(_ m: Message) -> [Double] { m.size ?? estimate ?? [0, 0] }

    /// Each lane's end (nil while empty) over `messages`.
    func laneEnds(_ messages: [Message]) -> [Double?] {
        var ends = [Double?](repeating: nil, count: lanes)
        for m in messages { ends[m.lane] = (ends[m.lane].map { $0 + spacing } ?? 0) + size(m)[1] }
        return ends
    }

    func shortestLane(_ messages: [Message]) -> Int {
        let ends = laneEnds(messages)
        var best = 0
        for j in ends.indices where (ends[j] ?? 0) < (ends[best] ?? 0) { best = j }
        return best
    }

    /// Every item with its rect, in layout order.
    var items: [TestItem] {
        var out = [TestItem(id: Self.header.id, rect: [0, top, 375, 44], reuse: Self.header.reuse)]
        let origin = top + 44 + sectionSpacing
        var ends = [Double?](repeating: nil, count: lanes)
        for m in messages {
            let start = ends[m.lane].map { $0 + spacing } ?? 0
            let s = size(m)
            out.append(TestItem(id: m.id, rect: [Double(m.lane) * (laneSize + spacing), origin + start, s[0], s[1]], reuse: m.reuse ?? "msg"))
            ends[m.lane] = start + s[1]
        }
        let footerY = origin + (ends.compactMap { $0 }.max() ?? 0) + sectionSpacing
        out.append(TestItem(id: Self.footer.id, rect: [0, footerY, 375, 50], reuse: nil))
        return out
    }

    var contentSize: [Double] {
        let all = items
        return [all.map { $0.rect[0] + $0.rect[2] }.max() ?? 0, all.map { $0.rect[1] + $0.rect[3] }.max() ?? 0]
    }

    /// The layout as posted; with `lanes`, every message names its lane.
    func json(lanes namingLanes: Bool = false) -> String {
        let list = messages.map { m -> String in
            var s = #"{"id":"\#(m.id)""#
            if let size = m.size { s += #","size":[\#(size.map(number).joined(separator: ","))]"# }
            if let reuse = m.reuse { s += #","reuse":"\#(reuse)""# }
            if namingLanes && lanes > 1 { s += #","lane":\#(m.lane)"# }
            return s + "}"
        }.joined(separator: ",")
        var stack = #""items":[\#(list)],"spacing":\#(number(spacing)),"lanes":\#(lanes),"laneSize":\#(number(laneSize))"#
        if let estimate { stack += #","estimate":[\#(estimate.map(number).joined(separator: ","))]"# }
        return #"{"insets":[\#(number(top)),0,0,0],"spacing":\#(number(sectionSpacing)),"sections":["#
            + #"{"items":[{"id":"title","rect":[0,0,375,44],"reuse":"title"}]},"#
            + #"{"id":"chat","reuse":"msg","stack":{\#(stack)}},"#
            + #"{"items":[{"id":"composer","rect":[0,0,375,50]}]}]}"#
    }

    // MARK: Edits

    struct Edit {
        var resize: [(String, [Double])] = []
        var insert: [(place: String, ref: String, items: [(String, [Double]?)])] = []
        var remove: [String] = []

        func json(anchor: String?, seq: Int?) -> String {
            var parts: [String] = []
            if !resize.isEmpty {
                parts.append(#""resize":[\#(resize.map { #"{"id":"\#($0.0)","size":[\#($0.1.map(number).joined(separator: ","))]}"# }.joined(separator: ","))]"#)
            }
            if !insert.isEmpty {
                let inserts = insert.map { ins -> String in
                    let items = ins.items.map { item -> String in
                        item.1.map { #"{"id":"\#(item.0)","size":[\#($0.map(number).joined(separator: ","))]}"# } ?? #"{"id":"\#(item.0)"}"#
                    }.joined(separator: ",")
                    let place = ins.place == "at" ? #""at":"\#(ins.ref)","section":"chat""# : #""\#(ins.place)":"\#(ins.ref)""#
                    return #"{\#(place),"items":[\#(items)]}"#
                }
                parts.append(#""insert":[\#(inserts.joined(separator: ","))]"#)
            }
            if !remove.isEmpty { parts.append(#""remove":[\#(remove.map { "\"\($0)\"" }.joined(separator: ","))]"#) }
            if let anchor { parts.append(#""anchor":"\#(anchor)""#) }
            if let seq { parts.append(#""seq":\#(seq)"#) }
            return "{" + parts.joined(separator: ",") + "}"
        }
    }

    /// The order of docs/api.md "Stacks and edits": resizes, inserts in order (lanes: the neighbour's, the first item's at the
    /// start, the shortest at the end), removes.
    mutating func apply(_ edit: Edit) {
        for (id, size) in edit.resize {
            if let k = messages.firstIndex(where: { $0.id == id }) { messages[k].size = size }
        }
        for insert in edit.insert {
            var index: Int
            var lane: Int?
            switch (insert.place, insert.ref) {
            case ("before", let id), ("after", let id):
                let k = messages.firstIndex { $0.id == id } ?? 0
                lane = messages[k].lane
                index = insert.place == "before" ? k : k + 1
            case ("at", "start"):
                index = 0
                lane = messages.first?.lane ?? 0
            default:
                index = messages.count
            }
            for (id, size) in insert.items {
                let m = Message(id: id, size: size, reuse: nil, lane: lane ?? shortestLane(messages))
                messages.insert(m, at: index)
                index += 1
            }
        }
        for id in edit.remove { messages.removeAll { $0.id == id } }
    }

    static func make(count: Int, lanes: Int, using rng: inout SplitMix) -> ChatModel {
        var model = ChatModel(messages: [], lanes: lanes, laneSize: lanes == 1 ? 375 : 180)
        model.estimate = [model.laneSize, 80]
        for k in 0..<count {
            let size: [Double]? = rng.next() % 2 == 0 ? [model.laneSize, Double(20 + rng.next() % 200)] : nil
            model.messages.append(Message(id: "m\(k)", size: size, reuse: rng.next() % 5 == 0 ? "photo" : nil, lane: model.shortestLane(model.messages)))
        }
        return model
    }

    func randomEdit(using rng: inout SplitMix, counter: inout Int, near: [String]) -> Edit {
        var edit = Edit()
        let ids = messages.map(\.id)
        let pool = near.isEmpty ? ids : near
        if !pool.isEmpty {
            for _ in 0..<Int(rng.next() % 11) { edit.resize.append((pool[Int(rng.next() % UInt64(pool.count))], [laneSize, Double(rng.next() % 250)])) }
        }
        for _ in 0..<Int(rng.next() % 3) {
            let kind = Int(rng.next() % 4)
            let items = (0..<Int(1 + rng.next() % 3)).map { _ -> (String, [Double]?) in
                counter += 1
                return ("n\(counter)", rng.next() % 2 == 0 ? [laneSize, Double(10 + rng.next() % 150)] : nil)
            }
            if kind < 2, !ids.isEmpty {
                edit.insert.append((kind == 0 ? "before" : "after", ids[Int(rng.next() % UInt64(ids.count))], items))
            } else {
                edit.insert.append(("at", kind == 2 ? "start" : "end", items))
            }
        }
        let anchors = Set(edit.insert.map(\.ref))
        for _ in 0..<Int(rng.next() % 3) where !ids.isEmpty {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            if !anchors.contains(id) && !edit.remove.contains(id) { edit.remove.append(id) }
        }
        return edit
    }
}

/// The anchor rules of docs/api.md "Stacks and edits" over the model's items (y axis).
func expectedOffset(anchor: String, offset: [Double], viewport: [Double], old: [TestItem], new: [TestItem], oldContent: [Double], newContent: [Double]) -> [Double] {
    func visible() -> [Double] {
        let onScreen = materialized(old, offset: offset, viewport: viewport, buffer: 0)
        let byID = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
        let oldByID = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0) })
        for id in onScreen {
            guard let after = byID[id], let before = oldByID[id] else { continue }
            return [offset[0] + (after.rect[0] - before.rect[0]), offset[1] + (after.rect[1] - before.rect[1])]
        }
        return offset
    }
    switch anchor {
    case "none": return offset
    case "end":
        guard abs(offset[1] - max(0, oldContent[1] - viewport[1])) <= 1 else { return visible() }
        return [max(0, min(offset[0], max(0, newContent[0] - viewport[0]))), max(0, newContent[1] - viewport[1])]
    default: return visible()
    }
}

@Suite struct StackHTTPTests {
    func patch(_ client: Client, _ session: String, _ body: String) throws -> Reply {
        try client.send("PATCH", "/v1/sessions/\(session)/layout", json: body)
    }

    @Test(arguments: 0..<10)
    func aSimulatedClientReplaysRandomEditsAndScrollsOverHTTP(seed: Int) throws {
        print("StackHTTPTests seed \(seed): swift test --filter aSimulatedClientReplaysRandomEditsAndScrollsOverHTTP")
        var rng = SplitMix(seed: UInt64(seed) &+ 31)
        var chat = ChatModel.make(count: Int(20 + rng.next() % 150), lanes: seed % 3 == 2 ? 2 : 1, using: &rng)
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(chat.json())
            let viewport: [Double] = [375, Double(300 + rng.next() % 400)]
            let buffer = Double(rng.next() % 60)
            let offset: [Double] = [0, Double(rng.next() % 2000)]
            let (s, opened) = try client.openSession(
                #"{"layout":"\#(layout)","viewport":[\#(viewport.map(number).joined(separator: ","))],"offset":[0,\#(number(offset[1]))],"buffer":\#(number(buffer)),"pool":{"max":3}}"#)
            var model = IDModel(items: chat.items, offset: offset, viewport: viewport, buffer: buffer, caps: (3, [:]))
            model.open(opened.object("plan"))
            var counter = 0
            var edits = 0
            for step in 0..<40 {
                let context = "seed \(seed) step \(step)"
                if rng.next() % 3 == 0 {
                    let y = model.offset[1] + Double(Int(rng.next() % 1200) - 600)
                    let reply = try client.update(s, #"{"offset":[0,\#(number(y))],"seq":\#(model.seq + 1)}"#)
                    #expect(reply.status == 200, "\(context): \(reply.text)")
                    model.apply(reply.json, to: chat.items, offset: [0, y])
                } else {
                    let near = materialized(model.items, offset: model.offset, viewport: viewport, buffer: buffer).filter { $0.hasPrefix("m") || $0.hasPrefix("n") }
                    let edit = chat.randomEdit(using: &rng, counter: &counter, near: rng.next() % 2 == 0 ? near : [])
                    let anchor = ["visible", "end", "none"][Int(rng.next() % 3)]
                    var next = chat
                    next.apply(edit)
                    let newOffset = expectedOffset(
                        anchor: anchor, offset: model.offset, viewport: viewport, old: chat.items, new: next.items, oldContent: chat.contentSize,
                        newContent: next.contentSize)
                    let reply = try patch(client, s, edit.json(anchor: anchor, seq: model.seq + 1))
                    #expect(reply.status == 200, "\(context): \(reply.text)")
                    let plan = reply.json
                    model.apply(plan, to: next.items, offset: newOffset)
                    if next.contentSize != chat.contentSize {
                        #expect(plan.doubles("contentSize") == next.contentSize, "\(context)")
                    } else {
                        #expect(plan["contentSize"] == nil, "\(context)")
                    }
                    chat = next
                    edits += 1
                }
                if step % 8 == 7 {
                    let state = try client.state(s)
                    model.check(state: state)
                    #expect(state.int("edits") == edits)
                    #expect(state["layout"] as? String == layout)
                    // The content size as edited: what a page attaching after a reload sizes to.
                    #expect(state["contentSize"] as? [Double] == chat.contentSize, "\(context)")
                    // The session's layout posted again has these rects and content size: a session
                    // that shows it whole creates every item at its rect.
                    let current = try client.get("/v1/sessions/\(s)/layout")
                    #expect(current.status == 200)
                    let again = try client.postLayout(current.text)
                    #expect(try client.postLayout(current.text) == again)
                    let whole = try client.openSession(#"{"layout":"\#(again)","viewport":[1e7,1e7],"buffer":0}"#)
                    #expect(whole.json["contentSize"] as? [Double] == chat.contentSize, "\(context)")
                    let created = ((whole.json["plan"] as? [String: Any])?["create"] as? [[String: Any]]) ?? []
                    var rects: [String: [Double]] = [:]
                    for entry in created { rects[entry["id"] as? String ?? ""] = entry["rect"] as? [Double] }
                    #expect(rects == Dictionary(uniqueKeysWithValues: chat.items.map { ($0.id, $0.rect) }), "\(context): \(current.text.prefix(300))")
                    _ = try client.delete("/v1/sessions/\(whole.id)")
                    if chat.lanes > 1 {
                        #expect(current.text == chatJSONFromServer(chat), "lanes named")
                    }
                }
            }
        }
    }

    /// What GET /v1/sessions/{id}/layout writes for `chat` (for exact comparisons).
    func chatJSONFromServer(_ chat: ChatModel) -> String {
        let list = chat.messages.map { m -> String in
            var s = #"{"id":"\#(m.id)""#
            if let size = m.size { s += #","size":[\#(size.map(number).joined(separator: ","))]"# }
            if let reuse = m.reuse { s += #","reuse":"\#(reuse)""# }
            if chat.lanes > 1 { s += #","lane":\#(m.lane)"# }
            return s + "}"
        }.joined(separator: ",")
        let estimate = chat.estimate.map { #","estimate":[\#($0.map(number).joined(separator: ","))]"# } ?? ""
        return #"{"axis":"y","insets":[\#(number(chat.top)),0,0,0],"spacing":\#(number(chat.sectionSpacing)),"sections":["#
            + #"{"items":[{"id":"title","rect":[0,0,375,44],"reuse":"title"}]},"#
            + #"{"id":"chat","reuse":"msg","stack":{"items":[\#(list)]\#(estimate),"spacing":\#(number(chat.spacing)),"lanes":\#(chat.lanes),"laneSize":\#(number(chat.laneSize))}},"#
            + #"{"items":[{"id":"composer","rect":[0,0,375,50]}]}]}"#
    }

    @Test func invalidPatchesAnswerTheirProblemAndChangeNothing() throws {
        var rng = SplitMix(seed: 5)
        let chat = ChatModel.make(count: 30, lanes: 1, using: &rng)
        try withService { service in
            let client = try service.connect()
            let s = try client.openSession(#"{"layout":\#(chat.json()),"viewport":[375,600]}"#).id
            #expect(try patch(client, s, #"{"insert":[{"at":"end","section":"chat","items":[{"id":"x"}]}]}"#).status == 200)
            let state = try client.get("/v1/sessions/\(s)").text
            let layout = try client.get("/v1/sessions/\(s)/layout").text
            let cases: [(String, Int, String)] = [
                (#"{"resize":[{"id":"nope","size":[1,1]}]}"#, 422, #"resize[0].id: "nope" is not an item of the layout"#),
                (#"{"resize":[{"id":"title","size":[1,1]}]}"#, 422, #"resize[0].id: "title" is an item of an items section, not of a stack"#),
                (#"{"resize":[{"id":"m1","size":[1,-1]}]}"#, 422, #"resize[0].size: must be finite and not negative (item "m1")"#),
                (#"{"resize":[{"id":"m1","size":[1,1e13]}]}"#, 422, #"resize[0].size: must be at most 1000000000000 points (item "m1")"#),
                (#"{"insert":[{"at":"end","section":"chat","items":[{"id":"x"}]}]}"#, 422, #"insert[0].items[0].id: "x" is already an item of the layout"#),
                (#"{"insert":[{"at":"end","section":"chat","items":[{"id":"composer"}]}]}"#, 422, #"insert[0].items[0].id: "composer" is already an item of the layout"#),
                (#"{"insert":[{"at":"end","section":"nope","items":[{"id":"y"}]}]}"#, 422, #"insert[0].section: "nope" is not a stack section of the layout"#),
                (#"{"insert":[{"before":"title","items":[{"id":"y"}]}]}"#, 422, #"insert[0].before: "title" is an item of an items section, not of a stack"#),
                (#"{"resize":[{"id":"m1","size":[375,10]}],"remove":["m2","m2"]}"#, 422, #"remove[1]: "m2" is not an item of the layout"#),
                (#"{"remove":["m1"],"seq":9}"#, 409, ""),
                (#"{"insert":[{"at":"middle","section":"chat","items":[]}]}"#, 400, #"insert[0].at: "middle" is not one of "start", "end""#),
                (#"{"insert":[{"after":"m1","section":"chat","items":[]}]}"#, 400, #"insert[0]: "section" goes with "at"; "before" and "after" name an item"#),
                (#"{"insert":[{"at":"end","items":[]}]}"#, 400, #"insert[0]: missing field "section": "at" names an end of the stack section given by "section""#),
                (#"{"insert":[{"after":"m1"}]}"#, 400, #"insert[0]: missing field "items""#),
                (#"{"resize":[{"id":"m1"}]}"#, 400, #"resize[0]: missing field "size""#),
                (#"{"resize":[{"id":"m1","size":[1,1],"lane":0}]}"#, 400, #"resize[0]: unknown field "lane" at resize"#),
                (#"{"remove":["m1"],"anchor":"top"}"#, 400, ""),
                (#"{"remvoe":["m1"]}"#, 400, #"unknown field "remvoe" at layout edit"#),
            ]
            for (body, status, detail) in cases {
                let reply = try patch(client, s, body)
                let problem = reply.problem(status)
                if !detail.isEmpty { #expect(problem["detail"] as? String == detail, "\(body)") }
                #expect(try client.get("/v1/sessions/\(s)").text == state, "\(body)")
                #expect(try client.get("/v1/sessions/\(s)/layout").text == layout, "\(body)")
            }
        }
        // layouts.maxItems bounds inserts too (413).
        try withService({ $0.layouts.maxItems = 33 }) { service in
            let client = try service.connect()
            let s = try client.openSession(#"{"layout":\#(chat.json()),"viewport":[375,600]}"#).id
            let reply = try patch(client, s, #"{"insert":[{"at":"end","section":"chat","items":[{"id":"a"},{"id":"b"}]}]}"#)
            #expect(reply.problem(413)["detail"] as? String == "insert[0].items: the layout would have 34 items, more than 33 (layouts.maxItems)")
            #expect(try client.state(s).int("seq") == 0)
        }
        // A layout without stacks has none to edit.
        try withService { service in
            let client = try service.connect()
            let (s, opened) = try client.openSession(#"{"layout":\#(layoutJSON(listItems(5))),"viewport":[375,600]}"#)
            let reply = try patch(client, s, #"{"remove":["item-1"]}"#)
            #expect(reply.problem(422)["detail"] as? String == "layout: the session's layout has no stack sections to edit (only stacks' items can be resized, inserted or removed)")
            // Its layout is written in the items form; posted again, it is the same layout.
            let written = try client.get("/v1/sessions/\(s)/layout")
            #expect(written.text.hasPrefix(#"{"items":[{"id":"item-0","rect":[0,0,375,100],"reuse":"row"}"#))
            #expect(try client.postLayout(written.text) == opened["layout"] as? String)
        }
    }

    @Test func stackSectionsAreCheckedNamingTheFieldAndItem() throws {
        try withService { service in
            let client = try service.connect()
            let cases: [(String, Int, String)] = [
                (#"{"sections":[{"stack":{"items":[{"id":"a","size":[1,1],"wat":1}]}}]}"#, 400, #"sections[0].stack.items[0]: unknown field "wat" at stack item"#),
                (#"{"sections":[{"stack":{"items":[{"size":[1,1]}]}}]}"#, 400, #"sections[0].stack.items[0]: missing field "id""#),
                (#"{"sections":[{"stack":{"estimate":[1,1]}}]}"#, 400, #"sections[0].stack: missing field "items""#),
                (#"{"sections":[{"stack":{"items":[{"id":"a","size":[1]}]}}]}"#, 400, ""),
                (#"{"sections":[{"stack":{"items":[{"id":"a"}]}}]}"#, 422, #"sections[0].stack.items[0].size: required when the stack has no estimate (item "a")"#),
                (#"{"sections":[{"stack":{"items":[{"id":"a","size":[-1,1]}]}}]}"#, 422, #"sections[0].stack.items[0].size: must be finite and not negative (item "a")"#),
                (#"{"sections":[{"stack":{"items":[],"lanes":0,"laneSize":10}}]}"#, 422, "sections[0].stack.lanes: must be 1…64, not 0"),
                (#"{"sections":[{"stack":{"items":[{"id":"a","size":[1,1],"lane":3}],"lanes":2}}]}"#, 422, #"sections[0].stack.items[0].lane: must be 0…1, not 3 (item "a")"#),
                (#"{"sections":[{"stack":{"items":[{"id":"a","size":[1,1]},{"id":"a","size":[1,1]}]}}]}"#, 422, #"items[1].id: "a" is already the id of items[0]"#),
                (#"{"sections":[{"id":"s","stack":{"items":[]}},{"id":"s","list":{"count":1,"size":[1,1]}}]}"#, 422, "sections[s]: the id is already used by the section at item 0"),
            ]
            for (body, status, detail) in cases {
                let problem = try client.post("/v1/layouts", body).problem(status)
                if !detail.isEmpty { #expect(problem["detail"] as? String == detail, "\(body)") }
            }
        }
    }

    @Test func twoSessionsOnOneLayoutNeverSeeEachOthersEdits() throws {
        var rng = SplitMix(seed: 8)
        let chat = ChatModel.make(count: 40, lanes: 2, using: &rng)
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(chat.json())
            let stored = try client.get("/v1/layouts/\(layout)").json
            let a = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
            let b = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
            let before = try client.get("/v1/sessions/\(b)/layout").text
            #expect(try patch(client, a, #"{"resize":[{"id":"m0","size":[180,400]}],"insert":[{"at":"start","section":"chat","items":[{"id":"only-a"}]}],"remove":["m5"]}"#).status == 200)
            #expect(try client.get("/v1/sessions/\(b)/layout").text == before)
            #expect(try client.state(b).int("edits") == 0)
            #expect(try client.get("/v1/layouts/\(layout)").json["contentSize"] as? [Double] == stored["contentSize"] as? [Double])
            // b inserts the id a inserted: new in b's layout.
            #expect(try patch(client, b, #"{"insert":[{"at":"end","section":"chat","items":[{"id":"only-a"}]}]}"#).status == 200)
            // A new session on the stored layout starts from it, not from either session's edits.
            let c = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
            #expect(try client.get("/v1/sessions/\(c)/layout").text == before)
            #expect(try client.state(a).int("edits") == 1 && client.state(b).int("edits") == 1)
        }
    }

    /// A pooled view whose last item an edit removed cannot be reported by that id in a resync
    /// (422: not an item of the layout, with how to report it); with `"id": null` it is adopted,
    /// and the next plan reuses it like any pooled view.
    @Test func aResyncReportsAPooledViewWhoseItemWasRemovedWithANullID() throws {
        // m0–m2 are cards ("a"), the others messages: scrolled away, the cards' views stay pooled.
        let messages = (0..<30).map { #"{"id":"m\#($0)","size":[375,100]\#($0 < 3 ? #","reuse":"a""# : "")}"# }.joined(separator: ",")
        let layout = #"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":[\#(messages)]}}]}"#
        try withService { service in
            let client = try service.connect()
            let (id, _) = try client.openSession(#"{"layout":\#(layout),"viewport":[375,300],"buffer":0}"#)
            let moved = try client.update(id, #"{"offset":[0,1000],"seq":1}"#)
            #expect(moved.status == 200, "\(moved.text)")
            let pooled = (moved.json["recycle"] as? [[String: Any]] ?? []).compactMap { $0["view"] as? Int }
            #expect(pooled.count == 3, "\(moved.text)")
            #expect(try patch(client, id, #"{"remove":["m0","m1"],"seq":2}"#).status == 200)
            let shown = try client.state(id)
            let visible = (shown["visible"] as? [[String: Any]] ?? []).map { #"{"id":"\#($0["id"] as? String ?? "")","view":\#($0["view"] as? Int ?? 0)}"# }.joined(separator: ",")
            func body(_ pool: String) -> String { #"{"seq":2,"offset":[0,1000],"visible":[\#(visible)],"pool":{"a":[\#(pool)]}}"# }
            let named = try client.post("/v1/sessions/\(id)/resync", body(#"{"view":\#(pooled[0]),"id":"m0"},{"view":\#(pooled[1]),"id":"m1"},{"view":\#(pooled[2]),"id":"m2"}"#))
            #expect(named.status == 422 && named.text.contains("pool.a[0].id") && named.text.contains("null"), "\(named.text)")
            let adopted = try client.post("/v1/sessions/\(id)/resync", body(#"{"view":\#(pooled[0]),"id":null},{"view":\#(pooled[1])},{"view":\#(pooled[2]),"id":"m2"}"#))
            #expect(adopted.status == 200, "\(adopted.text)")
            #expect((adopted.json["pool"] as? [String: [Int]])?["a"] == pooled, "\(adopted.text)")
            // Back to the top: m2 takes its own view back (its id was given), not the newest.
            let back = try client.update(id, #"{"offset":[0,0],"seq":3}"#)
            #expect(back.status == 200, "\(back.text)")
            let reused = back.json["reuse"] as? [[String: Any]] ?? []
            #expect(reused.first { $0["id"] as? String == "m2" }?["view"] as? Int == pooled[2], "\(back.text)")
            #expect(reused.first { $0["id"] as? String == "m2" }?["rebind"] as? Bool == false, "\(back.text)")
            #expect((try client.state(id)["pool"] as? [String: [Int]])?["a"] == Array(pooled[0..<2]))
        }
    }

    @Test func layoutsWithTheSameRectsButOtherStacksAreOtherLayouts() throws {
        // The same one item at [0,0,100,10] in five layouts: the edits each allows differ (the
        // section to name, the estimate and lanes of what is inserted, whether anything can be
        // edited), so none may take another's id and answer with its stacks.
        let first = #"{"sections":[{"id":"s1","reuse":"r","stack":{"items":[{"id":"u1","size":[100,10]}],"estimate":[100,50]}}]}"#
        let second = #"{"sections":[{"id":"s2","reuse":"r","stack":{"items":[{"id":"u1","size":[100,10]}],"estimate":[100,80],"lanes":2,"spacing":0}}]}"#
        let estimated = #"{"sections":[{"id":"s1","reuse":"r","stack":{"items":[{"id":"u1"}],"estimate":[100,10]}}]}"#
        let items = #"{"items":[{"id":"u1","rect":[0,0,100,10],"reuse":"r"}]}"#
        let placed = #"{"sections":[{"id":"p","items":[{"id":"u1","rect":[0,0,100,10],"reuse":"r"}]},{"id":"s","stack":{"items":[],"estimate":[100,50]}}]}"#
        try withService { service in
            let client = try service.connect()
            var ids: [String] = []
            for body in [first, second, estimated, items, placed] {
                let reply = try client.post("/v1/layouts", body)
                #expect(reply.status == 201, "\(body): \(reply.text)")
                ids.append(try #require(reply.json["layout"] as? String))
            }
            #expect(Set(ids).count == 5, "\(ids)")
            // Posted again, each is the layout already stored.
            #expect(try client.post("/v1/layouts", second).status == 200)
            #expect(try client.post("/v1/layouts", second).json["layout"] as? String == ids[1])
            // A session on the second layout edits its own stack, with its own estimate.
            let session = try client.openSession(#"{"layout":"\#(ids[1])","viewport":[200,400]}"#).id
            let plan = try patch(client, session, #"{"insert":[{"at":"end","section":"s2","items":[{"id":"u2"}]}]}"#)
            #expect(plan.status == 200, "\(plan.text)")
            let created = (plan.json["create"] as? [[String: Any]])?.first
            #expect(created?["rect"] as? [Double] == [100, 0, 100, 80])
            _ = try patch(client, session, #"{"insert":[{"at":"end","section":"s1","items":[{"id":"u3"}]}]}"#).problem(422)
            // One on the items layout edits nothing.
            let onItems = try client.openSession(#"{"layout":"\#(ids[3])","viewport":[200,400]}"#).id
            _ = try patch(client, onItems, #"{"resize":[{"id":"u1","size":[1,1]}]}"#).problem(422)
        }
    }

    @Test(.tags(.live)) func aRefusedPatchLineReadsAsThePatchRequestReads() throws {
        // API.md: the line is "the PATCH body": its problem names fields as PATCH's does (400s
        // were `patch.resize: …` in a stream, 422s were not).
        var rng = SplitMix(seed: 5)
        let chat = ChatModel.make(count: 10, lanes: 1, using: &rng)
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(chat.json())
            for body in [
                #"{"resize":5}"#, #"{"insert":[{"at":"end","items":[]}]}"#, #"{"bogus":1}"#, #"{"anchor":"sideways"}"#,
                #"{"seq":1.5}"#, #"{"resize":[{"id":"zz","size":[1,1]}]}"#, #"{"resize":[{"id":"m1"}]}"#,
            ] {
                let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
                let direct = try patch(client, s, body)
                #expect(direct.status == 400 || direct.status == 422, "\(body): \(direct.text)")
                let streamed = try client.send(
                    "POST", "/v1/sessions/\(s)/viewport", body: Array(#"{"patch":\#(body)}"#.utf8), contentType: "application/x-ndjson")
                let line = try #require(try JSONSerialization.jsonObject(with: Data(streamed.text.split(separator: "\n")[0].utf8)) as? [String: Any])
                #expect(line["status"] as? Int == direct.status, "\(body)")
                #expect(line["detail"] as? String == "line 1: " + (direct.json["detail"] as? String ?? ""), "\(body): \(line)")
            }
        }
    }

    @Test(.tags(.live)) func patchesRideAnUpdateStreamAndAWebSocketInOrder() throws {
        var rng = SplitMix(seed: 3)
        let chat = ChatModel.make(count: 60, lanes: 1, using: &rng)
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(chat.json())
            let viaStream = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
            let viaPOST = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600]}"#).id
            let lines = [
                #"{"offset":[0,300]}"#,
                #"{"patch":{"resize":[{"id":"m3","size":[375,200]}],"anchor":"none"}}"#,
                #"{"offset":[0,900],"velocity":[0,800]}"#,
                #"{"patch":{"insert":[{"at":"end","section":"chat","items":[{"id":"new","size":[375,60]}]}],"seq":4}}"#,
                #"{"patch":{"remove":["nope"]}}"#,
                #"{"offset":[0,0]}"#,
            ]
            let reply = try client.send("POST", "/v1/sessions/\(viaStream)/viewport", body: Array(lines.joined(separator: "\n").utf8), contentType: "application/x-ndjson")
            #expect(reply.status == 200)
            let plans = reply.text.split(separator: "\n").map(String.init)
            #expect(plans.count == 5)
            // The same through single requests answers the same bytes.
            for (k, line) in lines.prefix(4).enumerated() {
                let single: Reply
                if line.hasPrefix(#"{"patch":"#) {
                    let body = String(line.dropFirst(#"{"patch":"#.count).dropLast())
                    single = try patch(client, viaPOST, body)
                } else {
                    single = try client.update(viaPOST, line)
                }
                #expect(single.text == plans[k], "line \(k + 1)")
            }
            let problem = try JSONSerialization.jsonObject(with: Data(plans[4].utf8)) as? [String: Any] ?? [:]
            #expect(problem["status"] as? Int == 422 && problem["line"] as? Int == 5)
            #expect(problem["detail"] as? String == #"line 5: remove[0]: "nope" is not an item of the layout"#)
            #expect(try client.state(viaStream).int("edits") == 2)

            // A WebSocket: messages are updates or patches, answered in order.
            let ws = try WebSocketTestClient.connect(port: service.port, path: "/v1/sessions/\(viaStream)/socket")
            defer { ws.disconnect() }
            try ws.send(text: #"{"patch":{"resize":[{"id":"m1","size":[375,10]}],"seq":5}}"#)
            let answer = try JSONSerialization.jsonObject(with: Data(try ws.readText().utf8)) as? [String: Any] ?? [:]
            #expect(answer["seq"] as? Int == 5)
            try ws.send(text: #"{"patch":{"resize":[{"id":"m1","size":[375,10]}]},"offset":[0,1]}"#)
            let bad = try JSONSerialization.jsonObject(with: Data(try ws.readText().utf8)) as? [String: Any] ?? [:]
            #expect(bad["status"] as? Int == 400 && bad["message"] as? Int == 2)
            try ws.send(text: #"{"offset":[0,40]}"#)
            let moved = try JSONSerialization.jsonObject(with: Data(try ws.readText().utf8)) as? [String: Any] ?? [:]
            #expect(moved["seq"] as? Int == 6)
            #expect(try client.state(viaStream).int("edits") == 3)
        }
    }

    @Test func aChatMeasuresItsMessagesAndFollowsTheEnd() throws {
        try withService { service in
            let client = try service.connect()
            let items = (0..<50).map { #"{"id":"m\#($0)"}"# }.joined(separator: ",")
            let layout = try client.postLayout(#"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":[\#(items)],"estimate":[375,80],"spacing":4}}]}"#)
            // 50 × 80 + 49 × 4 = 4196: at the end, 4196 − 600.
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,600],"offset":[0,3596]}"#).id
            let arrived = try patch(client, s, #"{"insert":[{"at":"end","section":"chat","items":[{"id":"m50","size":[375,120]}]}],"anchor":"end"}"#).json
            #expect(arrived.doubles("offset") == [0, 3720])
            #expect(arrived.doubles("contentSize") == [375, 4320])
            // The visible messages measured: sizes change under the viewport, the end stays in view.
            let measured = try patch(client, s, #"{"resize":[{"id":"m47","size":[375,60]},{"id":"m48","size":[375,100]},{"id":"m49","size":[375,40]}],"anchor":"end"}"#).json
            #expect(measured.doubles("offset") == [0, 3680])
            #expect(measured.doubles("contentSize") == [375, 4280])
            #expect(measured.ids("move") == ["m47", "m48", "m49", "m50"])
            #expect(measured.ids("create") + measured.ids("reuse") == ["m43"])
        }
    }

    @Test func anEmptyStackAddsNothingToTheContentSize() throws {
        // Two rows of 50, then an empty stack 7 pt further: the content ends with the rows.
        try withService { service in
            let client = try service.connect()
            let reply = try client.post(
                "/v1/layouts", #"{"sections":[{"id":"a","reuse":"row","list":{"count":2,"size":[375,50]}},{"id":"s","stack":{"items":[],"estimate":[100,50]}}],"spacing":7}"#)
            #expect(reply.json["contentSize"] as? [Double] == [375, 100])
            let layout = try #require(reply.json["layout"] as? String)
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,200]}"#).id
            let added = try patch(client, s, #"{"insert":[{"at":"end","section":"s","items":[{"id":"m"}]}]}"#)
            #expect(added.json.doubles("contentSize") == [375, 157])
            let removed = try patch(client, s, #"{"remove":["m"]}"#)
            #expect(removed.json.doubles("contentSize") == [375, 100])
            let empty = try client.post("/v1/layouts", #"{"sections":[{"id":"s","stack":{"items":[],"estimate":[100,50]}}],"insets":[5,0,3,20]}"#)
            #expect(empty.json["contentSize"] as? [Double] == [20, 3])
        }
    }

    @Test func anchorEndFollowsOnlyWithinOnePointOfTheEnd() throws {
        // Ten rows of 50 in a 200 pt viewport: the largest offset is 300. An arrival of 30 pt
        // moves a viewport within 1 point of 300 (either side) to the new end, 330; one further
        // past the end (a bounce) or before it keeps what it shows, as `visible`.
        try withService { service in
            let client = try service.connect()
            let items = (0..<10).map { #"{"id":"e\#($0)"}"# }.joined(separator: ",")
            let layout = try client.postLayout(#"{"sections":[{"id":"c","stack":{"items":[\#(items)],"estimate":[100,50]}}]}"#)
            for (k, (offset, expected)) in [(300.0, 330.0), (301, 330), (299, 330), (298.5, 298.5), (301.5, 301.5), (350, 350)].enumerated() {
                let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[100,200],"buffer":0,"offset":[0,\#(offset)]}"#).id
                let plan = try patch(client, s, #"{"insert":[{"at":"end","section":"c","items":[{"id":"n\#(k)","size":[100,30]}]}],"anchor":"end"}"#)
                #expect(plan.json.doubles("offset") == [0, expected], "offset \(offset)")
            }
        }
    }
}

@Suite struct SessionLayoutHTTPTests {
    /// Every section kind around two stacks (one a masonry), both axes: after edits, the layout
    /// `GET /v1/sessions/{id}/layout` answers, posted again, has every rect of the session's
    /// version: moving the session (whose viewport covers everything) to it changes nothing.
    @Test(arguments: ["y", "x"])
    func theSessionsLayoutPostedAgainHasTheSameRects(axis: String) throws {
        let (w, h) = axis == "y" ? (375, 80) : (80, 375)
        let layout = #"""
            {"axis":"\#(axis)","insets":[3.5,2,7,1],"spacing":6.25,"sections":[
              {"items":[{"id":"title","rect":[0.5,0,100,30],"reuse":"title","sticky":true},{"id":"sub","rect":[0,-5,40,12]}]},
              {"id":"chat","reuse":"msg","stack":{"items":[{"id":"a"},{"id":"b","size":[\#(w),33.3]},{"id":"c","reuse":"photo"}],"estimate":[\#(w),\#(h)],"spacing":4}},
              {"id":"feed","reuse":"row","list":{"count":3,"size":[\#(w),44],"spacing":1.5}},
              {"id":"sized","reuse":"row","list":{"sizes":[[\#(w),10],[\#(w),20.25]],"spacing":0.1}},
              {"id":"photos","reuse":"photo","grid":{"columns":3,"count":7,"itemSize":[50,50],"spacing":[2,3]}},
              {"id":"wall","stack":{"items":[{"id":"p1","size":[90,100]},{"id":"p2","size":[90,40]},{"id":"p3","size":[90,70]},{"id":"p4"}],"estimate":[90,60],"lanes":3,"spacing":5}},
              {"id":"promo","reuse":"page","pages":{"count":2,"size":[300,120]}},
              {"items":[{"id":"footer","rect":[0,0,375,50]}]}]}
            """#
        try withService { service in
            let client = try service.connect()
            let stored = try client.postLayout(layout)
            let s = try client.openSession(#"{"layout":"\#(stored)","viewport":[100000,100000],"offset":[-100,-100],"buffer":0}"#).id
            let before = try client.get("/v1/sessions/\(s)/layout").text
            // Without edits: the stored layout itself (the same id).
            #expect(try client.postLayout(before) == stored)
            let edits = [
                #"{"resize":[{"id":"a","size":[\#(w),51.7]},{"id":"p1","size":[90,300]}],"anchor":"none"}"#,
                #"{"insert":[{"at":"start","section":"chat","items":[{"id":"z","size":[\#(w),12.5]}]},{"at":"end","section":"wall","items":[{"id":"p5"},{"id":"p6","size":[90,10]}]},{"after":"b","items":[{"id":"b2","reuse":""}]}],"anchor":"none"}"#,
                #"{"remove":["c","p2"],"resize":[{"id":"p3","size":[90,500]}],"anchor":"none"}"#,
            ]
            for (k, edit) in edits.enumerated() {
                #expect(try client.send("PATCH", "/v1/sessions/\(s)/layout", json: edit).status == 200, "edit \(k)")
                let current = try client.get("/v1/sessions/\(s)/layout")
                #expect(current.status == 200)
                let again = try client.postLayout(current.text)
                let plan = try client.send("PUT", "/v1/sessions/\(s)/layout", json: #"{"layout":"\#(again)"}"#).json
                for list in ["recycle", "discard", "reuse", "create", "move"] {
                    #expect(plan.entries(list).isEmpty, "edit \(k): \(list) \(plan.entries(list)) — \(current.text)")
                }
                #expect(plan["contentSize"] == nil)
                // The PUT made the posted layout the session's: edit it further from there.
            }
            // Lanes are named in a masonry, not in a single lane.
            let final = try client.get("/v1/sessions/\(s)/layout").text
            #expect(final.contains(#"{"id":"p1","size":[90,300],"lane":0}"#))
            #expect(!final.contains(#""id":"a","size":[\#(w),51.7],"lane""#))
        }
    }
}
