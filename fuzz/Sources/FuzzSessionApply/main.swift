#if canImport(Glibc)
import Glibc
#endif
import FuzzClientModel
import FuzzServiceChecks
import FuzzSupport
import ViewportCore
@testable import ViewportService

// ViewportSession.apply (and changeLayout) driven by updates decoded from fuzz bytes: a random
// layout (explicit items or generated sections, sticky headers), a random session configuration
// (paging, helpers, links, loop, pool caps) and a sequence of updates (offsets, sizes, velocities,
// phases, scrollTo, select, seq retries and conflicts, layout changes), extremes included.
// Each plan is applied to a client model that knows the layouts only from its own specs:
// - a refused update changes nothing;
// - a retry answers the last plan and changes nothing;
// - a new view handle is never used before in the session; a view shows one item at a time;
// - leaving items had the view the plan names and lose it; entering items were not shown and get
//   one; moved items keep theirs;
// - a pooled view is reused only for an item of the reuse identifier it was created for, and only
//   from the pool; `rebind` is false exactly when it last showed the same item;
// - pools stay within their caps; the session's visible items, pools and live view count match
//   the model's;
// - without loop, the materialized items are those strictly intersecting the viewport grown by
//   the buffer (computed here), plus at most one pinned sticky header;
// - lists are in layout order, and every number in the encoded plan and state is finite.

/// `FUZZ_TRACE=1`: print the layout, the configuration, each update and each plan (to turn a
/// crash into a test).
let tracing = getenv("FUZZ_TRACE") != nil
func trace(_ message: @autoclosure () -> String) { if tracing { log(message()) } }

let reuseChoices: [String?] = ["a", "b", "c", nil, ""]

/// Builds a layout from the input, with the model's view of it (or nil when the service refuses it).
func makeLayout(_ input: inout FuzzInput, idSpace: Int) -> (Layout, ModelLayout)? {
    var model = ModelLayout()
    var builder = LayoutBuilder(maxItems: 3000)
    if input.byte() % 3 != 0 {
        let count = input.int(in: 0...48)
        for _ in 0..<count {
            let id = "i\(input.int(in: 0...idSpace))"
            let rect = Rect(x: input.coordinate(), y: input.coordinate(), width: input.extent(), height: input.extent())
            let reuse = input.pick(reuseChoices)
            let sticky = input.byte() % 8 == 0
            do { try builder.append(id: id, rect: rect, reuse: reuse, sticky: sticky) } catch { return nil }
            model.ids.append(id)
            model.rects.append(rect)
            if let reuse, !reuse.isEmpty { model.reuse[id] = reuse }
            if sticky { model.sticky.insert(id) }
        }
        if input.byte() % 4 == 0 {
            do { try builder.setContentSize(Size(width: input.extent(scale: 1000), height: input.extent(scale: 1000))) } catch { return nil }
        }
    } else {
        model.explicit = false
        let axis: Axis = input.bool() ? .x : .y
        let insets = input.bool() ? Insets.zero : Insets(top: input.extent(), left: input.extent(), bottom: input.extent(), right: input.extent())
        let spacing = input.bool() ? 0 : input.extent()
        var stack = SectionStack(axis: axis, insets: insets, spacing: spacing)
        let sectionCount = input.int(in: 1...4)
        for index in 0..<sectionCount {
            let sectionID = input.bool() ? "s\(input.int(in: 0...3))" : nil
            let reuse = input.pick(reuseChoices)
            let along: Axis? = input.pick([nil, .x, .y])
            let shape: SectionSpec.Shape
            var count = 0
            switch input.byte() % 5 {
            case 0:
                count = input.int(in: 0...200)
                shape = .list(axis: along, count: count, size: Size(width: input.extent(), height: input.extent()), spacing: input.extent(scale: 10))
            case 1:
                let sizes = (0..<input.int(in: 0...40)).map { _ in Size(width: input.extent(), height: input.extent()) }
                count = sizes.count
                shape = .sizedList(axis: along, sizes: sizes, spacing: input.extent(scale: 10))
            case 2:
                count = input.int(in: 0...200)
                shape = .grid(columns: input.int(in: 0...6), count: count, itemSize: Size(width: input.extent(), height: input.extent()),
                    spacing: Size(width: input.extent(scale: 10), height: input.extent(scale: 10)))
            case 3:
                count = input.int(in: 0...20)
                shape = .pages(axis: along, count: count, size: Size(width: input.extent(scale: 400), height: input.extent(scale: 400)))
            default:
                let items = (0..<input.int(in: 0...6)).map { _ in
                    SectionSpec.Item(
                        id: "h\(input.int(in: 0...idSpace))", rect: Rect(x: input.coordinate(), y: input.coordinate(), width: input.extent(), height: input.extent()),
                        reuse: input.pick(reuseChoices), sticky: input.byte() % 3 == 0)
                }
                shape = .items(items)
                for item in items {
                    model.ids.append(item.id)
                    if let r = item.reuse, !r.isEmpty { model.reuse[item.id] = r }
                    if item.sticky { model.sticky.insert(item.id) }
                }
            }
            do { try stack.append(SectionSpec(id: sectionID, reuse: reuse, shape: shape), to: &builder) } catch { return nil }
            if case .items = shape { continue }
            let base = sectionID ?? String(index)
            for k in 0..<count {
                let id = "\(base)-\(k)"
                model.ids.append(id)
                if let reuse, !reuse.isEmpty { model.reuse[id] = reuse }
            }
        }
        do { try builder.setTrailingPadding(stack.trailingPadding) } catch { return nil }
    }
    guard let layout = try? builder.build() else { return nil }
    trace("layout \(layout.count) items, content \(layout.contentSize): " + (0..<layout.count).map { "\(model.ids[$0]) \(layout.rects[$0]) \(model.reuse[model.ids[$0]] ?? "-")\(model.sticky.contains(model.ids[$0]) ? " sticky" : "")" }.joined(separator: "; "))
    // The builder keeps the items in the order given, with the ids given.
    require(layout.count == model.ids.count, "layout has \(layout.count) items, the specs \(model.ids.count)")
    for (k, id) in model.ids.enumerated() { require(layout.id(at: k) == id, "item \(k) is \(layout.id(at: k)), not \(id)") }
    if model.explicit {
        for (k, r) in model.rects.enumerated() { require(layout.rects[k] == r, "item \(k) rect \(layout.rects[k]), not \(r)") }
    } else {
        model.rects = (0..<layout.count).map { layout.rects[$0] }
    }
    return (layout, model)
}

