import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// docs/api.md "Scrolling helpers" over HTTP.
@Suite struct ScrollingHelperHTTPTests {
    /// 100 rows of 100 pt in a 375 × 500 viewport.
    static let rows = listItems(100, height: 100)

    func open(_ client: Client, _ options: String, offset: String = "[0,0]", buffer: Double = 0) throws -> (id: String, plan: [String: Any]) {
        let layout = try client.postLayout(layoutJSON(Self.rows))
        let (id, json) = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500],"offset":\#(offset),"buffer":\#(number(buffer))\#(options)}"#)
        return (id, json.object("plan"))
    }

    func update(_ client: Client, _ session: String, _ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let reply = try client.update(session, body)
        #expect(reply.status == 200, "\(reply.text)", sourceLocation: sourceLocation)
        return reply.json
    }

    // MARK: prefetch

    @Test func prefetchPredictsEachItemOnceAndAnUpdateWithoutVelocityCancels() throws {
        try withService { service in
            let client = try service.connect()
            let (s, first) = try open(client, #","prefetch":0.5"#, buffer: 20)
            #expect(first["prefetch"] == nil && first["cancelPrefetch"] == nil)
            // Region −20 … 520 (buffer 20, rows 0 … 5); at 1000 pt/s for 0.5 s it sweeps to 1020: rows 6 … 10.
            var plan = try update(client, s, #"{"offset":[0,0],"velocity":[0,1000],"phase":"dragging"}"#)
            #expect(plan.names("prefetch") == (6...10).map { "item-\($0)" })
            // Same prediction again: nothing new, nothing cancelled.
            plan = try update(client, s, #"{"offset":[0,0],"velocity":[0,1000],"phase":"dragging"}"#)
            #expect(plan["prefetch"] == nil && plan["cancelPrefetch"] == nil)
            // Moving 150 down (region 130 … 670, sweeping to 1170): row 6 entered (no cancel for
            // it), 7 … 10 still predicted, 11 new.
            plan = try update(client, s, #"{"offset":[0,150],"velocity":[0,1000],"phase":"dragging"}"#)
            #expect(plan.ids("reuse") + plan.ids("create") == ["item-6"])
            #expect(plan.names("prefetch") == ["item-11"])
            #expect(plan["cancelPrefetch"] == nil)
            // Slowing down: the sweep ends at 670 + 100 = 770: 7 stays, 8 … 11 cancelled.
            plan = try update(client, s, #"{"offset":[0,150],"velocity":[0,200],"phase":"decelerating"}"#)
            #expect(plan["prefetch"] == nil)
            #expect(plan.names("cancelPrefetch") == ["item-8", "item-9", "item-10", "item-11"])
            // No velocity: every outstanding prediction is cancelled.
            plan = try update(client, s, #"{"offset":[0,150]}"#)
            #expect(plan.names("cancelPrefetch") == ["item-7"])
            plan = try update(client, s, #"{"offset":[0,150]}"#)
            #expect(plan["cancelPrefetch"] == nil)
            // Upward velocity predicts upward.
            plan = try update(client, s, #"{"offset":[0,150],"velocity":[0,-400],"phase":"dragging"}"#)
            #expect(plan.names("prefetch") == ["item-0"])
        }
    }

    /// A random walk with random velocities against a model of the prefetch rule of docs/api.md "Scrolling helpers".
    @Test func prefetchFollowsItsRuleOnARandomWalk() throws {
        try withService { service in
            let client = try service.connect()
            let (s, _) = try open(client, #","prefetch":0.25"#, buffer: 30)
            var g = SplitMix(seed: 7)
            var y = 0.0
            var predicted: Set<String> = []
            var lines: [String] = []
            var expected: [(prefetch: [String], cancel: [String])] = []
            for _ in 0..<600 {
                let before = Set(materialized(Self.rows, offset: [0, y], viewport: [375, 500], buffer: 30))
                _ = before
                y = max(-100, min(10_100, y + Double(Int.random(in: -300...300, using: &g))))
                let region = materialized(Self.rows, offset: [0, y], viewport: [375, 500], buffer: 30)
                let shown = Set(region)
                if Int.random(in: 0..<5, using: &g) == 0 {
                    lines.append(#"{"offset":[0,\#(number(y))]}"#)
                    expected.append(([], Self.rows.map(\.id).filter { predicted.contains($0) && !shown.contains($0) }))
                    predicted = []
                    continue
                }
                let v = Double(Int.random(in: -4000...4000, using: &g))
                lines.append(#"{"offset":[0,\#(number(y))],"velocity":[0,\#(number(v))],"phase":"dragging"}"#)
                // The region swept ahead by v × 0.25 (strict intersection), minus the materialized.
                let d = v * 0.25
                let minY = min(y - 30, y - 30 + d), maxY = max(y + 530, y + 530 + d)
                let now = Self.rows.filter { $0.rect[1] < maxY && $0.rect[1] + $0.rect[3] > minY && !shown.contains($0.id) }.map(\.id)
                let nowSet = Set(now)
                expected.append((now.filter { !predicted.contains($0) }, Self.rows.map(\.id).filter { predicted.contains($0) && !nowSet.contains($0) && !shown.contains($0) }))
                predicted = nowSet
            }
            let reply = try client.send("POST", "/v1/sessions/\(s)/viewport", body: Array(lines.joined(separator: "\n").utf8), contentType: "application/x-ndjson")
            let plans = reply.lines
            try #require(plans.count == lines.count)
            for (i, plan) in plans.enumerated() {
                #expect(plan.names("prefetch") == expected[i].prefetch, "line \(i + 1)")
                #expect(plan.names("cancelPrefetch") == expected[i].cancel, "line \(i + 1)")
            }
        }
    }

    // MARK: lazyLoad

    @Test func lazyLoadLoadsOnDragBeginIdleAndDragEndAtTheTargetButNotWhileDragging() throws {
        try withService { service in
            let client = try service.connect()
            let (s, first) = try open(client, #","lazyLoad":true,"paging":{"mode":"page","size":[375,500]}"#, buffer: 50)
            // The opening plan is idle: every materialized item (0 … 550: rows 0 … 5).
            #expect(first.names("load") == (0...5).map { "item-\($0)" })
            // Dragging and decelerating load nothing, even as rows enter.
            var plan = try update(client, s, #"{"offset":[0,0],"phase":"drag-begin"}"#)
            #expect(plan["load"] == nil)
            plan = try update(client, s, #"{"offset":[0,180],"phase":"dragging"}"#)
            #expect(plan.ids("reuse") + plan.ids("create") == ["item-6", "item-7"] && plan["load"] == nil)
            // drag-end: target page 1 (500); the rows inside the viewport there (500 … 1000):
            // rows 5 … 9; 5 is loaded already.
            plan = try update(client, s, #"{"offset":[0,220],"velocity":[0,800],"phase":"drag-end"}"#)
            #expect(plan.doubles("target") == [0, 500])
            #expect(plan.names("load") == (6...9).map { "item-\($0)" })
            plan = try update(client, s, #"{"offset":[0,400],"velocity":[0,300],"phase":"decelerating"}"#)
            #expect(plan["load"] == nil)
            // idle at the target: the materialized rows not yet loaded (450 … 1050: 4 … 10, 4 loaded,
            // 10 not).
            plan = try update(client, s, #"{"offset":[0,500]}"#)
            #expect(plan.names("load") == ["item-10"])
            plan = try update(client, s, #"{"offset":[0,500]}"#)
            #expect(plan["load"] == nil)
            // Rows 0 … 3 left the region: they are no longer loaded, and load again on the way back.
            plan = try update(client, s, #"{"offset":[0,0],"phase":"drag-begin"}"#)
            #expect(plan.names("load") == (0...3).map { "item-\($0)" })
            // A drag-end whose target loads rows that are never materialized, then a drag-begin
            // elsewhere: those loads are forgotten, so they load again later.
            plan = try update(client, s, #"{"offset":[0,3000],"phase":"drag-begin"}"#)
            #expect(plan.names("load") == (29...35).map { "item-\($0)" })
            plan = try update(client, s, #"{"offset":[0,3020],"velocity":[0,100],"phase":"drag-end"}"#)
            #expect(plan.doubles("target") == [0, 3500])
            #expect(plan.names("load") == (36...39).map { "item-\($0)" })
            plan = try update(client, s, #"{"offset":[0,3000],"phase":"drag-begin"}"#)
            #expect(plan["load"] == nil)
            plan = try update(client, s, #"{"offset":[0,3500]}"#)
            #expect(plan.names("load") == (36...40).map { "item-\($0)" })
        }
    }

    // MARK: exposure

    @Test func exposureCountsEntriesIntoTheScreenAndLeaves() throws {
        try withService { service in
            let client = try service.connect()
            let (s, first) = try open(client, #","exposure":true"#, buffer: 100)
            // The screen is the viewport without buffer: 0 … 500, rows 0 … 4.
            #expect(first.entries("enter").map { $0["id"] as! String } == (0...4).map { "item-\($0)" })
            #expect(first.entries("enter").allSatisfy { $0.int("times") == 1 })
            var plan = try update(client, s, #"{"offset":[0,250]}"#)
            #expect(plan.entries("enter").map { $0["id"] as! String } == ["item-5", "item-6", "item-7"])
            #expect(plan.ids("enter").count == 3)
            #expect(plan["leave"] as? [String] == ["item-0", "item-1"])
            // Back: rows 0 and 1 enter a second time; 5 … 7 leave.
            plan = try update(client, s, #"{"offset":[0,0]}"#)
            #expect(plan.entries("enter").map { "\($0["id"]!):\($0.int("times")!)" } == ["item-0:2", "item-1:2"])
            #expect(plan["leave"] as? [String] == ["item-5", "item-6", "item-7"])
            // A row that only touches the screen's edge is not on it (strict): offset 100 shows 1 … 5.
            plan = try update(client, s, #"{"offset":[0,100]}"#)
            #expect(plan.entries("enter").map { "\($0["id"]!):\($0.int("times")!)" } == ["item-5:2"])
            #expect(plan["leave"] as? [String] == ["item-0"])
            // Staying still: nothing.
            plan = try update(client, s, #"{"offset":[0,100]}"#)
            #expect(plan["enter"] == nil && plan["leave"] == nil)
            plan = try update(client, s, #"{"offset":[0,0]}"#)
            #expect(plan.entries("enter").map { "\($0["id"]!):\($0.int("times")!)" } == ["item-0:3"])
        }
    }

    // MARK: links

    @Test func linksFollowAtTheSameProgress() throws {
        try withService { service in
            let client = try service.connect()
            let (s, first) = try open(
                client, #","links":{"bg":{"viewport":[375,500],"contentSize":[375,2950]},"header":{"viewport":[200,100],"contentSize":[600,100]}}"#)
            // Progress 0: both at 0 (the header's x range is 0 … 400 but the session has no x range).
            #expect(first.object("linked").keys.sorted() == ["bg", "header"])
            #expect(first.object("linked").doubles("bg") == [0, 0])
            // Session range 0 … 9500; bg's 0 … 2450.
            for y in [0.0, 950, 4750, 9500, 12000, -300, 1234.5] {
                let plan = try update(client, s, #"{"offset":[0,\#(number(y))]}"#)
                let linked = plan.object("linked")
                let progress = max(0, min(1, y / 9500))
                let bg = linked.doubles("bg")
                // progress × 2450: a tolerance for the order of the division and multiplication.
                #expect(bg.count == 2 && bg[0] == 0 && abs(bg[1] - progress * 2450) <= 1e-9, "y \(y): \(bg)")
                #expect(linked.doubles("header") == [0, 0], "y \(y)")
            }
        }
    }

    // MARK: select

    @Test func selectMarksTheCreateAndReuseEntriesOfTheSelectedItem() throws {
        try withService { service in
            let client = try service.connect()
            let (s, _) = try open(client, "")
            var plan = try update(client, s, #"{"offset":[0,0],"select":"item-7"}"#)
            #expect(plan["create"] == nil)
            // item-7 enters (reusing item-0's or item-1's view): selected; others not.
            plan = try update(client, s, #"{"offset":[0,300]}"#)
            let entering = plan.entries("reuse") + plan.entries("create")
            #expect(Set(entering.map { $0["id"] as! String }) == ["item-5", "item-6", "item-7"])
            for entry in entering {
                #expect((entry["selected"] as? Bool) == (entry["id"] as? String == "item-7" ? true : nil), "\(entry)")
            }
            // Away and back: still selected.
            _ = try update(client, s, #"{"offset":[0,2000]}"#)
            plan = try update(client, s, #"{"offset":[0,300]}"#)
            let back = plan.entries("reuse").first { $0["id"] as? String == "item-7" }
            #expect(back?["selected"] as? Bool == true)
            // null clears it.
            _ = try update(client, s, #"{"offset":[0,2000],"select":null}"#)
            plan = try update(client, s, #"{"offset":[0,300]}"#)
            #expect((plan.entries("reuse") + plan.entries("create")).allSatisfy { $0["selected"] == nil })
            // An unknown id is a 422 naming select, and changes nothing.
            let seq = try client.state(s).int("seq")
            let bad = try client.update(s, #"{"offset":[0,0],"select":"nope"}"#)
            #expect(names(bad.problem(422), "select", value: "nope"))
            #expect(try client.state(s).int("seq") == seq)
            #expect(try client.state(s).doubles("offset") == [0, 300])
        }
    }

    // MARK: scrollTo

    @Test func scrollToAlignsClampsAndRefuses() throws {
        try withService { service in
            let client = try service.connect()
            let (s, _) = try open(client, #","insets":[10,0,20,0]"#, offset: "[0,1000]")
            // Range: −10 … 10000 + 20 − 500 = 9520.
            let cases: [(String, String, Double)] = [
                ("item-30", "start", 3000), ("item-30", "center", 3050 - 250), ("item-30", "end", 3100 - 500),
                ("item-0", "start", 0), ("item-0", "end", -10), ("item-0", "center", -10),
                ("item-99", "start", 9520), ("item-99", "end", 9500), ("item-99", "center", 9520),
            ]
            for (id, align, y) in cases {
                let plan = try update(client, s, #"{"scrollTo":{"id":"\#(id)","align":"\#(align)"}}"#)
                #expect(plan.doubles("offset") == [0, y], "\(id) \(align)")
                #expect(try client.state(s).doubles("offset") == [0, y])
            }
            // auto: the least movement that shows the whole item.
            _ = try update(client, s, #"{"offset":[0,1000]}"#)
            var plan = try update(client, s, #"{"scrollTo":{"id":"item-12"}}"#)  // 1200 … 1300 is on screen: stays
            #expect(plan.doubles("offset") == [0, 1000])
            plan = try update(client, s, #"{"scrollTo":{"id":"item-20","align":"auto"}}"#)  // below: its end at the bottom
            #expect(plan.doubles("offset") == [0, 2100 - 500])
            plan = try update(client, s, #"{"scrollTo":{"id":"item-3","align":"auto"}}"#)  // above: its start at the top
            #expect(plan.doubles("offset") == [0, 300])
            // The materialized set follows the new offset (buffer 0).
            #expect(try client.state(s).ids("visible") == materialized(Self.rows, offset: [0, 300], viewport: [375, 500], buffer: 0))
            // Errors change nothing.
            let seq = try client.state(s).int("seq")
            let unknown = try client.update(s, #"{"scrollTo":{"id":"item-100"}}"#).problem(422)
            #expect(names(unknown, "scrollTo.id", value: "item-100"), "\(unknown)")
            let both = try client.update(s, #"{"offset":[0,0],"scrollTo":{"id":"item-1"}}"#).problem(400)
            #expect(both["detail"] as? String == "send either offset or scrollTo, not both")
            #expect(names(try client.update(s, #"{"scrollTo":{"id":"item-1","align":"middle"}}"#).problem(400), "scrollTo.align", value: "middle"))
            #expect(names(try client.update(s, #"{"scrollTo":{"id":"item-1","alignment":"start"}}"#).problem(400), "alignment"))
            #expect(names(try client.update(s, #"{"scrollTo":{}}"#).problem(400), "scrollTo.id"))
            #expect(try client.state(s).int("seq") == seq)
            #expect(try client.state(s).doubles("offset") == [0, 300])
        }
    }

    /// scrollTo on both axes: a grid scrolled to a cell lands on both coordinates, clamped.
    @Test func scrollToWorksOnBothAxes() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(gridItems(rows: 30, columns: 30)))
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[400,600]}"#).id
            var plan = try update(client, s, #"{"scrollTo":{"id":"10/12","align":"center"}}"#)
            #expect(plan.doubles("offset") == [1250 - 200, 1050 - 300])
            plan = try update(client, s, #"{"scrollTo":{"id":"29/29","align":"start"}}"#)
            #expect(plan.doubles("offset") == [2600, 2400])
            plan = try update(client, s, #"{"scrollTo":{"id":"0/0","align":"end"}}"#)
            #expect(plan.doubles("offset") == [0, 0])
        }
    }

    // MARK: validation

    @Test func invalidHelperOptionsAre422NamingTheField() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(Self.rows))
            let cases: [(String, String)] = [
                (#""paging":{"decelerationRate":0}"#, "paging.decelerationRate"),
                (#""paging":{"decelerationRate":1}"#, "paging.decelerationRate"),
                (#""paging":{"decelerationRate":1.5}"#, "paging.decelerationRate"),
                (#""paging":{"decelerationRate":-0.2}"#, "paging.decelerationRate"),
                (#""paging":{"mode":"page","size":[375,0]}"#, "paging.size"),
                (#""paging":{"size":[-1,10]}"#, "paging.size"),
                (#""prefetch":-1"#, "prefetch"),
                (#""links":{"bg":{"viewport":[-1,100],"contentSize":[10,10]}}"#, "links.bg.viewport"),
                (#""links":{"bg":{"viewport":[1,100],"contentSize":[10,-10]}}"#, "links.bg.contentSize"),
            ]
            for (options, field) in cases {
                let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,500],\#(options)}"#)
                let problem = reply.problem(422)
                #expect(names(problem, field), "\(options): \(reply.text)")
            }
            let badRequests: [(String, String)] = [
                (#""paging":{"mode":"flying"}"#, "paging.mode"),
                (#""paging":{"axis":"z"}"#, "paging.axis"),
                (#""paging":{"mode":"page","pages":3}"#, "pages"),
                (#""links":{"bg":{"viewport":[1,100]}}"#, "links.bg.contentSize"),
                (#""links":{"bg":{"viewport":[1,100],"contentSize":[10,10],"speed":2}}"#, "speed"),
                (#""links":[1]"#, "links"),
                (#""lazyLoad":"yes""#, "lazyLoad"),
                (#""prefetch":"1""#, "prefetch"),
                (#""loop":1"#, "loop"),
            ]
            for (options, named) in badRequests {
                let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,500],\#(options)}"#)
                let problem = reply.problem(400)
                #expect(names(problem, named), "\(options): \(reply.text)")
            }
            // Updates: a phase or an align outside its enumeration.
            let s = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,500]}"#).id
            #expect(names(try client.update(s, #"{"offset":[0,0],"phase":"flying"}"#).problem(400), "phase", value: "flying"))
            #expect(names(try client.update(s, #"{"offset":[0,0],"select":5}"#).problem(400), "select"))
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// A plan list of plain ids (`prefetch`, `cancelPrefetch`, `load`, `leave`); absent = empty.
    func names(_ key: String) -> [String] { self[key] as? [String] ?? [] }
}
