import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// A client keyed by item ids, so it follows a session across layouts; it checks every plan
/// against docs/api.md "Plans" and "Layout changes" computed by brute force: items matched by id keep
/// their view (`move` when their rect changed), the others leave (in the previous layout's order)
/// or enter (in the new layout's order); pools carry over by reuse identifier; own view first,
/// then the most recently pooled; creates only from an empty pool; caps; handles never reused.
struct IDModel {
    struct Pooled {
        var view: Int
        /// The item the view last showed, nil once no layout has that item any more.
        var last: String?
        var pushedAt: Int
    }

    var items: [TestItem]
    var offset: [Double]
    var viewport: [Double]
    var buffer: Double
    var caps: (max: Int?, perReuse: [String: Int])?
    var shown: [String: Int] = [:]
    var pools: [String: [Pooled]] = [:]
    var seen: Set<Int> = []
    var seq = 0
    var step = 0

    init(items: [TestItem], offset: [Double], viewport: [Double], buffer: Double, caps: (max: Int?, perReuse: [String: Int])? = nil) {
        self.items = items
        self.offset = offset
        self.viewport = viewport
        self.buffer = buffer
        self.caps = caps
    }

    static func reuse(_ item: TestItem?) -> String? {
        guard let r = item?.reuse, !r.isEmpty else { return nil }
        return r
    }

    func cap(_ reuse: String) -> Int? { caps.flatMap { $0.perReuse[reuse] ?? $0.max } }

    /// The anchored offset of docs/api.md "Layout changes": the first item on screen, in the previous layout's order, that
    /// exists in both layouts keeps its place on screen (both axes, unclamped).
    func anchoredOffset(to new: [TestItem]) -> [Double] {
        let byID = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
        for id in materialized(items, offset: offset, viewport: viewport, buffer: 0) {
            guard let after = byID[id], let before = items.first(where: { $0.id == id }) else { continue }
            return [offset[0] + after.rect[0] - before.rect[0], offset[1] + after.rect[1] - before.rect[1]]
        }
        return offset
    }