/// `FUZZ_SKIP_FINITE=1`: skip the finiteness checks, to explore the other properties past known
/// non-finite findings (never in CI).
let skipFinite = getenv("FUZZ_SKIP_FINITE") != nil

func requireFinite(_ plan: Plan, layout: Layout, _ session: ViewportSession, step: Int) {
    if skipFinite { return }
    var w = JSONWriter()
    PlanEncoder.encode(plan, layout: layout, into: &w)
    requireFiniteJSON(w.bytes, "plan \(step)")
    var s = JSONWriter()
    PlanEncoder.encodeState(session, id: "s", into: &s)
    requireFiniteJSON(s.bytes, "state after plan \(step)")
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    guard let (layout, model) = makeLayout(&input, idSpace: 60) else { return }
    var configuration = SessionConfiguration(viewport: Size(width: input.extent(scale: 400), height: input.extent(scale: 600)))
    configuration.offset = Point(x: input.coordinate(), y: input.coordinate())
    configuration.buffer = input.pick([0, 20, 37.5, Buffer(input.extent()), Buffer(ahead: input.extent(), behind: input.extent())])
    if input.byte() % 4 == 0 { configuration.insets = Insets(top: input.extent(), left: 0, bottom: input.extent(), right: 0) }
    configuration.pool = input.pick([PoolCaps(), PoolCaps(max: 0), PoolCaps(max: 1), PoolCaps(max: 3, perReuse: ["a": 0, "b": 5]), PoolCaps(perReuse: ["c": 1])])
    configuration.maxViews = 1500
    // Client time (docs/api.md: monotonic, refused when it goes back) and scrollTo on open.
    var clock = input.bool() ? Double(input.int(in: 0...1000)) : nil
    configuration.time = clock
    if input.byte() % 8 == 0 {
        configuration.scrollTo = ScrollTarget(item: input.int(in: -1...model.ids.count), align: input.pick(ScrollAlignment.allCases), margin: input.pick([0, 8, input.extent(), -1]))
    }
    if input.bool() {
        configuration.paging.mode = input.pick(PagingMode.allCases)
        configuration.paging.axis = input.pick([nil, .x, .y])
        if input.bool() { configuration.paging.size = Size(width: input.extent(scale: 400), height: input.extent(scale: 400)) }
        configuration.paging.decelerationRate = input.pick([0.998, 0.99, 0.5, 0.999_999, 1 - 1e-15, 1e-300, Double(input.int(in: 1...65_534)) / 65_535])
    }
    if input.bool() {
        configuration.prefetch = input.bool() ? input.extent(scale: 1) : nil
        configuration.lazyLoad = input.bool()
        configuration.exposure = input.bool()
        if configuration.exposure, input.bool() {
            configuration.exposureRule = ExposureRule(
                threshold: input.pick([0, 0.5, 1, Double(input.byte()) / 255, -0.1, 1.5, .nan]),
                minTime: input.pick([nil, 0, 0.25, 1, input.extent(scale: 1), -1, .infinity]))
        }
        if input.bool() {
            configuration.links = ["a": LinkedScrollView(
                viewport: Size(width: input.extent(), height: input.extent()), contentSize: Size(width: input.extent(scale: 2000), height: input.extent(scale: 2000)))]
        }
        configuration.loop = input.byte() % 4 == 0
    }
    trace("configuration \(configuration)")
    guard var session = try? ViewportSession(layout: layout, configuration: configuration) else { return }
    trace("plan 0 \(session.lastPlan)")
    var client = Client(layout: model, caps: configuration.pool)
    var viewport = configuration.viewport
    client.apply(session.lastPlan, newLayout: nil)
    client.check(session)
    if !configuration.loop { client.checkRegion(offset: session.lastPlan.offset, viewport: viewport, buffer: configuration.buffer, motion: (0, 0)) }
    requireFinite(session.lastPlan, layout: layout, session, step: 0)

    for step in 1...40 {
        if input.isAtEnd { break }
        let before = Snapshot(session)
        let seq: UInt64? = switch input.byte() % 8 {
        case 0: nil
        case 1: session.seq
        case 2: session.seq &+ 2
        case 3: UInt64.max
        default: session.seq + 1
        }
        var newModel: ModelLayout?
        var newViewport = viewport
        var sentOffset: Point?
        var sentVelocity: Point?
        var sentTime: Double?
        let outcome: Result<Plan, SessionError>
        if input.byte() % 16 == 0 {
            guard let (next, nextModel) = makeLayout(&input, idSpace: 60) else { continue }
            newModel = nextModel
            let anchor = input.pick(LayoutAnchor.allCases)
            trace("step \(step): change layout, anchor \(anchor), seq \(String(describing: seq))")
            outcome = Result { () throws(SessionError) in try session.changeLayout(to: next, anchor: anchor, seq: seq) }
        } else {
            var update: ViewportUpdate
            if input.byte() % 6 == 0 {
                let item = input.int(in: -1...max(model.ids.count, client.layout.ids.count))
                update = ViewportUpdate(scrollTo: ScrollTarget(item: item, align: input.pick(ScrollAlignment.allCases), margin: input.pick([0, 0, 12, input.extent(), -3, .infinity])))
            } else {
                let offset: Point = switch input.byte() % 4 {
                case 0: Point(x: session.offset.x + Double(input.int(in: -60...60)), y: session.offset.y + Double(input.int(in: -60...60)))
                case 1: Point(x: session.offset.x, y: session.offset.y + Double(input.int(in: -3000...3000)))
                default: Point(x: input.coordinate(), y: input.coordinate())
                }
                update = ViewportUpdate(offset: offset)
                sentOffset = offset
            }
            if input.byte() % 8 == 0 { update.size = input.bool() ? Size(width: viewport.height, height: viewport.width) : Size(width: input.extent(scale: 400), height: input.extent(scale: 600)) }
            if input.bool() { update.velocity = Point(x: input.coordinate(scale: 1000), y: input.coordinate(scale: 5000)) }
            sentVelocity = update.velocity
            update.phase = input.pick(ScrollPhase.allCases)
            update.seq = seq
            if let now = clock, input.byte() % 4 != 0 {
                // Mostly forward by steps of varying length, sometimes the same instant or back.
                update.time = now + input.pick([0.016, 0.1, 0.5, 2, 0, -1, Double(input.byte()) / 64])
            }
            switch input.byte() % 8 {
            case 0: update.select = .clear
            case 1: update.select = .item(input.int(in: -1...client.layout.ids.count))
            default: break
            }
            newViewport = update.size ?? viewport
            sentTime = update.time
            trace("step \(step): \(update)")
            outcome = Result { () throws(SessionError) in try session.apply(update) }
        }
        trace("  -> \(outcome)")
        switch outcome {
        case .failure:
            require(Snapshot(session) == before, "a refused update changed the session (step \(step))")
        case .success(let plan):
            if seq == before.seq {
                require(plan == before.lastPlan && Snapshot(session) == before, "a retry changed the session (step \(step))")
                continue
            }
            require(session.seq == before.seq + 1 && plan.seq == session.seq, "seq \(session.seq) after \(before.seq)")
            if let sent = sentTime {
                require(clock.map { sent >= $0 } ?? true, "time \(sent) accepted after \(String(describing: clock))")
                clock = sent
            }
            if let sentOffset { require(plan.offset == sentOffset, "plan offset \(plan.offset) for \(sentOffset)") }
            viewport = newViewport
            client.apply(plan, newLayout: newModel)
            client.check(session)
            // The model's motion: the sign of the velocity sent, else of the offset's change; a layout
            // change is no motion.
            func sign(_ v: Double?, _ from: Double, _ to: Double) -> Int {
                if let v, v != 0 { return v > 0 ? 1 : -1 }
                return to > from ? 1 : to < from ? -1 : 0
            }
            let motion = newModel != nil ? (x: 0, y: 0) : (x: sign(sentVelocity?.x, before.lastPlan.offset.x, plan.offset.x), y: sign(sentVelocity?.y, before.lastPlan.offset.y, plan.offset.y))
            if !configuration.loop { client.checkRegion(offset: plan.offset, viewport: viewport, buffer: configuration.buffer, motion: motion) }
            requireFinite(plan, layout: session.layout, session, step: step)
        }
    }
}
