import Foundation
import Testing
import ViewportTestSupport
import ViewportService

/// docs/api.md "Viewability, direction-aware buffers, time" over HTTP: random traces sent as NDJSON
/// streams against `ViewabilityModel` (written from docs/api.md's text), and every new field's errors.
@Suite struct ViewabilityHTTPTests {
    /// Rows of varying heights, a grid below them, and zero-size items (points and lines) among them.
    static func items(using g: inout SplitMix) -> [TestItem] {
        var items: [TestItem] = []
        var y = 0.0
        for i in 0..<120 {
            let h = Double(Int.random(in: 20...160, using: &g))
            items.append(TestItem(id: "row-\(i)", rect: [0, y, 375, h], reuse: "row"))
            y += h + Double(Int.random(in: 0...6, using: &g))
        }
        for i in 0..<90 {
            items.append(TestItem(id: "cell-\(i)", rect: [Double(i % 3) * 125, y + Double(i / 3) * 125, 120, 120], reuse: "cell"))
        }
        for k in 0..<20 {
            let (w, h) = [(0.0, 0.0), (0, 40), (60, 0)][k % 3]
            let item = TestItem(id: "zero-\(k)", rect: [Double(Int.random(in: 0...375, using: &g)), Double(Int.random(in: 0...Int(y), using: &g)), w, h], reuse: nil)
            items.insert(item, at: Int.random(in: 0...items.count, using: &g))
        }
        return items
    }

    /// The number after `"name":` in a JSON text, parsed by Swift (exact).
    static func rawNumber(_ name: String, in text: String) -> Double? {
        guard let range = text.range(of: "\"\(name)\":") else { return nil }
        return Double(String(text[range.upperBound...].prefix { "-+.eE0123456789".contains($0) }))
    }

    static func entries(_ plan: [String: Any], _ key: String) -> [String] {
        plan.entries(key).map { "\($0["id"] as? String ?? "?"):\($0.int("times") ?? -1)" }
    }