    /// Checks `plan` for moving to `new` items at `newOffset` and applies it.
    @discardableResult
    mutating func apply(_ plan: [String: Any], to new: [TestItem], offset newOffset: [Double], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        step += 1
        seq += 1
        #expect(plan.int("seq") == seq, sourceLocation: sourceLocation)
        #expect(plan.doubles("offset") == newOffset, "offset", sourceLocation: sourceLocation)
        let old = items
        let oldByID = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0) })
        let newByID = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
        let oldOrder = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.id, $0) })
        let expectedIDs = materialized(new, offset: newOffset, viewport: viewport, buffer: buffer)
        let expectedSet = Set(expectedIDs)
        #expect(Set(shown.keys) == Set(materialized(old, offset: offset, viewport: viewport, buffer: buffer)), "model out of sync", sourceLocation: sourceLocation)
        let survivors = Set(shown.keys.filter { expectedSet.contains($0) && Self.reuse(oldByID[$0]) == Self.reuse(newByID[$0]) })
        let leaving = shown.keys.filter { !survivors.contains($0) }.sorted { oldOrder[$0]! < oldOrder[$1]! }
        let entering = expectedIDs.filter { !survivors.contains($0) }

        for name in pools.keys {
            for k in pools[name]!.indices where pools[name]![k].last.map({ newByID[$0] == nil }) ?? false {
                pools[name]![k].last = nil
            }
        }
        var pooledBefore: [String: Int] = pools.mapValues(\.count)
        pooledBefore = pooledBefore.filter { $0.value > 0 }
        for id in leaving {
            if let reuse = Self.reuse(oldByID[id]) {
                pools[reuse, default: []].append(Pooled(view: shown[id]!, last: newByID[id] == nil ? nil : id, pushedAt: step))
            }
        }
        var assigned: [String: (view: Int, rebind: Bool)] = [:]
        var refCreate: [String] = []
        for id in entering {
            guard let reuse = Self.reuse(newByID[id]), let at = pools[reuse]?.firstIndex(where: { $0.last == id }) else { continue }
            assigned[id] = (pools[reuse]!.remove(at: at).view, false)
        }
        for id in entering where assigned[id] == nil {
            if let reuse = Self.reuse(newByID[id]), let entry = pools[reuse]?.popLast() {
                assigned[id] = (entry.view, entry.last != id)
            } else {
                refCreate.append(id)
            }
        }
        // Caps: what is over a cap once the plan is applied is discarded, from this plan's leavers.
        var capped: Set<Int> = []
        for (reuse, entries) in pools {
            guard let cap = cap(reuse), entries.count > cap else { continue }
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
            #expect(excess == 0, "a cap that only this plan's leavers could not meet", sourceLocation: sourceLocation)
            pools[reuse] = kept
        }
        var refRecycle: [String] = [], refDiscard: [String] = []
        for id in leaving {
            if Self.reuse(oldByID[id]) == nil || capped.contains(shown[id]!) { refDiscard.append(id) } else { refRecycle.append(id) }
        }
        #expect(plan.ids("recycle") == refRecycle, "recycle", sourceLocation: sourceLocation)
        #expect(plan.ids("discard") == refDiscard, "discard", sourceLocation: sourceLocation)
        for entry in plan.entries("recycle") + plan.entries("discard") {
            #expect(entry.int("view") == shown[entry["id"] as! String], "a leaving item's view", sourceLocation: sourceLocation)
        }
        let refReuse = entering.filter { assigned[$0] != nil }
        #expect(plan.ids("reuse") == refReuse, "reuse", sourceLocation: sourceLocation)
        #expect(plan.entries("reuse").map { $0.int("view") ?? -1 } == refReuse.map { assigned[$0]!.view }, "reuse views", sourceLocation: sourceLocation)
        #expect(plan.entries("reuse").map { $0["rebind"] as? Bool ?? false } == refReuse.map { assigned[$0]!.rebind }, "rebind", sourceLocation: sourceLocation)
        #expect(plan.ids("create") == refCreate, "create", sourceLocation: sourceLocation)
        for entry in plan.entries("create") {
            let id = entry["id"] as! String
            #expect(entry["reuse"] as? String == Self.reuse(newByID[id]), sourceLocation: sourceLocation)
        }
        for entry in plan.entries("reuse") + plan.entries("create") {
            #expect(entry.doubles("rect") == newByID[entry["id"] as! String]!.rect, "rect", sourceLocation: sourceLocation)
        }
        let refMoves = expectedIDs.filter { survivors.contains($0) && oldByID[$0]!.rect != newByID[$0]!.rect }
        #expect(plan.ids("move") == refMoves, "move", sourceLocation: sourceLocation)
        for entry in plan.entries("move") {
            let id = entry["id"] as! String
            #expect(entry.int("view") == shown[id], "a moved item keeps its view", sourceLocation: sourceLocation)
            #expect(entry.doubles("rect") == newByID[id]!.rect, sourceLocation: sourceLocation)
        }
        // The counts per identifier of docs/api.md "Plans".
        if caps != nil {
            var leavingBy: [String: Int] = [:], enteringBy: [String: Int] = [:]
            for id in leaving { if let r = Self.reuse(oldByID[id]) { leavingBy[r, default: 0] += 1 } }
            for id in entering { if let r = Self.reuse(newByID[id]) { enteringBy[r, default: 0] += 1 } }
            for r in Set(leavingBy.keys).union(enteringBy.keys) {
                let e = enteringBy[r] ?? 0, l = leavingBy[r] ?? 0, p = pooledBefore[r] ?? 0
                #expect(refCreate.filter { Self.reuse(newByID[$0]) == r }.count == max(0, e - p - l), sourceLocation: sourceLocation)
                if let cap = cap(r) {
                    #expect(refDiscard.filter { Self.reuse(oldByID[$0]) == r }.count == max(0, p + l - e - cap), sourceLocation: sourceLocation)
                }
            }
        }
        for id in leaving { shown[id] = nil }
        for id in refReuse { shown[id] = assigned[id]!.view }
        for entry in plan.entries("create") {
            let view = entry.int("view") ?? 0
            #expect(view > 0 && !seen.contains(view), "handle \(view) used twice", sourceLocation: sourceLocation)
            seen.insert(view)
            shown[entry["id"] as! String] = view
        }
        for entry in plan.entries("reuse") {
            #expect(seen.contains(entry.int("view") ?? 0), "reused a view never created", sourceLocation: sourceLocation)
        }
        #expect(Set(shown.keys) == expectedSet, sourceLocation: sourceLocation)
        items = new
        offset = newOffset
        return leaving
    }

    /// Checks the opening plan.
    mutating func open(_ plan: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(plan.ids("create") == materialized(items, offset: offset, viewport: viewport, buffer: buffer), sourceLocation: sourceLocation)
        for entry in plan.entries("create") {
            seen.insert(entry.int("view")!)
            shown[entry["id"] as! String] = entry.int("view")!
        }
    }

    func check(state: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(state.int("seq") == seq, sourceLocation: sourceLocation)
        #expect(state.doubles("offset") == offset, sourceLocation: sourceLocation)
        #expect(state.ids("visible") == materialized(items, offset: offset, viewport: viewport, buffer: buffer), sourceLocation: sourceLocation)
        for entry in state.entries("visible") {
            #expect(entry.int("view") == shown[entry["id"] as! String], sourceLocation: sourceLocation)
        }
        let pool = state.object("pool")
        let expected = pools.filter { !$0.value.isEmpty }.mapValues { $0.map(\.view) }
        #expect(Set(pool.keys) == Set(expected.keys), sourceLocation: sourceLocation)
        for (r, views) in expected {
            #expect(pool[r] as? [Int] == views, "pool \(r), oldest first", sourceLocation: sourceLocation)
        }
    }
}

