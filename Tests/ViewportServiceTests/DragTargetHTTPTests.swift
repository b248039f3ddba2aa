import Foundation
import Testing
import ViewportService
import ViewportTestSupport

// docs/api.md "Paging and deceleration" over HTTP: a reference implementation of every drag-target
// formula, written here from docs/api.md's text (not from the core), checked against the service on
// random drags sent as NDJSON streams.

/// Seeded random numbers: the seed is printed and can be replayed (see `TestRandom`).
typealias SplitMix = TestRandom

/// A session's paging configuration as the test sent it, and docs/api.md's formulas on it.
struct DragReference {
    enum Mode: String, CaseIterable { case none, page, snap, items }

    var mode: Mode
    /// `paging.axis` as sent (nil: automatic).
    var axis: Int?
    /// `paging.size` as sent (nil: the viewport size).
    var pageSize: [Double]?
    /// `paging.decelerationRate` as sent (nil: 0.998).
    var rate: Double?
    var viewport: [Double]
    var contentSize: [Double]
    /// [top, left, bottom, right]
    var insets: [Double]
    /// Item rects (for the leading edges of the mode `items`).
    var rects: [[Double]]

    /// "by default `y` if the content is taller than the viewport, else `x`" (0 = x, 1 = y).
    var pagingAxis: Int { axis ?? (contentSize[1] > viewport[1] ? 1 : 0) }

    /// "`[-insets.top, contentSize.h + insets.bottom − viewport.h]` (likewise on x, with left and
    /// right)"; "when the content is shorter than the viewport the scrollable range is the single
    /// offset at its lower end".
    func range(_ a: Int) -> (lower: Double, upper: Double) {
        let lead = a == 1 ? insets[0] : insets[1]
        let trail = a == 1 ? insets[2] : insets[3]
        let lower = -lead
        let upper = contentSize[a] + trail - viewport[a]
        return (lower, max(lower, upper))
    }

    func clamp(_ value: Double, _ a: Int) -> Double {
        let r = range(a)
        return min(max(value, r.lower), r.upper)
    }

    /// The natural resting offset `p = o + v/1000 · r/(1 − r)`, read left to right.
    func naturalRest(o: Double, v: Double) -> Double {
        let r = rate ?? 0.998
        return o + v / 1000 * r / (1 - r)
    }

    /// The acceptable answers (target along the axis, page) for a drag. Usually one; two only when
    /// `p` lies so close to a decision boundary (snap's half page, the midpoint between two item
    /// edges) that evaluating `v/1000 · r/(1 − r)` in another order (docs/api.md gives the formula, not
    /// the order of its floating-point operations) could flip the decision.
    func expected(o: Double, b: Double, v: Double) -> [(target: Double, page: Int?)] {
        let a = pagingAxis
        let p = naturalRest(o: o, v: v)
        // A few ulps of p: the most a reordering of four operations can move it.
        let eps = max(abs(p), abs(o), 1) * 1e-12
        let s = (pageSize ?? viewport)[a]
        let pages = (contentSize[a] / s).rounded(.up)
        func pageTarget(_ k: Double) -> (Double, Int?) {
            let kept = max(0, min(k, pages - 1))
            return (clamp(kept * s, a), Int(kept))
        }
        switch mode {
        case .none:
            return [(clamp(p, a), nil)]
        case .page:
            // Exact: no p involved.
            let k0 = ((b + s / 2) / s).rounded(.down)
            let k: Double
            if v == 0 {
                k = ((o + s / 2) / s).rounded(.down)
            } else {
                let vote = (v > 0 ? 1.0 : -1.0) + (o > b ? 1.0 : -1.0)
                k = k0 + (vote > 0 ? 1 : vote < 0 ? -1 : 0)
            }
            return [pageTarget(k)]
        case .snap:
            let ks = Set([p - eps, p, p + eps].map { ($0 / s + 1 / 2).rounded(.down) })
            return ks.sorted().map(pageTarget)
        case .items:
            let edges = rects.map { $0[a] }
            func nearest(_ q: Double) -> Double {
                var best = edges[0]
                for e in edges where abs(e - q) < abs(best - q) || (abs(e - q) == abs(best - q) && e < best) { best = e }
                return best
            }
            let candidates = Set([p - eps, p, p + eps].map(nearest))
            return candidates.sorted().map { (clamp($0, a), nil) }
        }
    }