    @Test(arguments: 0..<9)
    func randomTracesMatchTheModel(seed: Int) throws {
        print("ViewabilityHTTPTests.randomTracesMatchTheModel seed \(seed)")
        try withService { service in
            let client = try service.connect()
            var g = SplitMix(seed: UInt64(seed) &+ 4242)
            let items = Self.items(using: &g)
            let ids = items.map(\.id)
            let layout = try client.postLayout(layoutJSON(items))
            let threshold = [0.0, 0.5, 1][seed % 3]
            let minTime: Double? = [nil, 0, 0.75, 2][seed % 4]
            let uniform = seed % 5 == 4
            let ahead = Double([0, 60, 600][Int.random(in: 0..<3, using: &g)])
            let behind = uniform ? ahead : Double([0, 40, 200][Int.random(in: 0..<3, using: &g)])
            var viewport = [375.0, Double(Int.random(in: 200...700, using: &g))]
            var offset = [0.0, Double(Int.random(in: 0...3000, using: &g))]
            let time: Double? = seed % 2 == 0 ? Double(Int.random(in: 0...1000, using: &g)) / 8 : nil
            let context = "seed \(seed): threshold \(threshold) minTime \(String(describing: minTime)) ahead \(ahead) behind \(behind)"

            var exposure = minTime.map { #"{"threshold":\#(number(threshold)),"minTime":\#(number($0))}"# } ?? #"{"threshold":\#(number(threshold))}"#
            if threshold == 0 && minTime == nil && seed % 2 == 0 { exposure = "true" }
            let buffer = uniform ? number(ahead) : #"{"ahead":\#(number(ahead)),"behind":\#(number(behind))}"#
            var body = #"{"layout":"\#(layout)","viewport":[\#(number(viewport[0])),\#(number(viewport[1]))],"offset":[0,\#(number(offset[1]))],"buffer":\#(buffer),"exposure":\#(exposure)"#
            if let time { body += #","time":\#(number(time))"# }
            let (s, opened) = try client.openSession(body + "}")

            var model = ViewabilityModel(
                rects: items.map(\.rect), ahead: ahead, behind: behind, threshold: threshold, minTime: minTime, offset: offset, viewport: viewport)
            let first = model.open(time: time)
            let plan0 = opened.object("plan")
            #expect(plan0.ids("create") == first.materialized.map { ids[$0] }, "\(context) opening")
            #expect(Self.entries(plan0, "enter") == first.enter.map { "\(ids[$0[0]]):\($0[1])" }, "\(context) opening")
            #expect(Self.entries(plan0, "viewed") == first.viewed.map { "\(ids[$0[0]]):\($0[1])" }, "\(context) opening")

            var lines: [String] = []
            var expected: [ViewabilityModel.Step] = []
            var before: [[Int]] = []
            var lastTime = time
            for step in 1...400 {
                var size: [Double]? = nil
                switch Int.random(in: 0..<100, using: &g) {
                case 0..<60: offset[1] += Double(Int.random(in: -40...40, using: &g))
                case 60..<68: offset[0] += Double(Int.random(in: -30...30, using: &g))
                case 68..<78: break
                case 78..<84: size = [375, Double(Int.random(in: 200...700, using: &g))]
                default: offset[1] = Double(Int.random(in: -200...9000, using: &g))
                }
                if let size { viewport = size }
                var line = #"{"offset":[\#(number(offset[0])),\#(number(offset[1]))],"seq":\#(step)"#
                if let size { line += #","size":[\#(number(size[0])),\#(number(size[1]))]"# }
                var velocity: [Double]? = nil
                if Int.random(in: 0..<2, using: &g) == 0 {
                    velocity = [0, Double(Int.random(in: -4...4, using: &g) * 600)]
                    line += #","velocity":[0,\#(number(velocity?[1] ?? 0))],"phase":"dragging""#
                }
                var t: Double? = nil
                if Int.random(in: 0..<4, using: &g) != 0 {
                    t = (lastTime ?? 0) + [0, 0.016, 0.1, 0.25, 0.5, 1, 3][Int.random(in: 0..<7, using: &g)]
                    lastTime = t
                    line += #","time":\#(number(t ?? 0))"#
                }
                lines.append(line + "}")
                before.append(model.materialized)
                expected.append(model.update(offset: offset, viewport: size, velocity: velocity, time: t))
            }
            let reply = try client.send("POST", "/v1/sessions/\(s)/viewport", body: Array(lines.joined(separator: "\n").utf8), contentType: "application/x-ndjson")
            #expect(reply.status == 200)
            let plans = reply.lines
            try #require(plans.count == lines.count, "\(context): \(reply.text.suffix(300))")
            for (k, plan) in plans.enumerated() {
                let step = expected[k]
                let was = Set(before[k])
                let now = Set(step.materialized)
                let where_ = "\(context) line \(k + 1)"
                #expect((plan.ids("create") + plan.ids("reuse")).sortedByLayout(ids) == step.materialized.filter { !was.contains($0) }.map { ids[$0] }.sortedByLayout(ids), "\(where_)")
                #expect((plan.ids("recycle") + plan.ids("discard")).sortedByLayout(ids) == before[k].filter { !now.contains($0) }.map { ids[$0] }, "\(where_)")
                #expect(Self.entries(plan, "enter") == step.enter.map { "\(ids[$0[0]]):\($0[1])" }, "\(where_)")
                #expect(plan.names("leave") == step.leave.map { ids[$0] }, "\(where_)")
                #expect(Self.entries(plan, "viewed") == step.viewed.map { "\(ids[$0[0]]):\($0[1])" }, "\(where_)")
            }
            let state = try client.state(s)
            #expect(state.ids("visible") == model.materialized.map { ids[$0] }, "\(context)")
            #expect(state.names("onScreen") == model.onScreen.sorted().map { ids[$0] }, "\(context)")
            // Read from the text: Foundation's parser rounds some 17-digit numbers.
            #expect(Self.rawNumber("time", in: try client.get("/v1/sessions/\(s)").text) == lastTime, "\(context)")
        }
    }

    @Test func exposureTrueAndAThresholdOfZeroAnswerTheSameBytes() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(200, height: 50)))
            var g = SplitMix(seed: 99)
            var y = 0
            let lines = (1...300).map { k in
                y = max(-100, y + Int.random(in: -120...160, using: &g))
                return #"{"offset":[0,\#(y)],"seq":\#(k)}"#
            }.joined(separator: "\n")
            var answers: [String] = []
            for exposure in ["true", #"{"threshold":0}"#, "{}"] {
                let opened = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,500],"exposure":\#(exposure)}"#)
                let s = try #require(opened.json["session"] as? String)
                let reply = try client.send("POST", "/v1/sessions/\(s)/viewport", body: Array(lines.utf8), contentType: "application/x-ndjson")
                // The opening answer without its session id, then the stream's bytes.
                answers.append(opened.text.replacingOccurrences(of: s, with: "") + "\n" + reply.text)
            }
            #expect(answers[0] == answers[1] && answers[1] == answers[2])
            #expect(answers[0].contains(#""enter""#) && answers[0].contains(#""leave""#) && !answers[0].contains("viewed"))
        }
    }

    @Test func viewedAndTimeOverHTTP() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100)))
            let (s, opened) = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"buffer":0,"exposure":{"threshold":0.5,"minTime":1},"time":100}"#)
            #expect(Self.entries(opened.object("plan"), "enter") == (0...4).map { "item-\($0):1" })
            #expect(try client.state(s)["time"] as? Int == 100)
            var plan = try client.update(s, #"{"offset":[0,60],"time":100.5}"#).json
            // Row 5 shows 60 % of itself: on; row 0 40 %: off.
            #expect(Self.entries(plan, "enter") == ["item-5:1"] && plan.names("leave") == ["item-0"] && plan["viewed"] == nil)
            plan = try client.update(s, #"{"offset":[0,60],"time":101}"#).json
            #expect(Self.entries(plan, "viewed") == (1...4).map { "item-\($0):1" })
            // An update without time views nothing; the next one with time does.
            plan = try client.update(s, #"{"offset":[0,60]}"#).json
            #expect(plan["viewed"] == nil)
            plan = try client.update(s, #"{"offset":[0,60],"time":101.5}"#).json
            #expect(Self.entries(plan, "viewed") == ["item-5:1"])
            let state = try client.state(s)
            #expect(state.names("onScreen") == (1...5).map { "item-\($0)" })
            #expect(state.doubles("offset") == [0, 60] && (state["time"] as? NSNumber)?.doubleValue == 101.5)
        }
    }

    @Test func aClockThatGoesBackIs422NamingTimeAndChangesNothing() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100)))
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"exposure":{"minTime":1},"time":10}"#).id
            _ = try client.update(s, #"{"offset":[0,100],"time":12}"#)
            let seq = try client.state(s).int("seq")
            let problem = try client.update(s, #"{"offset":[0,900],"time":11.5}"#).problem(422)
            #expect((problem["detail"] as? String ?? "").contains("time"))
            // A retry with the same seq and a lower time is refused too (422 comes before 409).
            _ = try client.update(s, #"{"offset":[0,100],"time":1,"seq":1}"#).problem(422)
            let state = try client.state(s)
            #expect(state.int("seq") == seq && state.doubles("offset") == [0, 100] && state["time"] as? Int == 12)
            // In a stream: the bad line answers its problem and stops; the lines before stay applied.
            let reply = try client.send(
                "POST", "/v1/sessions/\(s)/viewport",
                body: Array(#"{"offset":[0,200],"time":12}"#.utf8) + [10] + Array(#"{"offset":[0,300],"time":3}"#.utf8) + [10]
                    + Array(#"{"offset":[0,400],"time":20}"#.utf8),
                contentType: "application/x-ndjson")
            let lines = reply.lines
            #expect(lines.count == 2 && lines.last?.int("line") == 2 && lines.last?.int("status") == 422)
            #expect(try client.state(s).doubles("offset") == [0, 200])
            // A time that is not a number is a 400.
            _ = try client.update(s, #"{"offset":[0,0],"time":"soon"}"#).problem(400)
        }
    }

    @Test func invalidNewFieldsAreRefusedNamingTheField() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100)))
            let invalid: [(String, String)] = [
                (#""exposure":{"threshold":1.5}"#, "exposure.threshold"),
                (#""exposure":{"threshold":-0.5}"#, "exposure.threshold"),
                (#""exposure":{"minTime":-1}"#, "exposure.minTime"),
                (#""buffer":{"ahead":-1,"behind":0}"#, "buffer.ahead"),
                (#""buffer":{"ahead":1,"behind":-20}"#, "buffer.behind"),
                (#""buffer":-3"#, "buffer"),
                (#""scrollTo":{"id":"item-100"}"#, "scrollTo.id"),
                (#""scrollTo":{"id":"item-3","margin":-1}"#, "scrollTo.margin"),
            ]
            for (option, field) in invalid {
                let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,500],\#(option)}"#)
                #expect((reply.problem(422)["detail"] as? String ?? "").contains(field), "\(option): \(reply.text)")
            }
            let malformed: [(String, String)] = [
                (#""exposure":{"treshold":0.5}"#, "treshold"),
                (#""exposure":"yes""#, "exposure"),
                (#""exposure":null"#, "exposure"),
                (#""buffer":{"ahead":1}"#, "buffer.behind"),
                (#""buffer":{"behind":1}"#, "buffer.ahead"),
                (#""buffer":{"ahead":1,"behind":2,"sideways":3}"#, "sideways"),
                (#""buffer":[1,2]"#, "buffer"),
                (#""time":"now""#, "time"),
                (#""offset":[0,0],"scrollTo":{"id":"item-3"}"#, "scrollTo"),
                (#""scrollTo":{"id":"item-3","align":"middle"}"#, "middle"),
                (#""scrollTo":{"align":"start"}"#, "scrollTo.id"),
            ]
            for (option, named) in malformed {
                let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,500],\#(option)}"#)
                #expect((reply.problem(400)["detail"] as? String ?? "").contains(named), "\(option): \(reply.text)")
            }
            // Nothing was opened: the layout has no session.
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 0)
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500]}"#).id
            let margin = try client.update(s, #"{"scrollTo":{"id":"item-3","margin":-2}}"#).problem(422)
            #expect((margin["detail"] as? String ?? "").contains("scrollTo.margin"))
            _ = try client.update(s, #"{"scrollTo":{"id":"item-3","margin":"2"}}"#).problem(400)
            #expect(try client.state(s).int("seq") == 0)
        }
    }

    @Test func scrollToOnOpenStartsTheOpeningPlanThereWithItsMargin() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100)))
            var opened = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"buffer":0,"scrollTo":{"id":"item-40","align":"start","margin":20}}"#).json
            var plan = opened.object("plan")
            #expect(plan.doubles("offset") == [0, 3980])
            #expect(plan.ids("create") == (39...44).map { "item-\($0)" })
            opened = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"buffer":0,"scrollTo":{"id":"item-40"}}"#).json
            plan = opened.object("plan")
            #expect(plan.doubles("offset") == [0, 4100 - 500])  // auto from the top
            let s = try #require(opened["session"] as? String)
            plan = try client.update(s, #"{"scrollTo":{"id":"item-10","align":"end","margin":8}}"#).json
            #expect(plan.doubles("offset") == [0, 1100 - 500 + 8])
        }
    }

    @Test func theBufferLeansTowardTheMotion() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100)))
            let (s, opened) = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"offset":[0,3000],"buffer":{"ahead":300,"behind":100}}"#)
            // Still: 300 on both sides, 2700 … 3800.
            #expect(opened.object("plan").ids("create") == (27...37).map { "item-\($0)" })
            // Down: 100 above (2900 …), 300 below (… 3810).
            var plan = try client.update(s, #"{"offset":[0,3010]}"#).json
            #expect(plan.ids("recycle") == ["item-27", "item-28"] && plan.ids("reuse") == ["item-38"])
            // The velocity says up although the offset went down: 300 above, 100 below.
            plan = try client.update(s, #"{"offset":[0,3000],"velocity":[0,-900],"phase":"dragging"}"#).json
            #expect(plan.ids("reuse") == ["item-27", "item-28"] && plan.ids("recycle") == ["item-36", "item-37", "item-38"])
        }
    }

    @Test func stickyItemsPinAtTheLeftOfAnXLayout() throws {
        try withService { service in
            let client = try service.connect()
            let sections = #"{"axis":"x","sections":[{"id":"a","items":[{"id":"ha","rect":[0,0,40,300],"sticky":true,"reuse":"h"}]},{"id":"cols","reuse":"c","list":{"count":10,"size":[100,300]}},{"id":"b","items":[{"id":"hb","rect":[0,0,40,300],"sticky":true,"reuse":"h"}]},{"id":"more","reuse":"c","list":{"count":10,"size":[100,300]}}]}"#
            let layout = try client.postLayout(sections)
            // The same items sent one by one with axis x: the same layout.
            var explicit: [String] = [#"{"id":"ha","rect":[0,0,40,300],"reuse":"h","sticky":true}"#]
            for k in 0..<10 { explicit.append(#"{"id":"cols-\#(k)","rect":[\#(40 + k * 100),0,100,300],"reuse":"c"}"#) }
            explicit.append(#"{"id":"hb","rect":[1040,0,40,300],"reuse":"h","sticky":true}"#)
            for k in 0..<10 { explicit.append(#"{"id":"more-\#(k)","rect":[\#(1080 + k * 100),0,100,300],"reuse":"c"}"#) }
            #expect(try client.postLayout(#"{"axis":"x","items":[\#(explicit.joined(separator: ","))]}"#) == layout)
            // Along y the same items are another layout (sticky items pin elsewhere).
            #expect(try client.postLayout(#"{"items":[\#(explicit.joined(separator: ","))]}"#) != layout)
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[300,300],"buffer":0,"insets":[0,10,0,0]}"#).id
            var plan = try client.update(s, #"{"offset":[200,0]}"#).json
            // ha pinned at x = 200 + 10.
            #expect(plan.entries("pin").first?["id"] as? String == "ha")
            #expect(plan.entries("pin").first.map { $0.doubles("rect") } == [210, 0, 40, 300])
            // hb (at 1040) pushes it: at offset 1000, ha sits at min(1010, 1040 − 40) = 1000.
            plan = try client.update(s, #"{"offset":[1000,0]}"#).json
            #expect(plan.entries("pin").first.map { $0.doubles("rect") } == [1000, 0, 40, 300])
            plan = try client.update(s, #"{"offset":[1100,0]}"#).json
            #expect(plan.entries("pin").first?["id"] as? String == "hb")
            #expect(plan.entries("pin").first.map { $0.doubles("rect") } == [1110, 0, 40, 300])
            let state = try client.state(s)
            #expect(state.object("pinned")["id"] as? String == "hb")
        }
    }
}

extension [String] {
    /// These ids in the order of `layout`.
    func sortedByLayout(_ layout: [String]) -> [String] {
        let position = Dictionary(uniqueKeysWithValues: layout.enumerated().map { ($1, $0) })
        return sorted { (position[$0] ?? -1) < (position[$1] ?? -1) }
    }
}
