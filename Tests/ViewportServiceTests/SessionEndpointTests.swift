import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `POST /v1/sessions`, `GET /v1/sessions/{id}`, `DELETE /v1/sessions/{id}`.
@Suite struct SessionEndpointTests {
    @Test func openingBySessionIdAnswers201WithTheOpeningPlan() throws {
        try withService { service in
            let client = try service.connect()
            let items = gridItems(rows: 30, columns: 4, cell: 93.75)
            let layout = try client.postLayout(layoutJSON(items))
            let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,667]}"#)
            #expect(reply.status == 201)
            #expect(reply.header("Content-Type") == "application/json")
            let json = reply.json
            let session = try #require(json["session"] as? String)
            // At least 128 random bits: 32 hex digits or more.
            #expect(session.count >= 32)
            #expect(json["layout"] as? String == layout)
            #expect(json.doubles("contentSize") == [375, 2812.5])
            let plan = json.object("plan")
            #expect(plan.int("seq") == 0)
            #expect(plan.doubles("offset") == [0, 0])
            // Defaults: offset [0,0], buffer 20.
            let expected = materialized(items, offset: [0, 0], viewport: [375, 667], buffer: 20)
            #expect(plan.ids("create") == expected)
            #expect(plan.entries("reuse").isEmpty && plan.entries("recycle").isEmpty && plan.entries("discard").isEmpty)
            let views = plan.entries("create").compactMap { $0.int("view") }
            #expect(views.count == expected.count)
            #expect(Set(views).count == views.count)
            #expect(views.allSatisfy { $0 > 0 })
            let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
            for entry in plan.entries("create") {
                let item = try #require(byID[entry["id"] as? String ?? ""])
                #expect(entry.doubles("rect") == item.rect)
                #expect(entry["reuse"] as? String == item.reuse)
            }
        }
    }

    @Test func theOpeningPlanMatchesBruteForceForManyOffsetsBuffersAndViewports() throws {
        try withService { service in
            let client = try service.connect()
            var generator = TestRandom(seed: 2024)
            // Irregular items, including zero-size ones and ones exactly touching edges.
            var items: [TestItem] = []
            for i in 0..<300 {
                let x = Double(Int.random(in: 0...40, using: &generator) * 10)
                let y = Double(Int.random(in: 0...300, using: &generator) * 10)
                let w = Double(Int.random(in: 0...12, using: &generator) * 10)
                let h = Double(Int.random(in: 0...12, using: &generator) * 10)
                items.append(TestItem(id: "i\(i)", rect: [x, y, w, h], reuse: ["a", "b", nil][i % 3]))
            }
            let layout = try client.postLayout(layoutJSON(items))
            for _ in 0..<40 {
                let offset = [Double(Int.random(in: -20...40, using: &generator) * 10), Double(Int.random(in: -20...300, using: &generator) * 10)]
                let viewport = [Double(Int.random(in: 0...40, using: &generator) * 10), Double(Int.random(in: 0...80, using: &generator) * 10)]
                let buffer = Double(Int.random(in: 0...5, using: &generator) * 10)
                let body = #"{"layout":"\#(layout)","viewport":[\#(viewport.map(number).joined(separator: ","))],"offset":[\#(offset.map(number).joined(separator: ","))],"buffer":\#(number(buffer))}"#
                let opened = try client.openSession(body)
                let plan = opened.json.object("plan")
                #expect(plan.ids("create") == materialized(items, offset: offset, viewport: viewport, buffer: buffer), "\(body)")
                #expect(plan.doubles("offset") == offset)
                let state = try client.state(opened.id)
                #expect(state.ids("visible") == plan.ids("create"))
                #expect(try client.delete("/v1/sessions/\(opened.id)").status == 204)
            }
        }
    }

    @Test func edgeTouchingItemsAreNotMaterializedButZeroSizeItemsInsideAre() throws {
        try withService { service in
            let client = try service.connect()
            let items = [
                TestItem(id: "above", rect: [0, -50, 100, 50]),  // maxY == region.minY: touches
                TestItem(id: "inside", rect: [10, 10, 0, 0]),  // zero size, strictly inside
                TestItem(id: "below", rect: [0, 100, 100, 10]),  // minY == region.maxY: touches
                TestItem(id: "right", rect: [100, 0, 10, 10]),  // minX == region.maxX
                TestItem(id: "overlap", rect: [99.5, 99.5, 10, 10]),
                TestItem(id: "onEdge", rect: [0, 100, 0, 0]),  // zero size on the edge
            ]
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items, contentSize: [200, 200])),"viewport":[100,100],"buffer":0}"#)
            #expect(opened.json.object("plan").ids("create") == ["inside", "overlap"])
        }
    }

    @Test func openingWithAnInlineLayoutStoresItAndAnswersItsId() throws {
        try withService { service in
            let client = try service.connect()
            let items = listItems(50, height: 44, reuses: ["cell", nil])
            let inline = layoutJSON(items)
            let opened = try client.openSession(#"{"layout":\#(inline),"viewport":[320,480],"offset":[0,100],"buffer":0}"#)
            let layout = try #require(opened.json["layout"] as? String)
            let plan = opened.json.object("plan")
            #expect(plan.ids("create") == materialized(items, offset: [0, 100], viewport: [320, 480], buffer: 0))
            #expect(plan.doubles("offset") == [0, 100])
            // Items without a reuse identifier carry no "reuse".
            for entry in plan.entries("create") {
                let index = Int((entry["id"] as! String).dropFirst(5))!
                #expect(entry["reuse"] as? String == (index % 2 == 0 ? "cell" : nil))
            }
            let stored = try client.get("/v1/layouts/\(layout)")
            #expect(stored.status == 200)
            #expect(stored.json.int("sessions") == 1)
            #expect(try client.post("/v1/layouts", inline).status == 200)
        }
    }

    @Test func everyOptionalSessionFieldIsAccepted() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(20)))
            let opened = try client.openSession(
                #"{"layout":"\#(layout)","viewport":[375,667],"offset":[0,150],"buffer":0,"insets":[10,0,10,0],"pool":{"max":5,"perReuse":{"row":1,"banner":2}}}"#)
            #expect(opened.json.object("plan").ids("create") == materialized(listItems(20), offset: [0, 150], viewport: [375, 667], buffer: 0))
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{"max":null}}"#)
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{}}"#)
        }
    }

    @Test func getSessionAnswersTheWholeState() throws {
        try withService { service in
            let client = try service.connect()
            let items = listItems(100, height: 100, reuses: ["a", "b"])
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,300],"buffer":0}"#)
            let reply = try client.get("/v1/sessions/\(opened.id)")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/json")
            var state = reply.json
            #expect(state["session"] as? String == opened.id)
            #expect(state["layout"] as? String == opened.json["layout"] as? String)
            #expect(state.int("seq") == 0)
            #expect(state.doubles("offset") == [0, 0])
            #expect(state.doubles("viewport") == [375, 300])
            #expect(state.ids("visible") == ["item-0", "item-1", "item-2"])
            #expect(state.object("pool").isEmpty)
            var stats = state.object("stats")
            #expect(stats.int("updates") == 0)
            #expect(stats.int("created") == 3)
            #expect(stats.int("reused") == 0)
            #expect(stats.int("peakViews") == 3)
            let createdViews = Dictionary(uniqueKeysWithValues: opened.json.object("plan").entries("create").map { ($0["id"] as! String, $0.int("view")!) })
            for entry in state.entries("visible") {
                #expect(entry.int("view") == createdViews[entry["id"] as! String])
            }

            // Scroll by 250 (region 250…550): items 0, 1 (a, b) leave; 3, 4, 5 (b, a, b) enter: 3 and 4
            // reuse the views of 1 and 0, 5 is created.
            let plan = try client.update(opened.id, #"{"offset":[0,250]}"#).json
            #expect(plan.ids("recycle") == ["item-0", "item-1"])
            #expect(plan.ids("reuse") == ["item-3", "item-4"])
            #expect(plan.entries("reuse").map { $0.int("view") } == [createdViews["item-1"], createdViews["item-0"]])
            #expect(plan.ids("create") == ["item-5"])
            // Jump far and grow: items 2 … 5 (a, b, a, b) are pooled; 50 … 53 (a, b, a, b) enter and reuse them.
            let far = try client.update(opened.id, #"{"offset":[0,5000],"size":[375,350]}"#).json
            #expect(far.ids("recycle") == ["item-2", "item-3", "item-4", "item-5"])
            #expect(far.ids("reuse") == ["item-50", "item-51", "item-52", "item-53"])
            #expect(far["create"] == nil)
            state = try client.state(opened.id)
            #expect(state.int("seq") == 2)
            #expect(state.doubles("offset") == [0, 5000])
            #expect(state.doubles("viewport") == [375, 350])
            #expect(state.ids("visible") == materialized(items, offset: [0, 5000], viewport: [375, 350], buffer: 0))
            stats = state.object("stats")
            #expect(stats.int("updates") == 2)
            #expect(stats.int("recycled") == 6)
            #expect(stats.int("created") == 4)
            #expect(stats.int("reused") == 6)
            #expect(stats.int("discarded") == 0)
            #expect(stats.int("peakViews") == 4)
            #expect(stats.int("peakViews")! >= state.entries("visible").count)
        }
    }

    @Test func poolListsViewsOldestFirst() throws {
        try withService { service in
            let client = try service.connect()
            // One identifier; 4 rows visible; scroll to an empty area so all 4 are pooled.
            var items = listItems(4, height: 100)
            items.append(TestItem(id: "far", rect: [0, 10_000, 10, 10], reuse: "other"))
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,400],"buffer":0}"#)
            let views = opened.json.object("plan").entries("create").map { $0.int("view")! }
            #expect(views.count == 4)
            // Scroll down step by step so the rows leave one at a time: item-0 first.
            for step in 1...4 {
                let plan = try client.update(opened.id, #"{"offset":[0,\#(step * 100)]}"#).json
                #expect(plan.ids("recycle") == ["item-\(step - 1)"])
            }
            let state = try client.state(opened.id)
            #expect(state.ids("visible").isEmpty)
            let pool = state.object("pool")
            #expect(pool["row"] as? [Int] == views)
            #expect(pool["other"] == nil)
        }
    }

    @Test func deleteAnswers204ThenTheSessionIsGone() throws {
        try withService { service in
            let client = try service.connect()
            let opened = try client.openSession(#"{"layout":\#(layoutJSON(listItems(5))),"viewport":[375,667]}"#)
            let deleted = try client.delete("/v1/sessions/\(opened.id)")
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            _ = try client.get("/v1/sessions/\(opened.id)").problem(404)
            _ = try client.update(opened.id, #"{"offset":[0,1]}"#).problem(404)
            _ = try client.delete("/v1/sessions/\(opened.id)").problem(404)
        }
    }

    @Test func sessionIdsAreUniqueAndUnguessable() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(3)))
            var ids: Set<String> = []
            for _ in 0..<50 {
                let id = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
                #expect(id.count >= 32)
                ids.insert(id)
            }
            #expect(ids.count == 50)
        }
    }

    @Test func sessionBodyErrorsAnswerTheirStatus() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(5)))
            func open(_ body: String) throws -> Reply { try client.post("/v1/sessions", body) }
            // 400
            var p = try open(#"{"viewport":[375,667]}"#).problem(400)
            #expect(names(p, "layout"), "\(p)")
            p = try open(#"{"layout":"\#(layout)"}"#).problem(400)
            #expect(names(p, "viewport"), "\(p)")
            p = try open(#"{"layout":"\#(layout)","viewport":[375,667],"bufer":3}"#).problem(400)
            #expect(names(p, "bufer"), "\(p)")
            p = try open(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{"maxx":3}}"#).problem(400)
            #expect(names(p, "maxx") && p.detail.hasPrefix("pool:"), "\(p)")
            _ = try open(#"{"layout":"\#(layout)","viewport":[375]}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667,1]}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":"big"}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667],"insets":[0,0,0]}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667],"buffer":"20"}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667],"offset":[0,1e999]}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{"max":1.5}}"#).problem(400)
            _ = try open(#"{"layout":12,"viewport":[375,667]}"#).problem(400)
            _ = try open(#"{"layout":"\#(layout)","viewport":[375,667]"#).problem(400)
            // 422
            p = try open(#"{"layout":"\#(layout)","viewport":[-1,667]}"#).problem(422)
            #expect(names(p, "viewport"), "\(p)")
            p = try open(#"{"layout":"\#(layout)","viewport":[375,667],"buffer":-1}"#).problem(422)
            #expect(names(p, "buffer"), "\(p)")
            p = try open(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{"max":-1}}"#).problem(422)
            #expect(names(p, "pool.max"), "\(p)")
            p = try open(#"{"layout":"\#(layout)","viewport":[375,667],"pool":{"perReuse":{"row":-2}}}"#).problem(422)
            #expect(names(p, "pool.perReuse.row"), "\(p)")
            p = try open(#"{"layout":"deadbeef","viewport":[375,667]}"#).problem(422)
            #expect(names(p, "layout", value: "deadbeef"), "\(p)")
            _ = try open(#"{"layout":{"items":[{"id":"a","rect":[0,0,1,1]},{"id":"a","rect":[0,0,1,1]}]},"viewport":[375,667]}"#).problem(422)
            // None of that opened a session or retained the layout.
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 0)
        }
    }

    @Test func anInvalidInlineLayoutFollowedByAMalformedSessionFieldIs400() throws {
        // Precedence: 400 before 422, whatever the order of the fields.
        try withService { service in
            let client = try service.connect()
            let bad = #"{"items":[{"id":"a","rect":[0,0,-1,1]}]}"#
            _ = try client.post("/v1/sessions", #"{"layout":\#(bad),"viewport":[375,667],"typo":1}"#).problem(400)
            _ = try client.post("/v1/sessions", #"{"layout":\#(bad),"viewport":"x"}"#).problem(400)
            _ = try client.post("/v1/sessions", #"{"layout":\#(bad),"viewport":[375,667],"buffer":-1} x"#).problem(400)
        }
    }

    @Test func sessionCapacityAnswers429AndFreesOnDelete() throws {
        try withService({ $0.sessions.max = 3 }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(5)))
            var ids: [String] = []
            for _ in 0..<3 { ids.append(try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id) }
            let p = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#).problem(429)
            #expect(p.detail.contains("sessions.max"), "\(p)")
            // The refused session did not retain the layout.
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 3)
            #expect(try client.delete("/v1/sessions/\(ids[0])").status == 204)
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            // 422 comes before 429: an invalid session when full is 422.
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1],"buffer":-5}"#).problem(422)
            _ = try client.post("/v1/sessions", #"{"layout":"nope","viewport":[1,1]}"#).problem(422)
        }
    }
}