    /// The session-opening JSON.
    func openJSON(layout: String) -> String {
        var paging = #""mode":"\#(mode.rawValue)""#
        if let axis { paging += #","axis":"\#(axis == 0 ? "x" : "y")""# }
        if let pageSize { paging += #","size":[\#(pageSize.map(number).joined(separator: ","))]"# }
        if let rate { paging += #","decelerationRate":\#(rate)"# }
        return #"{"layout":"\#(layout)","viewport":[\#(viewport.map(number).joined(separator: ","))],"insets":[\#(insets.map(number).joined(separator: ","))],"buffer":0,"paging":{\#(paging)}}"#
    }
}

@Suite struct DragTargetHTTPTests {
    /// A random session: mode, axis (auto/x/y), page size (default/explicit, often smaller than
    /// the viewport, sometimes fractional), deceleration rate, insets, content sometimes shorter
    /// than the viewport, items of random rects.
    static func randomReference(using g: inout SplitMix) -> DragReference {
        let viewport = [Double(Int.random(in: 200...420, using: &g)), Double(Int.random(in: 250...700, using: &g))]
        let shape = Int.random(in: 0..<4, using: &g)
        // 0: tall, 1: wide, 2: shorter than the viewport both ways, 3: tall and wide.
        let content: [Double] = switch shape {
        case 0: [viewport[0], Double(Int.random(in: 1...12, using: &g)) * viewport[1] + Double(Int.random(in: 0...199, using: &g))]
        case 1: [Double(Int.random(in: 1...12, using: &g)) * viewport[0] + Double(Int.random(in: 0...199, using: &g)), viewport[1]]
        case 2: [Double(Int.random(in: 10...Int(viewport[0]), using: &g)), Double(Int.random(in: 10...Int(viewport[1]), using: &g))]
        default: [viewport[0] * 3 + 17, viewport[1] * 4 + 33]
        }
        var rects: [[Double]] = []
        for _ in 0..<Int.random(in: 1...40, using: &g) {
            let w = Double(Int.random(in: 0...150, using: &g)), h = Double(Int.random(in: 0...150, using: &g))
            let x = (Double(Int.random(in: 0...Int(max(0, content[0] - w)) * 2, using: &g)) / 2)
            let y = (Double(Int.random(in: 0...Int(max(0, content[1] - h)) * 2, using: &g)) / 2)
            rects.append([x, y, w, h])
        }
        let mode = DragReference.Mode.allCases.randomElement(using: &g)!
        let axis: Int? = [nil, nil, 0, 1].randomElement(using: &g)!
        var pageSize: [Double]?
        switch Int.random(in: 0..<4, using: &g) {
        case 0: pageSize = nil
        case 1: pageSize = [Double(Int.random(in: 40...400, using: &g)), Double(Int.random(in: 40...600, using: &g))]
        case 2: pageSize = [viewport[0] * 2 / 3, viewport[1] * 2 / 3]  // smaller than the viewport
        default: pageSize = [Double(Int.random(in: 80...1000, using: &g)) / 4 + 0.125, Double(Int.random(in: 80...1000, using: &g)) / 4 + 0.375]
        }
        let rate: Double? = [nil, 0.998, 0.99, 0.9, 0.5, Double.random(in: 0.01...0.999, using: &g)].randomElement(using: &g)!
        let insets: [Double] = Bool.random(using: &g)
            ? [0, 0, 0, 0]
            : (0..<4).map { _ in Double(Int.random(in: 0...80, using: &g)) }
        return DragReference(mode: mode, axis: axis, pageSize: pageSize, rate: rate, viewport: viewport, contentSize: content, insets: insets, rects: rects)
    }

    /// One update line and, for a drag-end, the answers docs/api.md allows.
    struct Step {
        var line: String
        var expected: [(target: [Double], page: Int?)]?
    }

    /// Random gestures: drag-begin, draggings, drag-end (with and without a drag-begin before it),
    /// decelerating, idle jumps; offsets past both ends, zero velocities included.
    static func randomSteps(_ ref: DragReference, count: Int, using g: inout SplitMix) -> [Step] {
        var offset = [0.0, 0.0]
        var begin: [Double]?
        var steps: [Step] = []
        let a = ref.pagingAxis
        func randomOffset() -> [Double] {
            (0..<2).map { i in Double(Int.random(in: -200...Int(ref.contentSize[i] + 200) * 4, using: &g)) / 4 }
        }
        func line(_ o: [Double], _ v: [Double]?, _ phase: String) -> String {
            var s = #"{"offset":[\#(o.map(number).joined(separator: ","))]"#
            if let v { s += #","velocity":[\#(v.map(number).joined(separator: ","))]"# }
            return s + #","phase":"\#(phase)"}"#
        }
        while steps.count < count {
            if Int.random(in: 0..<5, using: &g) != 0 {
                // A drag-begin (usually).
                offset = randomOffset()
                begin = offset
                steps.append(Step(line: line(offset, nil, "drag-begin")))
            }
            for _ in 0..<Int.random(in: 0...2, using: &g) {
                offset[a] += Double(Int.random(in: -600...600, using: &g)) / 2
                offset[1 - a] += Double(Int.random(in: -20...20, using: &g))
                steps.append(Step(line: line(offset, [0, 0], "dragging")))
            }
            // The drag-end.
            let o = Int.random(in: 0..<4, using: &g) == 0 ? randomOffset() : offset
            var v = [0.0, 0.0]
            v[a] = [0, Double(Int.random(in: -5000...5000, using: &g)), Double(Int.random(in: -300...300, using: &g)) / 8].randomElement(using: &g)!
            v[1 - a] = Double(Int.random(in: -500...500, using: &g))
            let b = begin ?? offset  // without a drag-begin: the offset before the drag-end
            let expected = ref.expected(o: o[a], b: b[a], v: v[a]).map { answer -> (target: [Double], page: Int?) in
                var target = [0.0, 0.0]
                target[a] = answer.target
                target[1 - a] = ref.clamp(o[1 - a], 1 - a)
                return (target, answer.page)
            }
            let sendVelocity = Int.random(in: 0..<8, using: &g) != 0 || v[a] != 0
            steps.append(Step(line: line(o, sendVelocity ? v : nil, "drag-end"), expected: sendVelocity ? expected : nil))
            if !sendVelocity {
                // No velocity is a velocity of 0.
                steps[steps.count - 1].expected = ref.expected(o: o[a], b: b[a], v: 0).map { answer in
                    var target = [0.0, 0.0]
                    target[a] = answer.target
                    target[1 - a] = ref.clamp(o[1 - a], 1 - a)
                    return (target, answer.page)
                }
            }
            offset = o
            begin = nil
            if Bool.random(using: &g) {
                offset[a] += Double(Int.random(in: -100...100, using: &g))
                steps.append(Step(line: line(offset, v, "decelerating")))
            }
            if Bool.random(using: &g) {
                offset = randomOffset()
                steps.append(Step(line: line(offset, nil, "idle")))
            }
        }
        return steps
    }

    @Test(arguments: 0..<6)
    func randomDragsMatchAPIFormulas(batch: Int) throws {
        try withService { service in
            let client = try service.connect()
            var drags = 0
            var modes: [DragReference.Mode: Int] = [:]
            for k in 0..<12 {
                let seed = UInt64(batch * 1000 + k)
                var g = SplitMix(seed: seed)
                let ref = Self.randomReference(using: &g)
                let items = ref.rects.enumerated().map { TestItem(id: "i\($0.offset)", rect: $0.element, reuse: "r") }
                let layout = try client.postLayout(layoutJSON(items, contentSize: ref.contentSize))
                let session = try client.openSession(ref.openJSON(layout: layout)).id
                let steps = Self.randomSteps(ref, count: 120, using: &g)
                let reply = try client.send("POST", "/v1/sessions/\(session)/viewport", body: Array(steps.map(\.line).joined(separator: "\n").utf8), contentType: "application/x-ndjson")
                #expect(reply.status == 200)
                let lines = reply.lines
                try #require(lines.count == steps.count, "seed \(seed): \(reply.text.suffix(300))")
                for (i, step) in steps.enumerated() {
                    let plan = lines[i]
                    guard let expected = step.expected else {
                        #expect(plan["target"] == nil && plan["page"] == nil, "seed \(seed) line \(i + 1)")
                        continue
                    }
                    drags += 1
                    modes[ref.mode, default: 0] += 1
                    let target = plan.doubles("target")
                    let page = plan["page"] as? Int
                    let matches = expected.contains { e in
                        guard target.count == 2, page == e.page, target[1 - ref.pagingAxis] == e.target[1 - ref.pagingAxis] else { return false }
                        let t = target[ref.pagingAxis], want = e.target[ref.pagingAxis]
                        if ref.mode == .none {
                            // p itself: tolerance for the order of p's operations (see expected(o:b:v:)).
                            return abs(t - want) <= max(abs(want), 1) * 1e-12
                        }
                        return t == want  // page, snap, items: multiples of s or item edges, clamped: exact
                    }
                    #expect(matches, "seed \(seed) line \(i + 1) \(ref.mode) axis \(ref.pagingAxis) \(step.line): got \(target) page \(String(describing: page)), expected \(expected)")
                    if !matches { return }
                }
                #expect(try client.delete("/v1/sessions/\(session)").status == 204)
            }
            #expect(drags >= 250)
            #expect(modes.count >= 3)
        }
    }

    /// `b` is the last drag-begin's offset; without one (or after the drag-end that used it), the
    /// offset before the drag-end; and `page` is absent outside the modes page and snap.
    @Test func beginIsTheLastDragBeginElseTheOffsetBeforeTheDragEnd() throws {
        try withService { service in
            let client = try service.connect()
            let items = (0..<20).map { TestItem(id: "p\($0)", rect: [Double($0) * 100, 0, 100, 100], reuse: "p") }
            let layout = try client.postLayout(layoutJSON(items))
            let session = try client.openSession(#"{"layout":"\#(layout)","viewport":[100,100],"paging":{"mode":"page"}}"#).id
            // drag-begin at 500 (k0 = 5), drag to 520, fling forward: page 6.
            _ = try client.update(session, #"{"offset":[500,0],"phase":"drag-begin"}"#)
            _ = try client.update(session, #"{"offset":[510,0],"phase":"dragging"}"#)
            var plan = try client.update(session, #"{"offset":[520,0],"velocity":[10,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [600, 0] && plan.int("page") == 6)
            // A drag-end without a drag-begin: b is 520 (the offset before), o = 530, v > 0: page 6.
            plan = try client.update(session, #"{"offset":[530,0],"velocity":[10,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [600, 0] && plan.int("page") == 6)
            // b = 530 (k0 = 5), o = 460 < b, v < 0: page 4. Had b been the old drag-begin (500)... also 4;
            // so move: offset 749 (idle), then drag-end at 760 with v < 0: b = 749 (k0 = 7), votes cancel: 7.
            _ = try client.update(session, #"{"offset":[749,0]}"#)
            plan = try client.update(session, #"{"offset":[760,0],"velocity":[-10,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [700, 0] && plan.int("page") == 7)
            // A drag-begin, then a non-drag update in between: b stays the drag-begin's.
            _ = try client.update(session, #"{"offset":[300,0],"phase":"drag-begin"}"#)
            _ = try client.update(session, #"{"offset":[340,0],"phase":"dragging"}"#)
            _ = try client.update(session, #"{"offset":[390,0],"phase":"dragging"}"#)
            plan = try client.update(session, #"{"offset":[420,0],"velocity":[5,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [400, 0] && plan.int("page") == 4)
            // Other phases carry no target.
            for phase in ["drag-begin", "dragging", "decelerating", "idle"] {
                let p = try client.update(session, #"{"offset":[420,0],"velocity":[5,0],"phase":"\#(phase)"}"#).json
                #expect(p["target"] == nil && p["page"] == nil, "\(phase)")
            }
            // none and items: a target, no page.
            let none = try client.openSession(#"{"layout":"\#(layout)","viewport":[100,100]}"#).id
            plan = try client.update(none, #"{"offset":[100,0],"velocity":[1000,0],"phase":"drag-end"}"#).json
            // p = 100 + 1 · 0.998/0.002 = 599 (within a few ulps)
            #expect(abs(plan.doubles("target")[0] - 599) < 1e-9 && plan["page"] == nil)
            let itemsMode = try client.openSession(#"{"layout":"\#(layout)","viewport":[100,100],"paging":{"mode":"items"}}"#).id
            plan = try client.update(itemsMode, #"{"offset":[100,0],"velocity":[1000,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [600, 0] && plan["page"] == nil)
            // A tie between edges 100 and 200 (p = 150 with v = 0) goes to the smaller.
            plan = try client.update(itemsMode, #"{"offset":[150,0],"phase":"drag-end"}"#).json
            #expect(plan.doubles("target") == [100, 0])
        }
    }
}
