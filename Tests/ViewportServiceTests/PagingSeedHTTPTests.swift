import Foundation
import Testing
import ViewportService

/// The paging seeds over HTTP: pages smaller than the viewport (paging-smaller-than-bounds.txt) and
/// the endless three-view carousel (reusable-paging-scrollview.txt).
@Suite struct PagingSeedHTTPTests {
    @Test func a375PointViewPaging250PointPagesVotesByVelocityAndDirection() throws {
        try withService { service in
            let client = try service.connect()
            let items = (0..<20).map { TestItem(id: "card-\($0)", rect: [Double($0) * 250, 0, 240, 300], reuse: "card") }
            let layout = try client.postLayout(layoutJSON(items))
            let session = try client.openSession(
                #"{"layout":"\#(layout)","viewport":[375,300],"paging":{"mode":"page","axis":"x","size":[250,300]}}"#).id
            func drag(from b: Double, to o: Double, velocity v: Double) throws -> [String: Any] {
                let begin = try client.update(session, #"{"offset":[\#(number(b)),0],"phase":"drag-begin"}"#)
                #expect(begin.status == 200)
                let reply = try client.update(session, #"{"offset":[\#(number(o)),0],"velocity":[\#(number(v)),0],"phase":"drag-end"}"#)
                #expect(reply.status == 200)
                return reply.json
            }
            // (b, o, v) → (target x, page): both votes forward, votes cancel, both backward, no
            // velocity (the page nearest to o), before the first page, the last page clamped to
            // the content's end (4990 − 375 = 4615; pages = ceil(4990 / 250) = 20).
            let cases: [(Double, Double, Double, Double, Int)] = [
                (0, 60, 300, 250, 1),
                (250, 260, -200, 250, 1),
                (250, 240, 200, 250, 1),
                (250, 200, -50, 0, 0),
                (250, 380, 0, 500, 2),
                (250, 370, 0, 250, 1),
                (0, -40, -900, 0, 0),
                (4750, 4800, 900, 4615, 19),
                (4615, 4700, 5000, 4615, 19),
                (1000, 1010, 1, 1250, 5),
                (1000, 990, -1, 750, 3),
                // A fast fling moves one page only (pagingEnabled), unlike snap.
                (500, 600, 20000, 750, 3),
            ]
            for (b, o, v, x, page) in cases {
                let plan = try drag(from: b, to: o, velocity: v)
                #expect(plan.doubles("target") == [x, 0], "b \(b) o \(o) v \(v)")
                #expect(plan.int("page") == page, "b \(b) o \(o) v \(v)")
            }
            // Settling at the target: the cards on screen and its buffer are materialized, nothing else.
            let rest = try client.update(session, #"{"offset":[4615,0]}"#)
            #expect(rest.status == 200)
            let state = try client.state(session)
            #expect(state.ids("visible") == materialized(items, offset: [4615, 0], viewport: [375, 300], buffer: 20))
        }
    }

    /// Five pages, one viewport wide, half-page buffer, `loop`: paged thousands of times each way
    /// in one NDJSON stream per direction. The client computes every line in advance (the page vote
    /// is deterministic), including the `recenter` it will apply at each `idle`, and checks that the
    /// service answers exactly that; three views serve it all.
    @Test func threeViewLoopingCarouselPagedThousandsOfTimesEachWay() throws {
        try withService { service in
            let client = try service.connect()
            let width = 375.0, pages = 5, period = 5 * 375.0
            let items = (0..<pages).map { TestItem(id: "page-\($0)", rect: [Double($0) * width, 0, width, 600], reuse: "page") }
            let layout = try client.postLayout(layoutJSON(items))
            let (session, opened) = try client.openSession(
                #"{"layout":"\#(layout)","viewport":[375,600],"buffer":187.5,"paging":{"mode":"page","axis":"x"},"loop":true}"#)
            let firstPlan = opened.object("plan")
            #expect(firstPlan.ids("create") == ["page-0", "page-1", "page-4"])
            // View → (item, x) in the client's coordinates.
            var views: [Int: (id: String, x: Double)] = [:]
            func apply(_ plan: [String: Any]) {
                for entry in plan.entries("recycle") + plan.entries("discard") { views[entry.int("view")!] = nil }
                for entry in plan.entries("reuse") + plan.entries("create") {
                    views[entry.int("view")!] = (entry["id"] as! String, entry.doubles("rect")[0])
                }
                if let shift = plan["recenter"] as? [Any], let dx = (shift.first as? NSNumber)?.doubleValue {
                    for (view, shown) in views { views[view] = (shown.id, shown.x + dx) }
                }
            }
            apply(firstPlan)
            #expect(views.values.first { $0.x == -width }?.id == "page-4")
            var offset = 0.0, page = 0, seq = 0
            for direction in [1.0, -1.0] {
                let count = 2500
                var lines: [String] = []
                // (line index of the drag-end, expected target, page), (line index of the idle, recenter, offset after)
                var expectations: [(end: Int, target: Double, page: Int, idle: Int, recenter: Double, after: Double)] = []
                for _ in 0..<count {
                    lines.append(#"{"offset":[\#(number(offset)),0],"phase":"drag-begin"}"#)
                    lines.append(#"{"offset":[\#(number(offset + 40 * direction)),0],"phase":"dragging"}"#)
                    lines.append(#"{"offset":[\#(number(offset + 90 * direction)),0],"velocity":[\#(number(700 * direction)),0],"phase":"drag-end"}"#)
                    let end = lines.count - 1
                    let target = offset + width * direction  // along a looping axis nothing is clamped
                    page = (page + Int(direction) + pages) % pages
                    lines.append(#"{"offset":[\#(number(offset + 200 * direction)),0],"velocity":[\#(number(300 * direction)),0],"phase":"decelerating"}"#)
                    lines.append(#"{"offset":[\#(number(target)),0],"phase":"idle"}"#)
                    // At rest outside [0, P): a whole number of periods back into it.
                    let recenter = -(target / period).rounded(.down) * period
                    expectations.append((end, target, page, lines.count - 1, recenter, target + recenter))
                    offset = target + recenter
                }
                let reply = try client.send("POST", "/v1/sessions/\(session)/viewport", body: Array(lines.joined(separator: "\n").utf8), contentType: "application/x-ndjson")
                #expect(reply.status == 200)
                let plans = reply.lines
                try #require(plans.count == lines.count, "\(reply.text.suffix(300))")
                var e = 0
                for (i, plan) in plans.enumerated() {
                    seq += 1
                    #expect(plan.int("seq") == seq)
                    let x = plan.doubles("offset")[0]
                    // Bounded: within a fling of [0, P).
                    #expect(x >= -width && x < period + width, "line \(i + 1)")
                    if i < expectations[e].end || i > expectations[e].idle {
                        #expect(plan["target"] == nil)
                    }
                    if i == expectations[e].end {
                        #expect(plan.doubles("target") == [expectations[e].target, 0], "line \(i + 1)")
                        #expect(plan.int("page") == expectations[e].page, "line \(i + 1)")
                    }
                    if i == expectations[e].idle {
                        let shift = expectations[e].recenter
                        if shift == 0 {
                            #expect(plan["recenter"] == nil, "line \(i + 1)")
                        } else {
                            #expect(plan.doubles("recenter") == [shift, 0], "line \(i + 1)")
                        }
                    } else {
                        #expect(plan["recenter"] == nil, "line \(i + 1): recenter only at idle")
                    }
                    #expect(plan.entries("create").isEmpty && plan.entries("discard").isEmpty, "line \(i + 1)")
                    apply(plan)
                    if i == expectations[e].idle {
                        // The expected page sits at the offset; its neighbours on either side.
                        let after = expectations[e].after
                        #expect(after >= 0 && after < period)
                        let p = expectations[e].page
                        let at = Dictionary(views.values.map { ($0.x, $0.id) }, uniquingKeysWith: { a, _ in a })
                        #expect(at[after] == "page-\(p)", "line \(i + 1)")
                        #expect(at[after - width] == "page-\((p + pages - 1) % pages)", "line \(i + 1)")
                        #expect(at[after + width] == "page-\((p + 1) % pages)", "line \(i + 1)")
                        if at[after] != "page-\(p)" { return }
                        e += 1
                    }
                }
                let state = try client.state(session)
                #expect(state.int("seq") == seq)
                let x = state.doubles("offset")[0]
                #expect(x == offset && x >= 0 && x < period)
            }
            let state = try client.state(session)
            let stats = state.object("stats")
            #expect(stats.int("created") == 3)
            #expect(stats.int("peakViews") == 3)
            #expect(stats.int("discarded") == 0)
            #expect(views.count == 3)
            #expect(state.entries("visible").count == 3)
        }
    }
}