@Suite struct LayoutChangeHTTPTests {
    func put(_ client: Client, _ session: String, _ body: String) throws -> Reply {
        try client.send("PUT", "/v1/sessions/\(session)/layout", json: body)
    }

    static func rows(_ ids: [String], height: Double = 100, reuse: String? = "row") -> [TestItem] {
        ids.enumerated().map { TestItem(id: $0.element, rect: [0, Double($0.offset) * height, 375, height], reuse: reuse) }
    }

    @Test func survivorsKeepTheirViewsMovedOnesAreListedGoneOnesLeaveNewOnesEnter() throws {
        try withService { service in
            let client = try service.connect()
            let a = Self.rows((0..<10).map { "r\($0)" })
            let la = try client.postLayout(layoutJSON(a))
            let (s, opened) = try client.openSession(#"{"layout":"\#(la)","viewport":[375,400],"buffer":0,"exposure":true}"#)
            var model = IDModel(items: a, offset: [0, 0], viewport: [375, 400], buffer: 0)
            model.open(opened.object("plan"))
            // r1 is gone, r0 stays put, r2 and r3 move up by a row, r4 enters (and moves up into view).
            let b = Self.rows(["r0"] + (2..<10).map { "r\($0)" })
            let reply = try put(client, s, #"{"layout":\#(layoutJSON(b))}"#)
            #expect(reply.status == 200, "\(reply.text)")
            let plan = reply.json
            model.apply(plan, to: b, offset: [0, 0])
            #expect(plan.ids("recycle") == ["r1"])
            #expect(plan.ids("move") == ["r2", "r3"])
            #expect(plan.ids("reuse") == ["r4"])
            // The exposure helper names the gone item in the previous layout's ids.
            #expect(plan["leave"] as? [String] == ["r1"])
            #expect(plan.entries("enter").map { $0["id"] as! String } == ["r4"])
            model.check(state: try client.state(s))
        }
    }

    @Test func anItemWhoseReuseIdentifierChangedLeavesAndEnters() throws {
        try withService { service in
            let client = try service.connect()
            let card = [TestItem(id: "x", rect: [0, 0, 10, 10], reuse: "card")]
            let banner = [TestItem(id: "x", rect: [0, 0, 10, 10], reuse: "banner")]
            let plain = [TestItem(id: "x", rect: [0, 0, 10, 10], reuse: nil)]
            let s = try client.openSession(#"{"layout":\#(layoutJSON(card)),"viewport":[10,10]}"#).id
            var plan = try put(client, s, #"{"layout":\#(layoutJSON(banner))}"#).json
            #expect(plan.entries("recycle").map { "\($0["id"]!):\($0["view"]!)" } == ["x:1"])
            #expect(plan.entries("create").map { "\($0["id"]!):\($0["view"]!):\($0["reuse"]!)" } == ["x:2:banner"])
            #expect(try client.state(s).object("pool").keys.sorted() == ["card"])
            // Back to card: its own old view, no rebind; the banner view is pooled.
            plan = try put(client, s, #"{"layout":\#(layoutJSON(card))}"#).json
            #expect(plan.entries("reuse").map { "\($0["id"]!):\($0["view"]!):\($0["rebind"] as! Bool)" } == ["x:1:false"])
            #expect(plan.ids("recycle") == ["x"])
            // No identifier: the card view is pooled, a new view made.
            plan = try put(client, s, #"{"layout":\#(layoutJSON(plain))}"#).json
            #expect(plan.ids("recycle") == ["x"] && plan.entries("create").map { $0.int("view") } == [3])
            #expect(plan.entries("create").first?["reuse"] == nil)
            // And back: the unpooled view is discarded.
            plan = try put(client, s, #"{"layout":\#(layoutJSON(card))}"#).json
            #expect(plan.entries("discard").map { $0.int("view") } == [3])
            #expect(plan.entries("reuse").map { $0.int("view") } == [1])
        }
    }

    /// The chat case: 30 older messages inserted above; with `anchor: "visible"` the screen does not
    /// change: the offset shifts by their height, every view stays (only `move`s), by id and inline.
    @Test(arguments: [false, true])
    func chatPrependOf30MessagesLeavesTheScreenStill(inline: Bool) throws {
        try withService { service in
            let client = try service.connect()
            let messages = (0..<200).map { TestItem(id: "m\($0)", rect: [0, Double($0) * 60, 375, 60], reuse: "bubble") }
            let history = (0..<30).map { TestItem(id: "old\($0)", rect: [0, Double($0) * 60, 375, 60], reuse: "bubble") }
            let shifted = messages.map { TestItem(id: $0.id, rect: [0, $0.rect[1] + 1800, 375, 60], reuse: "bubble") }
            let la = try client.postLayout(layoutJSON(messages))
            let s = try client.openSession(#"{"layout":"\#(la)","viewport":[375,600],"offset":[0,3000]}"#).id
            let before = try client.state(s).entries("visible").map { "\($0["id"]!):\($0["view"]!)" }
            let next = layoutJSON(history + shifted)
            let reference = inline ? next : "\"\(try client.postLayout(next))\""
            let reply = try put(client, s, #"{"layout":\#(reference),"anchor":"visible"}"#)
            #expect(reply.status == 200, "\(reply.text)")
            let plan = reply.json
            #expect(plan.int("seq") == 1)
            #expect(plan.doubles("offset") == [0, 4800])
            for list in ["recycle", "discard", "reuse", "create"] { #expect(plan[list] == nil, "\(list)") }
            #expect(plan.entries("move").map { "\($0["id"]!):\($0["view"]!)" } == before)
            let state = try client.state(s)
            #expect(state.entries("visible").map { "\($0["id"]!):\($0["view"]!)" } == before)
            #expect(state.doubles("offset") == [0, 4800])
            #expect(state.object("stats").int("created") == before.count)
            // Without the anchor, the same change keeps the offset: other messages come into view.
            let t = try client.openSession(#"{"layout":"\#(la)","viewport":[375,600],"offset":[0,3000]}"#).id
            let unanchored = try put(client, t, #"{"layout":\#(next)}"#).json
            #expect(unanchored.doubles("offset") == [0, 3000])
            #expect(!unanchored.ids("recycle").isEmpty)
        }
    }

    @Test func seqRetriesAnswerTheSamePlanAndConflictsAre409() throws {
        try withService { service in
            let client = try service.connect()
            let a = [TestItem(id: "x", rect: [0, 0, 10, 10], reuse: "card")]
            let b = [TestItem(id: "x", rect: [0, 5, 10, 10], reuse: "card")]
            let s = try client.openSession(#"{"layout":\#(layoutJSON(a)),"viewport":[10,10]}"#).id
            _ = try client.update(s, #"{"offset":[0,0],"seq":1}"#)
            let first = try put(client, s, #"{"layout":\#(layoutJSON(b)),"seq":2}"#)
            #expect(first.status == 200)
            #expect(first.json.int("seq") == 2)
            #expect(first.json.ids("move") == ["x"])
            // A retry (even naming another layout) answers the same plan and applies nothing.
            let retry = try put(client, s, #"{"layout":\#(layoutJSON(a)),"seq":2}"#)
            #expect(retry.status == 200 && retry.body == first.body)
            let conflict = try put(client, s, #"{"layout":\#(layoutJSON(a)),"seq":7}"#).problem(409)
            #expect(conflict.int("seq") == 2)
            _ = try put(client, s, #"{"layout":\#(layoutJSON(a)),"seq":1}"#).problem(409)
            #expect(try put(client, s, #"{"layout":\#(layoutJSON(a)),"seq":-1}"#).problem(409).int("seq") == 2)
            var state = try client.state(s)
            #expect(state.int("seq") == 2 && state.object("stats").int("updates") == 2)
            // The next viewport update follows the layout change's seq.
            #expect(try client.update(s, #"{"offset":[0,0],"seq":3}"#).status == 200)
            state = try client.state(s)
            #expect(state.int("seq") == 3)
        }
    }

    @Test func layoutReferenceCountsMoveFromTheOldLayoutToTheNew() throws {
        try withService { service in
            let client = try service.connect()
            let la = try client.postLayout(layoutJSON(Self.rows(["a", "b"])))
            let lb = try client.postLayout(layoutJSON(Self.rows(["b", "c"])))
            let s1 = try client.openSession(#"{"layout":"\#(la)","viewport":[375,400]}"#).id
            let s2 = try client.openSession(#"{"layout":"\#(la)","viewport":[375,400]}"#).id
            func sessions(_ id: String) throws -> Int? { try client.get("/v1/layouts/\(id)").json.int("sessions") }
            #expect(try sessions(la) == 2 && sessions(lb) == 0)
            let reply = try put(client, s1, #"{"layout":"\#(lb)"}"#)
            #expect(reply.status == 200)
            #expect(try sessions(la) == 1 && sessions(lb) == 1)
            // An inline layout identical to a stored one is that layout.
            #expect(try put(client, s2, #"{"layout":\#(layoutJSON(Self.rows(["b", "c"])))}"#).status == 200)
            #expect(try client.state(s2)["layout"] as? String == lb)
            #expect(try sessions(la) == 0 && sessions(lb) == 2)
            // Moving to the layout it already has keeps the count.
            #expect(try put(client, s2, #"{"layout":"\#(lb)"}"#).status == 200)
            #expect(try sessions(lb) == 2)
            #expect(try client.delete("/v1/sessions/\(s1)").status == 204)
            #expect(try sessions(lb) == 1)
        }
    }

    @Test func errorsOnTheLayoutPath() throws {
        try withService { service in
            let client = try service.connect()
            let la = try client.postLayout(layoutJSON(Self.rows(["a", "b"])))
            let s = try client.openSession(#"{"layout":"\#(la)","viewport":[375,400]}"#).id
            let path = "/v1/sessions/\(s)/layout"
            // Unknown layout id in the body: 422 naming it.
            let unknown = try put(client, s, #"{"layout":"0000000000000000000000000000000000000000000000000000000000000000"}"#).problem(422)
            #expect(names(unknown, "layout", value: "0000000000000000000000000000000000000000000000000000000000000000"))
            // Bad bodies.
            _ = try put(client, s, #"{"layout":"\#(la)","anchor":"top"}"#).problem(400)
            _ = try put(client, s, #"{"layout":"\#(la)","anchr":"visible"}"#).problem(400)
            _ = try put(client, s, #"{"anchor":"visible"}"#).problem(400)
            _ = try put(client, s, #"{"layout":{"items":[{"id":"a","rect":[0,0,-1,1]}]}}"#).problem(422)
            _ = try put(client, s, #"{"layout":{"items":[{"id":"a","rect":[0,0,1,1]},{"id":"a","rect":[0,0,1,1]}]}}"#).problem(422)
            // 404, 405 (Allow: GET, PUT, PATCH), 415.
            _ = try client.send("PUT", "/v1/sessions/nope/layout", json: #"{"layout":"\#(la)"}"#).problem(404)
            for method in ["POST", "DELETE"] {
                let reply = try client.send(method, path, json: #"{"layout":"\#(la)"}"#)
                _ = reply.problem(405)
                #expect(reply.header("Allow") == "GET, PUT, PATCH", "\(method)")
            }
            _ = try client.send("PUT", path, json: #"{"layout":"\#(la)"}"#, contentType: "text/plain").problem(415)
            _ = try client.send("PUT", path, json: #"{"layout":"\#(la)"}"#, contentType: "application/x-ndjson").problem(415)
            // Without a Content-Type the body is JSON.
            #expect(try client.send("PUT", path, json: #"{"layout":"\#(la)"}"#, contentType: nil).status == 200)
            // Nothing changed on the errors: only that last change was applied.
            #expect(try client.state(s).int("seq") == 1)
            #expect(try client.get("/v1/layouts/\(la)").json.int("sessions") == 1)
        }
    }

    /// A layout change is an update without velocity: it cancels every outstanding prediction that
    /// did not enter, including the predicted items the new layout removed (named, like `leave`,
    /// in the previous layout's ids and order).
    @Test func aLayoutChangeCancelsEveryOutstandingPredictionIncludingRemovedItems() throws {
        try withService { service in
            let client = try service.connect()
            let a = Self.rows((0..<20).map { "r\($0)" })
            let s = try client.openSession(#"{"layout":\#(layoutJSON(a)),"viewport":[375,500],"buffer":0,"prefetch":1}"#).id
            let predicted = try client.update(s, #"{"offset":[0,0],"velocity":[0,350],"phase":"dragging"}"#).json
            #expect(predicted["prefetch"] as? [String] == ["r5", "r6", "r7", "r8"])
            // r6 removed; r8 moved onto the screen (it enters: no cancel); r5 and r7 stay off screen.
            var b = Self.rows(["r0", "r1", "r2", "r3", "r4", "r5", "r7"] + (9..<20).map { "r\($0)" })
            b.insert(TestItem(id: "r8", rect: [0, 50, 10, 10], reuse: "row"), at: 1)
            let reply = try put(client, s, #"{"layout":\#(layoutJSON(b))}"#)
            #expect(reply.status == 200, "\(reply.text)")
            let plan = reply.json
            #expect(plan.ids("create") + plan.ids("reuse") == ["r8"])
            #expect(plan["cancelPrefetch"] as? [String] == ["r5", "r6", "r7"])
            // Nothing is outstanding any more.
            let next = try client.update(s, #"{"offset":[0,0]}"#).json
            #expect(next["cancelPrefetch"] == nil)
        }
    }

    @Test func aLoopingSessionRefusesALayoutChange() throws {
        try withService { service in
            let client = try service.connect()
            let pages = (0..<5).map { TestItem(id: "p\($0)", rect: [Double($0) * 100, 0, 100, 100], reuse: "page") }
            let la = try client.postLayout(layoutJSON(pages))
            let s = try client.openSession(#"{"layout":"\#(la)","viewport":[100,100],"buffer":50,"loop":true,"paging":{"mode":"page","axis":"x"}}"#).id
            let problem = try put(client, s, #"{"layout":\#(layoutJSON(Array(pages.prefix(4))))}"#).problem(422)
            #expect(names(problem, "layout"), "\(problem)")
            let state = try client.state(s)
            #expect(state.int("seq") == 0 && state["layout"] as? String == la)
            #expect(try client.get("/v1/layouts/\(la)").json.int("sessions") == 1)
        }
    }

    /// Derives a new layout: deletions, insertions (some above everything), moved and resized
    /// items, changed reuse identifiers.
    static func mutate(_ items: [TestItem], generation: Int, using g: inout SplitMix) -> [TestItem] {
        var out: [TestItem] = []
        let prepend = Int.random(in: 0..<3, using: &g) == 0 ? Int.random(in: 1...8, using: &g) : 0
        let shift = Double(prepend) * 50
        for k in 0..<prepend {
            out.append(TestItem(id: "g\(generation)-top\(k)", rect: [0, Double(k) * 50, 375, 50], reuse: "a"))
        }
        for var item in items {
            switch Int.random(in: 0..<20, using: &g) {
            case 0, 1: continue
            case 2: item.rect[1] = max(0, item.rect[1] + Double(Int.random(in: -40...40, using: &g)))
            case 3: item.rect[3] = Double(Int.random(in: 0...150, using: &g))
            case 4: item.reuse = ["a", "b", "c", nil, "d"].randomElement(using: &g)!
            case 5: item.rect[0] = Double(Int.random(in: 0...200, using: &g))
            case 6:
                out.append(TestItem(id: "g\(generation)-\(out.count)", rect: [0, item.rect[1] + shift, 375, 30], reuse: ["a", "b", nil].randomElement(using: &g)!))
            default: break
            }
            item.rect[1] += shift
            out.append(item)
        }
        return out
    }

    static let capChoices: [(max: Int?, perReuse: [String: Int])?] = [nil, (max: 2, perReuse: [:]), (max: nil, perReuse: ["a": 0, "b": 3]), (max: 1, perReuse: ["c": 5])]

    static func poolJSON(_ caps: (max: Int?, perReuse: [String: Int])?) -> String {
        guard let caps else { return "" }
        let per = caps.perReuse.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",")
        return #","pool":{\#(caps.max.map { #""max":\#($0),"# } ?? "")"perReuse":{\#(per)}}"#
    }

    /// Random layout swaps (by id and inline, both anchors, with and without seq), interleaved with
    /// scrolling, replayed by the id-keyed model that checks every plan rule and the state.
    @Test(arguments: 0..<8)
    func randomLayoutSwapsFollowEveryPlanRule(seed: Int) throws {
        try withService { service in
            let client = try service.connect()
            var g = SplitMix(seed: UInt64(seed) &+ 77)
            var items: [TestItem] = (0..<Int.random(in: 0...150, using: &g)).map { i in
                TestItem(id: "i\(i)", rect: [Double(Int.random(in: 0...100, using: &g)), Double(i) * 40, 275, Double(Int.random(in: 0...120, using: &g))],
                         reuse: ["a", "b", "c", nil].randomElement(using: &g)!)
            }
            let caps = Self.capChoices[seed % Self.capChoices.count]
            let viewport = [375.0, 500.0]
            let buffer = Double(Int.random(in: 0...60, using: &g))
            let offset = [0.0, Double(Int.random(in: 0...2000, using: &g))]
            let layout = try client.postLayout(layoutJSON(items))
            let (s, opened) = try client.openSession(
                #"{"layout":"\#(layout)","viewport":[375,500],"offset":[0,\#(number(offset[1]))],"buffer":\#(number(buffer))\#(Self.poolJSON(caps)),"exposure":true,"lazyLoad":true}"#)
            var model = IDModel(items: items, offset: offset, viewport: viewport, buffer: buffer, caps: caps)
            let firstPlan = opened.object("plan")
            model.open(firstPlan)
            // Helpers followed by id: exposure counts, loads, selection.
            var helpers = HelperModel()
            helpers.check(firstPlan, model: model, before: nil, leaving: [], "open")
            for generation in 1...50 {
                let before = (items: model.items, offset: model.offset)
                var plan: [String: Any]
                var leaving: [String]
                if Int.random(in: 0..<3, using: &g) == 0 {
                    let y = model.offset[1] + Double(Int.random(in: -300...300, using: &g))
                    var select = ""
                    if Int.random(in: 0..<3, using: &g) == 0 {
                        if let item = items.randomElement(using: &g), Bool.random(using: &g) {
                            select = #","select":"\#(item.id)""#
                            helpers.selected = item.id
                        } else {
                            select = #","select":null"#
                            helpers.selected = nil
                        }
                    }
                    let reply = try client.update(s, #"{"offset":[0,\#(number(y))]\#(select)}"#)
                    #expect(reply.status == 200)
                    plan = reply.json
                    leaving = model.apply(plan, to: items, offset: [0, y])
                } else {
                    let next = Self.mutate(items, generation: generation, using: &g)
                    let anchor = Bool.random(using: &g)
                    let expectedOffset = anchor ? model.anchoredOffset(to: next) : model.offset
                    let json = layoutJSON(next)
                    let reference = Bool.random(using: &g) ? json : "\"\(try client.postLayout(json))\""
                    let seq = Bool.random(using: &g) ? #","seq":\#(model.seq + 1)"# : ""
                    let reply = try put(client, s, #"{"layout":\#(reference)\#(anchor ? #","anchor":"visible""# : (Bool.random(using: &g) ? #","anchor":"none""# : ""))\#(seq)}"#)
                    #expect(reply.status == 200, "seed \(seed) generation \(generation): \(reply.text)")
                    plan = reply.json
                    leaving = model.apply(plan, to: next, offset: expectedOffset)
                    items = next
                    if let selected = helpers.selected, !next.contains(where: { $0.id == selected }) { helpers.selected = nil }
                }
                helpers.check(plan, model: model, before: before, leaving: leaving, "seed \(seed) generation \(generation)")
                model.check(state: try client.state(s))
            }
        }
    }
}

/// `exposure` and `lazyLoad` (every update here is idle) and `select`, followed by item id across
/// layouts: docs/api.md "Scrolling helpers".
struct HelperModel {
    var times: [String: Int] = [:]
    var loaded: Set<String> = []
    var selected: String?

    mutating func check(
        _ plan: [String: Any], model: IDModel, before: (items: [TestItem], offset: [Double])?, leaving: [String], _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let screenAfter = materialized(model.items, offset: model.offset, viewport: model.viewport, buffer: 0)
        let screenBefore = before.map { materialized($0.items, offset: $0.offset, viewport: model.viewport, buffer: 0) } ?? []
        let stayed = Set(screenBefore).intersection(screenAfter)
        var enter: [String] = []
        for id in screenAfter where !stayed.contains(id) {
            times[id, default: 0] += 1
            enter.append("\(id):\(times[id]!)")
        }
        #expect(plan.entries("enter").map { "\($0["id"] as? String ?? "?"):\($0.int("times") ?? 0)" } == enter, "enter \(context)", sourceLocation: sourceLocation)
        #expect(plan["leave"] as? [String] ?? [] == screenBefore.filter { !stayed.contains($0) }, "leave \(context)", sourceLocation: sourceLocation)
        // Idle: items that left are no longer loaded; every materialized item not loaded loads.
        for id in leaving { loaded.remove(id) }
        let shown = materialized(model.items, offset: model.offset, viewport: model.viewport, buffer: model.buffer)
        let load = shown.filter { !loaded.contains($0) }
        loaded.formUnion(load)
        #expect(plan["load"] as? [String] ?? [] == load, "load \(context)", sourceLocation: sourceLocation)
        for entry in plan.entries("create") + plan.entries("reuse") {
            let isSelected = entry["id"] as? String == selected
            #expect((entry["selected"] as? Bool ?? false) == isSelected, "selected \(context)", sourceLocation: sourceLocation)
        }
    }
}
