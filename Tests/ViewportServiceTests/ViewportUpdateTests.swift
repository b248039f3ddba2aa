import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `POST /v1/sessions/{id}/viewport` with single JSON updates: plans, sequence numbers, errors.
@Suite struct ViewportUpdateTests {
    static func point(_ p: [Double]) -> String { "[\(p.map(number).joined(separator: ","))]" }

    /// A random walk of drags, jumps and rotations, every plan and state checked by the model.
    func randomWalk(items: [TestItem], caps: String?, capsModel: (max: Int?, perReuse: [String: Int])?, steps: Int) throws {
        try withService { service in
            let client = try service.connect()
            var generator = TestRandom(seed: 2024)
            let poolField = caps.map { #","pool":\#($0)"# } ?? ""
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,667],"buffer":50\#(poolField)}"#)
            var model = ClientModel(items: items, viewport: [375, 667], buffer: 50, caps: capsModel)
            model.open(opened.json.object("plan"))
            var offset = [0.0, 0.0]
            for step in 0..<steps {
                var viewport: [Double]?
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<6: offset[1] += Double(Int.random(in: -80...120, using: &generator))  // drag
                case 6: offset[0] += Double(Int.random(in: -60...60, using: &generator))
                case 7: offset = [Double(Int.random(in: -100...400, using: &generator)), Double(Int.random(in: -100...6000, using: &generator))]  // jump
                case 8: viewport = Bool.random(using: &generator) ? [667, 375] : [375, 667]  // rotation
                default: break  // no move
                }
                var body = #"{"offset":\#(Self.point(offset)),"phase":"dragging","velocity":[0,-500]"#
                if let viewport { body += #","size":\#(Self.point(viewport))"# }
                if step % 3 == 0 { body += #","seq":\#(model.seq + 1)"# }
                body += "}"
                let reply = try client.update(opened.id, body)
                #expect(reply.status == 200, "\(reply.text)")
                model.apply(reply.json, offset: offset, viewport: viewport)
                if step % 10 == 0 { model.check(state: try client.state(opened.id)) }
            }
            model.check(state: try client.state(opened.id))
        }
    }

    static let mixedGrid: [TestItem] = {
        var items = gridItems(rows: 60, columns: 4, cell: 93.75)
        // Some items never reused, some zero-size, some overlapping.
        for i in stride(from: 0, to: items.count, by: 7) { items[i].reuse = nil }
        items.append(TestItem(id: "header", rect: [0, 0, 375, 0], reuse: "header"))
        items.append(TestItem(id: "overlay", rect: [10, 500, 300, 3000], reuse: "card"))
        return items
    }()

    @Test func plansOfARandomWalkFollowTheRulesWithoutCaps() throws {
        try randomWalk(items: Self.mixedGrid, caps: nil, capsModel: nil, steps: 150)
    }

    @Test func plansOfARandomWalkRespectPoolCaps() throws {
        try randomWalk(
            items: Self.mixedGrid, caps: #"{"max":3,"perReuse":{"banner":0}}"#, capsModel: (3, ["banner": 0]), steps: 150)
    }

    @Test func scrollingBackGivesTheSameItemsTheirOwnViewsWithoutRebind() throws {
        try withService { service in
            let client = try service.connect()
            // Items 0 … 2 have identifiers of their own: nothing else takes their pooled views.
            var items = listItems(40, height: 100, reuses: ["z"])
            for i in 0..<3 { items[i].reuse = ["a", "b", "c"][i] }
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,300],"buffer":0}"#)
            let created = Dictionary(uniqueKeysWithValues: opened.json.object("plan").entries("create").map { ($0["id"] as! String, $0.int("view")!) })
            // Far away and back: every item back in view gets its own view again, rebind false.
            _ = try client.update(opened.id, #"{"offset":[0,2000]}"#)
            let back = try client.update(opened.id, #"{"offset":[0,0]}"#).json
            #expect(back.ids("reuse") == ["item-0", "item-1", "item-2"])
            for entry in back.entries("reuse") {
                #expect(entry["rebind"] as? Bool == false)
                #expect(entry.int("view") == created[entry["id"] as! String])
            }
        }
    }

    @Test func aViewRecycledInAPlanIsReusedInTheSamePlan() throws {
        try withService { service in
            let client = try service.connect()
            let items = listItems(10, height: 100)
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,100],"buffer":0}"#)
            let view = opened.json.object("plan").entries("create").first!.int("view")!
            let plan = try client.update(opened.id, #"{"offset":[0,100]}"#).json
            #expect(plan.entries("recycle").map { $0.int("view") } == [view])
            #expect(plan.ids("reuse") == ["item-1"])
            #expect(plan.entries("reuse").first?.int("view") == view)
            #expect(plan.entries("reuse").first?["rebind"] as? Bool == true)
            #expect(plan.entries("reuse").first?.doubles("rect") == [0, 100, 375, 100])
            #expect(plan["create"] == nil)
        }
    }

    @Test func itemsWithoutReuseIdentifierAreCreatedAndDiscarded() throws {
        try withService { service in
            let client = try service.connect()
            let items = listItems(10, height: 100, reuses: [nil])
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,100],"buffer":0}"#)
            let first = opened.json.object("plan").entries("create").first!.int("view")!
            let plan = try client.update(opened.id, #"{"offset":[0,100]}"#).json
            #expect(plan.ids("discard") == ["item-0"])
            #expect(plan.entries("discard").first?.int("view") == first)
            #expect(plan.ids("create") == ["item-1"])
            #expect(plan.entries("create").first?.int("view") != first)
            #expect(plan.entries("create").first?["reuse"] == nil)
            // Coming back creates again: a discarded handle is never used again.
            let back = try client.update(opened.id, #"{"offset":[0,0]}"#).json
            #expect(back.ids("create") == ["item-0"])
            #expect(![first, plan.entries("create").first!.int("view")!].contains(back.entries("create").first!.int("view")!))
        }
    }

    @Test func noChangeAnswersAnEmptyPlanWithTheNextSeq() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,300]}"#)
            let plan = try client.update(opened.id, #"{"offset":[0,1]}"#).json
            #expect(plan.int("seq") == 1)
            #expect(plan.doubles("offset") == [0, 1])
            for list in ["recycle", "discard", "reuse", "create"] {
                #expect(plan.entries(list).isEmpty)
            }
        }
    }

    @Test func everyPhaseAndVelocityIsAccepted() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#)
            for (i, phase) in ["drag-begin", "dragging", "drag-end", "decelerating", "idle"].enumerated() {
                let reply = try client.update(opened.id, #"{"offset":[0,\#(i * 10)],"phase":"\#(phase)","velocity":[0,-1500.5],"size":[375,667]}"#)
                #expect(reply.status == 200, "\(phase): \(reply.text)")
                #expect(reply.json.int("seq") == i + 1)
            }
        }
    }

    @Test func seqRetryAnswersTheIdenticalPlanAndAppliesNothing() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100, reuses: ["a", "b"]))),"viewport":[375,667]}"#)
            // Retrying the opening plan answers it again.
            let retry0 = try client.update(opened.id, #"{"offset":[0,999],"seq":0}"#)
            #expect(retry0.status == 200)
            #expect(NSDictionary(dictionary: retry0.json).isEqual(to: opened.json.object("plan")))
            let first = try client.update(opened.id, #"{"offset":[0,450],"seq":1}"#)
            #expect(first.status == 200)
            let before = try client.state(opened.id)
            // Same seq with another offset: the same bytes, nothing applied.
            let retry = try client.update(opened.id, #"{"offset":[0,3000],"size":[10,10],"seq":1}"#)
            #expect(retry.status == 200)
            #expect(retry.body == first.body)
            let after = try client.state(opened.id)
            #expect(NSDictionary(dictionary: after).isEqual(to: before))
            #expect(after.int("seq") == 1)
            #expect(after.object("stats").int("updates") == 1)
            // The next one applies.
            let second = try client.update(opened.id, #"{"offset":[0,900],"seq":2}"#)
            #expect(second.json.int("seq") == 2)
        }
    }

    @Test func seqThatDoesNotFollowAnswers409WithTheCurrentSeqAndChangesNothing() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#)
            _ = try client.update(opened.id, #"{"offset":[0,100]}"#)
            _ = try client.update(opened.id, #"{"offset":[0,200]}"#)
            let before = try client.state(opened.id)
            for seq in [0, 1, 4, 1000, Int64.max] as [Int64] {
                let reply = try client.update(opened.id, #"{"offset":[0,5000],"seq":\#(seq)}"#)
                let p = reply.problem(409)
                #expect(p["seq"] as? Int == 2, "\(seq)")
                #expect(p.detail == "seq \(seq) does not follow the session's last sequence number 2: send 3, or 2 to retry", "\(p)")
            }
            // A number below 0 is neither the last nor the next either (API.md: "anything else").
            for seq in ["-1", "-2", "-1e0", "\(Int64.min)"] {
                let p = try client.update(opened.id, #"{"offset":[0,5000],"seq":\#(seq)}"#).problem(409)
                #expect(p["seq"] as? Int == 2, "\(seq)")
                #expect(p["resync"] == nil)
                #expect(p.detail == "seq below 0 does not follow the session's last sequence number 2: send 3, or 2 to retry", "\(p)")
            }
            let after = try client.state(opened.id)
            #expect(NSDictionary(dictionary: after).isEqual(to: before))
            #expect(try client.update(opened.id, #"{"offset":[0,300],"seq":3}"#).status == 200)
        }
    }

    @Test func invalidUpdatesAnswer400Or422AndChangeNothing() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#)
            _ = try client.update(opened.id, #"{"offset":[0,100]}"#)
            let before = try client.state(opened.id)
            let cases: [(String, Int, String?)] = [
                (#"{}"#, 400, "offset"),
                (#"{"size":[375,667]}"#, 400, "offset"),
                (#"{"offset":[0,1],"velocty":[0,1]}"#, 400, "velocty"),
                (#"{"offset":[0,1],"phase":"flying"}"#, 400, "phase"),
                (#"{"offset":[0,1],"phase":7}"#, 400, "phase"),
                (#"{"offset":[0]}"#, 400, nil),
                (#"{"offset":[0,1,2]}"#, 400, nil),
                (#"{"offset":"0,1"}"#, 400, nil),
                (#"{"offset":[0,1e999]}"#, 400, nil),
                (#"{"offset":[0,-1e999]}"#, 400, nil),
                (#"{"offset":[0,1],"velocity":[1e999,0]}"#, 400, nil),
                (#"{"offset":[0,1],"seq":1.5}"#, 400, "seq"),
                (#"{"offset":[0,1],"seq":"2"}"#, 400, "seq"),
                (#"{"offset":[0,1],"seq":99999999999999999999999}"#, 400, "seq"),
                (#"{"offset":[0,NaN]}"#, 400, nil),
                (#"{"offset":[0,1]} {}"#, 400, nil),
                (#"{"offset":[0,1],"offset":[0,2]}"#, 400, "offset"),
                (#"[]"#, 400, nil),
                (#""#, 400, nil),
                (#"{"offset":[0,1],"size":[-1,100]}"#, 422, "size"),
                (#"{"offset":[0,1],"size":[375,-0.5]}"#, 422, "size"),
            ]
            for (body, status, field) in cases {
                let reply = try client.update(opened.id, body)
                let p = reply.problem(status)
                if let field { #expect(names(p, field), "\(body): \(p)") }
            }
            let after = try client.state(opened.id)
            #expect(NSDictionary(dictionary: after).isEqual(to: before))
        }
    }

    @Test func anInvalidUpdateWithAWrongSeqIs422Not409() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,667]}"#)
            _ = try client.update(opened.id, #"{"offset":[0,1],"size":[-1,1],"seq":7}"#).problem(422)
            // And a malformed one with a wrong seq is 400.
            _ = try client.update(opened.id, #"{"offset":[0,1],"phase":"flying","seq":7}"#).problem(400)
            // A retry (seq equal to the last) of an invalid update is still 422: nothing is answered from an invalid body.
            _ = try client.update(opened.id, #"{"offset":[0,1],"size":[-1,1],"seq":0}"#).problem(422)
            #expect(try client.state(opened.id).int("seq") == 0)
        }
    }

    @Test func unknownSessionAnswers404() throws {
        try withService { service in
            let client = try service.connect()
            _ = try client.update("0123456789abcdef0123456789abcdef", #"{"offset":[0,1]}"#).problem(404)
            _ = try client.get("/v1/sessions/0123456789abcdef0123456789abcdef").problem(404)
            _ = try client.delete("/v1/sessions/x").problem(404)
        }
    }
}
