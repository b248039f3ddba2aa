#if canImport(Glibc)
import Glibc
#endif
import FuzzClientModel
import FuzzServiceChecks
import FuzzSupport
@testable import ViewportCore
@testable import ViewportService

// Stack sections (docs/api.md "Stacks and edits") and their edits
// (`ViewportSession.apply(_: StackEdit, anchor:seq:)`, PATCH /v1/sessions/{id}/layout) driven by
// fuzz bytes: a layout of one or more stacks (sizes given or estimated, spacing, 1…4 lanes with a
// lane size, extremes that are valid or not), sometimes with list sections between them, a session
// on it, then up to 40 steps mixing scroll updates and edits (resizes, inserts before/after/at the
// start/end, removes, of ids known, unknown, duplicated, of another section kind; every anchor;
// seq retries and conflicts).
//
// The model below knows the layout only from its own specs and edits (never from the layout under
// test, except for the lane a masonry gives an item whose lane depends on inexact sums: that lane
// is taken from the layout the first time and fixed afterwards). It checks:
// - the build is refused exactly when a stack spec is invalid (docs/api.md: sizes, spacing, lane size
//   finite, not negative, at most 10¹²; an estimate when an item has no size; lanes 1…64);
// - an edit is refused exactly when the model finds it invalid (an unknown id, a new id already in
//   the layout or repeated, an item of another section kind, an unknown stack, a bad size) or its
//   seq conflicts, and then changes nothing (session snapshot, layout, edits count);
// - a retry (seq equal to the last) answers the plan answered last, as it was, and changes nothing;
// - after every step, the ids in layout order, each item's size (measured or the estimate), its
//   lane (never changes; before/after an item: that item's; at the start: the first item's; at the
//   end and when built: the shortest lane, lowest index on a tie), its cross position
//   (lane × (laneSize + spacing)), its position along the axis (the end of the previous item of
//   its lane plus spacing), the sections after a stack following its longest lane, and the content
//   size. Positions are exact when every length is a multiple of 1/8 ("exact" inputs: the model
//   sums in eighths of a point); otherwise within a tolerance of the rounding of the sums;
// - with anchor `visible` (and `end` away from the end), the first item on screen before the edit
//   (the viewport without buffer, in layout order) that survives it keeps its on-screen position;
//   with `end` at the end, the offset is the new end (cross axis clamped); with `none` it stays;
// - the plan carries `contentSize` exactly when it changed; items materialized before and after
//   keep their views and are under `move` exactly when their rect changed;
// - with exposure, `enter` and `leave` keep the client's set of items on screen: entering items
//   were not on it, leaving ones were, `times` counts each id's entries, and (exact inputs) the
//   set is the items intersecting the viewport;
// - the plans obey the client model's view and pool rules (FuzzSupport's `Client`), and the
//   materialized items are those intersecting the buffered viewport (exact inputs);
// - every number of the encoded plan and state is finite;
// - a session restored from its snapshot (a quarter of the inputs) answers every later step as
//   the original does, and ends with the same snapshot;
// - at the end of an input with edits, the session's layout as GET /v1/sessions/{id}/layout
//   writes it, posted again, gives the same ids and rects (docs/api.md).
// Past 400 items the layout is checked on a sample of items each step, and whole at the end.
// An edit is taken as no motion (the buffer is max(ahead, behind) on both sides), as
// FuzzSessionApply takes a layout change: docs/api.md's direction rule speaks of updates' velocity and
// offset change, and an offset moved by an anchor is not the user's scrolling.

let tracing = getenv("FUZZ_TRACE") != nil
func trace(_ message: @autoclosure () -> String) { if tracing { log(message()) } }

/// docs/api.md: sizes, spacing and lane sizes up to this many points.
let maxLength = 1e12

// MARK: - The model

struct MItem {
    var id: String
    var size: Size
    var measured: Bool
    /// Nil until the layout reports it (a masonry's lane chosen with inexact sums).
    var lane: Int?
    /// The reuse identifier, resolved (nil: none).
    var reuse: String?
}

struct MStack {
    var id: String
    var reuse: String?
    var estimate: Size?
    var spacing: Double
    var lanes: Int
    var laneSize: Double
    var items: [MItem]
}

struct MList {
    var id: String
    var reuse: String?
    var count: Int
    var size: Size
    var gap: Double
}

enum MSection {
    case stack(MStack)
    case list(MList)
}

/// Whether `v` is a multiple of 1/8 (then the model's sums, in eighths, are exact).
func isEighths(_ v: Double) -> Bool { v.isFinite && (v * 8).rounded() == v * 8 && abs(v) < 0x1p60 }
func eighths(_ v: Double) -> Int128 { Int128(v * 8) }
func points(_ e: Int128) -> Double { Double(e) / 8 }

struct Model {
    var axis: Axis
    var insets: Insets
    var spacing: Double
    var sections: [MSection]
    /// Every length is a multiple of 1/8: exact positions, lanes computed, anchors checked.
    var exact: Bool

    /// Whether every length (insets, spacings, lane sizes, estimates, sizes) is a multiple of 1/8.
    var allEighths: Bool {
        var lengths = [spacing, insets.top, insets.left, insets.bottom, insets.right]
        for section in sections {
            switch section {
            case .list(let l): lengths += [l.size.width, l.size.height, l.gap]
            case .stack(let s):
                lengths += [s.spacing, s.laneSize] + (s.estimate.map { [$0.width, $0.height] } ?? [])
                for item in s.items { lengths += [item.size.width, item.size.height] }
            }
        }
        return lengths.allSatisfy(isEighths)
    }

    var stacks: [(index: Int, stack: MStack)] {
        var out: [(index: Int, stack: MStack)] = []
        for (index, section) in sections.enumerated() {
            if case .stack(let s) = section { out.append((index, s)) }
        }
        return out
    }

    func main(_ s: Size) -> Double { axis == .y ? s.height : s.width }
    func cross(_ s: Size) -> Double { axis == .y ? s.width : s.height }
    var crossOrigin: Double { axis == .y ? insets.left : insets.top }
    var mainStart: Double { axis == .y ? insets.top : insets.left }
    func rect(main: Double, cross: Double, size: Size) -> Rect {
        axis == .y ? Rect(x: cross, y: main, width: size.width, height: size.height) : Rect(x: main, y: cross, width: size.width, height: size.height)
    }

    /// Ids in layout order (kept by `refresh()` after every change of items).
    var ids: [String] = []
    var idSet: Set<String> = []

    mutating func refresh() {
        ids = computeIDs()
        idSet = Set(ids)
    }

    private func computeIDs() -> [String] {
        var out: [String] = []
        for section in sections {
            switch section {
            case .stack(let s): out += s.items.map(\.id)
            case .list(let l): out += (0..<l.count).map { "\(l.id)-\($0)" }
            }
        }
        return out
    }


    /// A stack's lane lengths (in eighths when exact, else approximate points) and counts.
    func laneEnds(_ s: MStack) -> [Double] {
        var ends = Array(repeating: 0.0, count: s.lanes)
        var counts = Array(repeating: 0, count: s.lanes)
        for item in s.items {
            guard let lane = item.lane else { continue }
            ends[lane] += (counts[lane] > 0 ? s.spacing : 0) + main(item.size)
            counts[lane] += 1
        }
        return ends
    }

    func laneEndsExact(_ s: MStack) -> (ends: [Int128], counts: [Int]) {
        var ends = Array(repeating: Int128(0), count: s.lanes)
        var counts = Array(repeating: 0, count: s.lanes)
        for item in s.items {
            let lane = item.lane!
            ends[lane] += (counts[lane] > 0 ? eighths(s.spacing) : 0) + eighths(main(item.size))
            counts[lane] += 1
        }
        return (ends, counts)
    }

    /// Every item's rect, and the content size: exact when `exact`, else in doubles summed in
    /// order, with `tolerance[k]` the error item k's main position may have: the rounding of the
    /// sums (relative 10⁻¹² of the magnitudes summed), plus 2⁻⁵⁵ per item summed (the layout
    /// rounds each length to 2⁻⁵⁶ before summing, exactly for lengths of at least 1/16).
    func geometry() -> (rects: [Rect], tolerance: [Double], contentSize: Size, contentTolerance: Double) {
        var rects: [Rect] = []
        var tolerance: [Double] = []
        // The error the section's origin may carry.
        var originTolerance = 0.0
        var cursor = mainStart
        var maxMain = 0.0
        var maxCross = 0.0
        for (index, section) in sections.enumerated() {
            if index > 0 { cursor += spacing }
            let origin = cursor
            switch section {
            case .list(let l):
                let step = main(l.size) + l.gap
                for k in 0..<l.count {
                    rects.append(rect(main: origin + Double(k) * step, cross: crossOrigin, size: l.size))
                    tolerance.append(originTolerance + (abs(origin) + Double(k) * step) * 1e-12)
                }
                let far = l.count > 0 ? Double(l.count - 1) * step + main(l.size) : 0
                cursor = origin + far
                // An empty section has an origin but no items: it adds nothing to the content.
                if l.count > 0 {
                    maxMain = max(maxMain, cursor)
                    maxCross = max(maxCross, crossOrigin + cross(l.size))
                }
            case .stack(let s):
                let laneStep = s.laneSize + s.spacing
                var endsE = Array(repeating: Int128(0), count: s.lanes)
                var ends = Array(repeating: 0.0, count: s.lanes)
                var mags = Array(repeating: 0.0, count: s.lanes)
                var counts = Array(repeating: 0, count: s.lanes)
                var widest = Array(repeating: 0.0, count: s.lanes)
                var lastFar = Array(repeating: -Double.infinity, count: s.lanes)
                for item in s.items {
                    let lane = item.lane ?? 0
                    let start: Double
                    if exact {
                        if counts[lane] > 0 { endsE[lane] += eighths(s.spacing) }
                        start = points(endsE[lane])
                        endsE[lane] += eighths(main(item.size))
                    } else {
                        if counts[lane] > 0 { ends[lane] += s.spacing; mags[lane] += s.spacing }
                        start = ends[lane]
                        ends[lane] += main(item.size)
                        mags[lane] += main(item.size)
                    }
                    counts[lane] += 1
                    let r = rect(main: origin + start, cross: crossOrigin + Double(lane) * laneStep, size: item.size)
                    rects.append(r)
                    tolerance.append(originTolerance + (abs(origin) + mags[lane]) * 1e-12 + Double(counts[lane]) * 0x1p-55)
                    widest[lane] = max(widest[lane], cross(item.size))
                    lastFar[lane] = axis == .y ? r.y + r.height : r.x + r.width
                }
                var extent = 0.0
                var farMain = origin
                var farCross = crossOrigin
                for lane in 0..<s.lanes where counts[lane] > 0 {
                    extent = max(extent, exact ? points(endsE[lane]) : ends[lane])
                    farMain = max(farMain, lastFar[lane])
                    farCross = max(farCross, crossOrigin + Double(lane) * laneStep + widest[lane])
                }
                cursor = origin + extent
                originTolerance += (abs(origin) + (mags.max() ?? 0)) * 1e-12 + Double(s.items.count) * 0x1p-55
                if !s.items.isEmpty {
                    maxMain = max(maxMain, farMain)
                    maxCross = max(maxCross, farCross)
                }
            }
        }
        // docs/api.md, docs/guides/generated-layouts.md: the default content size is the items' extent grown by the trailing insets.
        let size = axis == .y
            ? Size(width: maxCross + insets.right, height: maxMain + insets.bottom)
            : Size(width: maxMain + insets.right, height: maxCross + insets.bottom)
        return (rects, tolerance, size, originTolerance + (size.width + size.height) * 1e-12)
    }

    /// Which stack (section index) and position holds the stack item `id`.
    func locate(_ id: String) -> (section: Int, rank: Int)? {
        for (index, section) in sections.enumerated() {
            if case .stack(let s) = section, let rank = s.items.firstIndex(where: { $0.id == id }) { return (index, rank) }
        }
        return nil
    }

    func stack(_ index: Int) -> MStack {
        guard case .stack(let s) = sections[index] else { fatalError("not a stack") }
        return s
    }

    mutating func setStack(_ index: Int, _ s: MStack) { sections[index] = .stack(s) }

    /// The client's view of the layout, with `rects` from `geometry()`.
    func modelLayout(rects: [Rect]) -> ModelLayout {
        var m = ModelLayout()
        m.explicit = false
        for section in sections {
            switch section {
            case .stack(let s):
                for item in s.items {
                    m.ids.append(item.id)
                    if let r = item.reuse, !r.isEmpty { m.reuse[item.id] = r }
                }
            case .list(let l):
                for k in 0..<l.count {
                    let id = "\(l.id)-\(k)"
                    m.ids.append(id)
                    if let r = l.reuse, !r.isEmpty { m.reuse[id] = r }
                }
            }
        }
        m.rects = rects
        return m
    }
}

/// docs/api.md: a size is finite, not negative, at most 10¹² on each side.
func validSize(_ s: Size) -> Bool {
    s.width.isFinite && s.height.isFinite && s.width >= 0 && s.height >= 0 && s.width <= maxLength && s.height <= maxLength
}
func validLength(_ v: Double) -> Bool { v.isFinite && v >= 0 && v <= maxLength }

/// The shortest lane (lowest index on a tie) for an item of `length` eighths; updates the ends.
func chooseLane(_ ends: inout [Int128], _ counts: inout [Int], gap: Int128, length: Int128, given: Int? = nil) -> Int {
    var lane = 0
    if let given { lane = given } else {
        for j in 1..<ends.count where ends[j] < ends[lane] { lane = j }
    }
    ends[lane] = (counts[lane] > 0 ? ends[lane] + gap : 0) + length
    counts[lane] += 1
    return lane
}

// MARK: - Inputs

extension FuzzInput {
    /// A length for a stack: mostly multiples of 1/8, sometimes values that are not (0.1, tiny,
    /// 1/3), sometimes the extremes (10¹² is valid, more is not, nor negative or not finite).
    mutating func stackLength(scale: Double = 100) -> Double {
        switch byte() % 32 {
        case 0..<24: return Double(int(in: 0...400)) * scale / 80
        case 24..<27: return Double(int(in: 0...4000)) / 8
        case 27: return pick([0.1, 1.0 / 3, 1e-300, 5e-324, 0.999_999_999_999, 44.1, 1e-9])
        case 28: return pick([maxLength, maxLength - 0.125, 1e11, -0.0, 2e-3 * 1024])
        default: return pick([-1, maxLength * 2, .infinity, .nan, -.infinity, 0, 1e300, -0.125])
        }
    }

    mutating func stackSize() -> Size {
        byte() % 4 == 0 ? Size(width: stackLength(), height: stackLength()) : Size(width: pick([375, 180, 120.5]), height: stackLength())
    }
}

let reuseChoices: [String?] = [nil, nil, "a", "b", ""]

/// The layout from the input, and the model of it; nil when the service refuses it (after
/// checking the model refuses it too).
func makeLayout(_ input: inout FuzzInput) -> (Layout, Model)? {
    let axis: Axis = input.byte() % 4 == 0 ? .x : .y
    let insets = input.bool() ? Insets.zero : Insets(top: input.stackLength(), left: input.stackLength(scale: 10), bottom: input.stackLength(), right: input.stackLength(scale: 10))
    let spacing = input.bool() ? 0 : input.stackLength(scale: 10)
    guard validLength(spacing), [insets.top, insets.left, insets.bottom, insets.right].allSatisfy(validLength) else { return nil }
    var model = Model(axis: axis, insets: insets, spacing: spacing, sections: [], exact: true)
    var valid = true
    var specs: [SectionSpec] = []
    let sectionCount = input.int(in: 1...3)
    var next = 0
    var totalItems = 0
    for index in 0..<sectionCount {
        if input.byte() % 5 == 0 {
            // A generated list between stacks (its ids are not stack items).
            let count = input.int(in: 0...30)
            let size = Size(width: Double(input.int(in: 0...400)), height: Double(input.int(in: 0...800)) / 8)
            let gap = Double(input.int(in: 0...16)) / 2
            let reuse = input.pick(reuseChoices)
            let id = "L\(index)"
            specs.append(SectionSpec(id: id, reuse: reuse, shape: .list(axis: nil, count: count, size: size, spacing: gap)))
            model.sections.append(.list(MList(id: id, reuse: reuse, count: count, size: size, gap: gap)))
            totalItems += count
            continue
        }
        let id: String? = input.byte() % 4 == 0 ? nil : "s\(index)"
        let reuse = input.pick(reuseChoices)
        let lanes = input.byte() % 3 == 0 ? input.pick([2, 3, 4, 1, 0, 65]) : 1
        let estimate: Size? = input.byte() % 4 == 0 ? nil : input.stackSize()
        let stackSpacing = input.bool() ? 0 : input.stackLength(scale: 10)
        let laneSize: Double? = input.bool() ? nil : input.stackLength()
        var count = input.int(in: 0...24)
        if input.byte() % 16 == 0 { count = input.int(in: 0...1500) }
        count = min(count, 2500 - totalItems)
        totalItems += count
        // A pattern of sizes, repeated (so long stacks cost few bytes).
        let pattern: [Size?] = (0..<input.int(in: 1...6)).map { _ in input.byte() % 3 == 0 ? nil : input.stackSize() }
        let explicitLanes = lanes > 1 && input.byte() % 8 == 0
        var items: [StackSpec.Item] = []
        for k in 0..<count {
            let size = pattern[k % pattern.count]
            let itemReuse: String? = k % 7 == 3 ? input.pick(reuseChoices) : nil
            let lane: Int? = explicitLanes && k % 3 == 0 ? (k / 3) % (lanes + 1) : nil
            items.append(StackSpec.Item(id: "m\(next)", size: size, reuse: itemReuse, lane: lane))
            next += 1
        }
        specs.append(SectionSpec(id: id, reuse: reuse, shape: .stack(StackSpec(items: items, estimate: estimate, spacing: stackSpacing, lanes: lanes, laneSize: laneSize))))

        // docs/api.md's rules for a stack spec.
        if !validLength(stackSpacing) || !(1...64).contains(lanes) || !(estimate.map(validSize) ?? true) || !(laneSize.map(validLength) ?? true)
            || items.contains(where: { ($0.size.map { !validSize($0) } ?? (estimate == nil)) || ($0.lane.map { !(0..<lanes).contains($0) } ?? false) })
        {
            valid = false
            continue
        }
        // laneSize defaults to the cross size of the estimate, else of the first item.
        let crossOf = { (s: Size) in axis == .y ? s.width : s.height }
        let resolvedLaneSize = laneSize ?? estimate.map(crossOf) ?? items.first?.size.map(crossOf) ?? 0
        if lanes > 1 && laneSize == nil && estimate == nil && items.isEmpty {
            valid = false
            continue
        }
        var stack = MStack(id: id ?? String(index), reuse: reuse, estimate: estimate, spacing: stackSpacing, lanes: lanes, laneSize: resolvedLaneSize, items: [])
        for item in items {
            let r = item.reuse ?? reuse
            stack.items.append(MItem(id: item.id, size: item.size ?? estimate!, measured: item.size != nil, lane: lanes == 1 ? 0 : item.lane, reuse: r))
        }
        model.sections.append(.stack(stack))
    }
    guard model.stacks.count > 0 || !valid else { return nil }
    // Exact: every length a multiple of 1/8 (the model sums in eighths).
    model.exact = valid && model.allEighths
    model.refresh()
    if model.exact {
        // Lanes when built: the shortest lane when each item is added (lowest index on a tie).
        for (index, s) in model.stacks where s.lanes > 1 {
            var stack = s
            var ends = Array(repeating: Int128(0), count: s.lanes)
            var counts = Array(repeating: 0, count: s.lanes)
            for k in stack.items.indices {
                stack.items[k].lane = chooseLane(&ends, &counts, gap: eighths(s.spacing), length: eighths(model.main(stack.items[k].size)), given: stack.items[k].lane)
            }
            model.setStack(index, stack)
        }
    }

    var builder = LayoutBuilder(maxItems: 5000)
    var sectionStack = SectionStack(axis: axis, insets: insets, spacing: spacing, withStacks: true)
    let layout: Layout
    do {
        for spec in specs { try sectionStack.append(spec, to: &builder) }
        try builder.setTrailingPadding(sectionStack.trailingPadding)
        layout = try builder.build()
    } catch {
        require(!valid, "the layout was refused, the model accepts it: \(error)")
        return nil
    }
    require(valid, "the layout was accepted, the model refuses it")
    trace("layout: axis \(axis), insets \(insets), spacing \(spacing), exact \(model.exact), \(layout.count) items; sections \(model.sections.map { s -> String in switch s { case .list(let l): "\(l)"; case .stack(let s): "stack \(s.id) lanes \(s.lanes) laneSize \(s.laneSize) spacing \(s.spacing) estimate \(String(describing: s.estimate)) items \(s.items.map { "\($0.id) \($0.size) \(String(describing: $0.lane))" })" } })")
    return (layout, model)
}

// MARK: - Checks of the layout against the model

/// Takes the lanes the layout reports for items the model could not place (inexact sums), once.
func adoptLanes(_ model: inout Model, from layout: Layout) {
    for (index, s) in model.stacks where s.items.contains(where: { $0.lane == nil }) {
        var stack = s
        guard let found = layout.stacksByID[s.id] else { fatalError("fuzz check failed: stack \(s.id) missing") }
        for k in stack.items.indices where stack.items[k].lane == nil {
            require(k < layout.stacks[found].section.count, "stack \(s.id) has \(layout.stacks[found].section.count) items, the model \(s.items.count)")
            let lane = Int(layout.stacks[found].section.entry(at: k).lane)
            require((0..<s.lanes).contains(lane), "item \(stack.items[k].id) in lane \(lane) of \(s.lanes)")
            stack.items[k].lane = lane
        }
        model.setStack(index, stack)
    }
}

/// `a` equals `b`, or (inexact) is within `tolerance` (plus the rounding of `b` itself).
func close(_ a: Double, _ b: Double, tolerance: Double, exact: Bool) -> Bool {
    if exact { return a == b }
    return abs(a - b) <= tolerance + abs(b) * 1e-12 + 1e-300
}

/// The layout's items are the model's: ids in order, sizes, lanes (cross positions), positions
/// along the axis (exact or within the tolerance), and the content size. `sample`: check every
/// `sample`-th item only (long layouts, between full checks).
func checkLayout(_ layout: Layout, _ model: Model, _ geometry: (rects: [Rect], tolerance: [Double], contentSize: Size, contentTolerance: Double), sample: Int = 1, phase: Int = 0, _ what: String) {
    let ids = model.ids
    require(layout.count == ids.count, "\(what): the layout has \(layout.count) items, the model \(ids.count)")
    let cs = layout.contentSize
    require(close(cs.width, geometry.contentSize.width, tolerance: geometry.contentTolerance, exact: model.exact)
        && close(cs.height, geometry.contentSize.height, tolerance: geometry.contentTolerance, exact: model.exact),
        "\(what): content size \(cs), the model's \(geometry.contentSize)")
    var k = sample > 1 ? phase % sample : 0
    while k < ids.count {
        require(layout.id(at: k) == ids[k], "\(what): item \(k) is \(layout.id(at: k)), the model's \(ids[k])")
        require(layout.item(withID: ids[k]) == k, "\(what): \(ids[k]) found at \(String(describing: layout.item(withID: ids[k]))), not \(k)")
        let r = layout.rects[k]
        let m = geometry.rects[k]
        require(r.width == m.width && r.height == m.height, "\(what): \(ids[k]) has size \(r), the model's \(m)")
        let (rm, mm, rc, mc) = model.axis == .y ? (r.y, m.y, r.x, m.x) : (r.x, m.x, r.y, m.y)
        require(rc == mc, "\(what): \(ids[k]) across the axis at \(rc), the model's \(mc) (rect \(r), model \(m))")
        require(close(rm, mm, tolerance: geometry.tolerance[k], exact: model.exact), "\(what): \(ids[k]) along the axis at \(rm), the model's \(mm) (rect \(r), model \(m))")
        k += sample
    }
}

// MARK: - Edits

/// A step's edit and what the model makes of it: the new model, or nil when docs/api.md refuses it.
func applyModel(_ edit: StackEdit, to model: Model) -> (Model, String?) {
    var m = model
    func refuse(_ why: String) -> (Model, String?) { (model, why) }
    // The ids of the layout as the edit goes.
    var taken = model.idSet
    for r in edit.resize {
        guard let (s, rank) = m.locate(r.id).map({ ($0.section, $0.rank) }) else { return refuse("resize of \(r.id): not a stack item") }
        guard validSize(r.size) else { return refuse("resize of \(r.id) to \(r.size)") }
        var stack = m.stack(s)
        stack.items[rank].size = r.size
        stack.items[rank].measured = true
        m.setStack(s, stack)
    }
    for insert in edit.insert {
        let s: Int
        var rank: Int
        var lane: Int?
        switch insert.place {
        case .before(let id), .after(let id):
            guard let (found, at) = m.locate(id) else { return refuse("insert next to \(id): not a stack item") }
            s = found
            lane = m.stack(s).items[at].lane
            if case .before = insert.place { rank = at } else { rank = at + 1 }
        case .start(let name), .end(let name):
            guard let found = m.stacks.first(where: { $0.stack.id == name })?.index else { return refuse("insert in \(name): not a stack") }
            s = found
            let stack = m.stack(s)
            if case .start = insert.place {
                rank = 0
                lane = stack.items.first?.lane ?? 0
            } else {
                rank = stack.items.count
                lane = nil
            }
        }
        if insert.items.isEmpty { continue }
        var stack = m.stack(s)
        for item in insert.items {
            guard !item.id.isEmpty, item.id.utf8.count <= Layout.maxIDBytes else { return refuse("insert of id \(item.id.prefix(20))…") }
            guard !taken.contains(item.id) else { return refuse("insert of \(item.id): already an item (or twice)") }
            taken.insert(item.id)
            guard item.size.map(validSize) ?? (stack.estimate != nil) else { return refuse("insert of \(item.id) with size \(String(describing: item.size))") }
        }
        var ends: [Int128] = []
        var counts: [Int] = []
        // The shortest lane is computed when the sums are exact: the stack's lengths and the new sizes are eighths.
        let chooseAtEnd = lane == nil && stack.lanes > 1 && stack.items.allSatisfy { $0.lane != nil && isEighths($0.size.width) && isEighths($0.size.height) }
            && isEighths(stack.spacing) && insert.items.allSatisfy { isEighths(m.main($0.size ?? stack.estimate!)) }
        if chooseAtEnd { (ends, counts) = m.laneEndsExact(stack) }
        for item in insert.items {
            let size = item.size ?? stack.estimate!
            var itemLane = lane
            if lane == nil {
                if stack.lanes == 1 {
                    itemLane = 0
                } else if chooseAtEnd {
                    itemLane = chooseLane(&ends, &counts, gap: eighths(stack.spacing), length: eighths(m.main(size)))
                }
            }
            let reuse = item.reuse ?? stack.reuse
            stack.items.insert(MItem(id: item.id, size: size, measured: item.size != nil, lane: itemLane, reuse: reuse), at: rank)
            rank += 1
        }
        m.setStack(s, stack)
    }
    for id in edit.remove {
        guard let (s, rank) = m.locate(id) else { return refuse("remove of \(id): not a stack item") }
        var stack = m.stack(s)
        stack.items.remove(at: rank)
        m.setStack(s, stack)
        taken.remove(id)
    }
    m.refresh()
    // Exact while every length is eighths (lanes the layout chose are known by then: see adoptLanes).
    m.exact = m.allEighths
    return (m, nil)
}

/// An edit from the input: ids known, unknown, removed, of a list; sizes valid or not.
func makeEdit(_ input: inout FuzzInput, _ model: Model, removed: [String], fresh: inout Int) -> StackEdit {
    let ids = model.ids
    let stackIDs = model.stacks.flatMap { $0.stack.items.map(\.id) }
    let listIDs = ids.filter { $0.hasPrefix("L") }
    func anID() -> String {
        switch input.byte() % 16 {
        case 0..<10 where !stackIDs.isEmpty: return stackIDs[input.int(in: 0...(stackIDs.count - 1))]
        case 10 where !removed.isEmpty: return removed[input.int(in: 0...(removed.count - 1))]
        case 11 where !listIDs.isEmpty: return listIDs[input.int(in: 0...(listIDs.count - 1))]
        case 12: return "m\(input.int(in: 0...5000))"
        case 13: return "nope"
        default: return stackIDs.isEmpty ? "m0" : (input.bool() ? stackIDs.first! : stackIDs.last!)
        }
    }
    func newID() -> String {
        switch input.byte() % 16 {
        case 0..<11:
            fresh += 1
            return "n\(fresh)"
        case 11 where !removed.isEmpty: return removed[input.int(in: 0...(removed.count - 1))]
        case 12: return ""
        case 13: return String(repeating: "x", count: input.pick([256, 257]))
        case 14: return "n\(fresh)"  // the previous fresh id: already in, or twice in this edit
        default: return anID()
        }
    }
    func size() -> Size? { input.byte() % 3 == 0 ? nil : input.stackSize() }
    var edit = StackEdit()
    for _ in 0..<input.int(in: 0...3) where input.bool() { edit.resize.append(StackEdit.Resize(id: anID(), size: input.stackSize())) }
    for _ in 0..<input.int(in: 0...2) {
        let sectionNames = model.stacks.map(\.stack.id) + ["L0", "L1", "zz", "0", "s1"]
        let place: StackEdit.Place = switch input.byte() % 4 {
        case 0: .before(anID())
        case 1: .after(anID())
        case 2: .start(section: sectionNames[input.int(in: 0...(sectionNames.count - 1))])
        default: .end(section: sectionNames[input.int(in: 0...(sectionNames.count - 1))])
        }
        let count = input.byte() % 8 == 0 ? input.int(in: 0...60) : input.int(in: 0...4)
        let items = (0..<count).map { _ in StackEdit.NewItem(id: newID(), size: size(), reuse: input.byte() % 4 == 0 ? input.pick(reuseChoices) : nil) }
        edit.insert.append(StackEdit.Insert(place: place, items: items))
    }
    for _ in 0..<input.int(in: 0...3) where input.bool() { edit.remove.append(anID()) }
    return edit
}

// MARK: - The run

/// docs/api.md: `GET /v1/sessions/{id}/layout` answers the session's current layout (sections form),
/// which posted again gives the same rects: encoded, decoded as POST /v1/layouts does, and built,
/// it has the model's ids, sizes, lanes and positions again, and the same rects to the bit.
func requireRoundTrip(_ layout: Layout, _ model: Model, _ geometry: (rects: [Rect], tolerance: [Double], contentSize: Size, contentTolerance: Double)) {
    var w = JSONWriter()
    LayoutEncoder.encode(layout, into: &w)
    requireFiniteJSON(w.bytes, "the session's layout")
    let decoded = w.bytes.withUnsafeBytes { bytes -> Result<Layout, Problem>? in
        var r = JSONReader(bytes)
        guard let result = try? LayoutDecoder(maxItems: 100_000).decodeDeferringInvalid(&r) else { return nil }
        return (try? r.finish()) == nil ? nil : result
    }
    guard case .success(let again)? = decoded else {
        fatalError("fuzz check failed: the session's layout, posted again, is refused: \(String(describing: decoded)): \(escaped(w.bytes))")
    }
    checkLayout(again, model, geometry, "the session's layout posted again")
    for k in 0..<layout.count {
        require(again.rects[k] == layout.rects[k], "posted again, item \(k) is at \(again.rects[k]), in the session at \(layout.rects[k])")
    }
    require(again.contentSize == layout.contentSize, "posted again, content size \(again.contentSize), in the session \(layout.contentSize)")
}

let skipFinite = getenv("FUZZ_SKIP_FINITE") != nil

/// Every number of the plan is finite; and of the session's state, every 4th step (the state
/// repeats the plan's numbers, and parsing it back is most of an input's time).
func requireFinite(_ plan: Plan, _ session: ViewportSession, step: Int) {
    if skipFinite { return }
    var w = JSONWriter()
    PlanEncoder.encode(plan, layout: session.layout, into: &w)
    requireFiniteJSON(w.bytes, "plan \(step)")
    guard step % 4 == 0 else { return }
    var s = JSONWriter()
    PlanEncoder.encodeState(session, id: "s", into: &s)
    requireFiniteJSON(s.bytes, "state after plan \(step)")
}

/// The client's view of exposure (docs/api.md `"exposure": true`): the items on screen (the viewport
/// without buffer) as `enter` and `leave` told it, and how many times each id entered.
struct ExposureModel {
    var on: Set<String> = []
    var times: [String: Int] = [:]
    /// Ids removed by an edit (an id inserted again is another item: its count is not checked).
    var reused: Set<String> = []

    /// `leave` names items of `oldIDs` (the previous version after an edit), `enter` of `newIDs`.
    mutating func apply(_ plan: Plan, oldIDs: [String], newIDs: [String], step: Int) {
        for item in plan.leave {
            require(oldIDs.indices.contains(item), "step \(step): leave names item \(item) of \(oldIDs.count)")
            require(on.remove(oldIDs[item]) != nil, "step \(step): \(oldIDs[item]) left the screen but had not entered it")
        }
        for entry in plan.enter {
            require(newIDs.indices.contains(entry.item), "step \(step): enter names item \(entry.item) of \(newIDs.count)")
            let id = newIDs[entry.item]
            require(on.insert(id).inserted, "step \(step): \(id) entered the screen but was on it")
            let count = (times[id] ?? 0) + 1
            if !reused.contains(id) { require(entry.times == count, "step \(step): \(id) entered for the time \(entry.times), the client counts \(count)") }
            times[id] = count
        }
        // Items removed by an edit went out of the screen: they are under `leave`.
        let present = Set(newIDs)
        let gone = on.filter { !present.contains($0) }
        require(gone.isEmpty, "step \(step): \(gone.sorted()) removed from the screen without leave")
    }

    /// With exact rects: the items on screen are those whose rect intersects the viewport strictly
    /// (threshold 0), leaving aside items of zero area (docs/api.md's "strictly inside" for those).
    func check(_ model: Model, rects: [Rect], offset: Point, viewport: Size, step: Int) {
        let ids = model.ids
        let (minX, minY, maxX, maxY) = (offset.x, offset.y, offset.x + viewport.width, offset.y + viewport.height)
        var expected: Set<String> = []
        var zero: Set<String> = []
        for (k, r) in rects.enumerated() {
            if r.width == 0 || r.height == 0 { zero.insert(ids[k]); continue }
            if r.x < maxX && r.x + r.width > minX && r.y < maxY && r.y + r.height > minY { expected.insert(ids[k]) }
        }
        let seen = on.subtracting(zero)
        require(seen == expected, "step \(step): on screen by enter/leave \(seen.sorted()), by the rects \(expected.sorted()) at \(offset) \(viewport)")
    }
}

/// The same step on a session restored from a snapshot (docs/api.md "Many instances": a session moves
/// between instances with its state; a snapshot names the stored layout and the edits that made
/// its version) answers what the original answered: the same plan as the client reads it (the
/// encoded bytes), or the same refusal.
func requireSameOutcome(_ a: Result<Plan, SessionError>, _ session: ViewportSession, _ b: Result<Plan, SessionError>, _ twin: ViewportSession, step: Int) {
    switch (a, b) {
    case (.success(let p), .success(let q)):
        var w = JSONWriter()
        PlanEncoder.encode(p, layout: session.layout, into: &w)
        var v = JSONWriter()
        PlanEncoder.encode(q, layout: twin.layout, into: &v)
        require(w.bytes == v.bytes, "step \(step): the restored session answered \(escaped(v.bytes)), the original \(escaped(w.bytes))")
    case (.failure(let e), .failure(let f)):
        require("\(e)" == "\(f)", "step \(step): the restored session refused with \(f), the original with \(e)")
    default:
        fatalError("fuzz check failed: step \(step): the original answered \(a), the restored session \(b)")
    }
}

/// How many items a full check of every step may cover; past it, a sample, and a full check at the end.
let fullCheckLimit = 400

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    guard let made = makeLayout(&input) else { return }
    let layout = made.0
    var model = made.1
    adoptLanes(&model, from: layout)
    var geometry = model.geometry()
    checkLayout(layout, model, geometry, "built")

    var configuration = SessionConfiguration(viewport: Size(width: input.pick([375, 320, 0, 1000]), height: input.pick([667, 300, 2000, 0.5])))
    let ids = model.ids
    if input.bool() && !ids.isEmpty {
        let r = geometry.rects[input.int(in: 0...(ids.count - 1))]
        let shift = Double(input.int(in: -200...200))
        configuration.offset = model.axis == .y ? Point(x: 0, y: r.y + shift) : Point(x: r.x + shift, y: 0)
    } else {
        configuration.offset = Point(x: input.coordinate(), y: input.coordinate())
    }
    configuration.buffer = input.pick([0, 20, 37.5, Buffer(Double(input.int(in: 0...800))), Buffer(ahead: Double(input.int(in: 0...800)), behind: Double(input.int(in: 0...800)))])
    if input.byte() % 4 == 0 { configuration.insets = Insets(top: Double(input.int(in: 0...100)), left: 0, bottom: Double(input.int(in: 0...100)), right: 0) }
    configuration.pool = input.pick([PoolCaps(), PoolCaps(max: 0), PoolCaps(max: 2, perReuse: ["a": 0]), PoolCaps(perReuse: ["b": 1])])
    configuration.exposure = input.bool()
    configuration.maxViews = 10_000
    trace("configuration \(configuration)")
    guard var session = try? ViewportSession(layout: layout, configuration: configuration) else { return }
    var client = Client(layout: model.modelLayout(rects: geometry.rects), caps: configuration.pool)
    var viewport = configuration.viewport
    client.apply(session.lastPlan, newLayout: nil)
    var exposure = ExposureModel()
    if configuration.exposure {
        exposure.apply(session.lastPlan, oldIDs: ids, newIDs: ids, step: 0)
        if model.exact { exposure.check(model, rects: geometry.rects, offset: session.lastPlan.offset, viewport: viewport, step: 0) }
    }
    client.check(session)
    if model.exact { client.checkRegion(offset: session.lastPlan.offset, viewport: viewport, buffer: configuration.buffer, motion: (0, 0)) }
    requireFinite(session.lastPlan, session, step: 0)

    // The plan answered last: a retry answers it again, as it was (contentSize included).
    var answered = session.lastPlan
    var removed: [String] = []
    var fresh = 0
    // A quarter of the inputs snapshot the session at a step chosen by their length (no input
    // bytes taken, so the corpus keeps its meaning) and run the rest on the restored twin too.
    let snapshotStep = bytes.count % 4 == 0 ? 1 + bytes.count / 4 % 12 : 0
    var twin: ViewportSession?
    var edits = 0
    for step in 1...40 {
        if input.isAtEnd { break }
        if step == snapshotStep {
            let saved = session.snapshot()
            let restored = try? ViewportSession(restoring: saved) { $0 == layout.digest ? layout : nil }
            guard let restored else { fatalError("fuzz check failed: step \(step): the session's snapshot cannot be restored") }
            require(restored.snapshot() == saved, "step \(step): a restored session's snapshot differs from the one it was restored from")
            twin = restored
        }
        let before = Snapshot(session)
        let beforeLayout = session.layout
        let seq: UInt64? = switch input.byte() % 8 {
        case 0: nil
        case 1: session.seq
        case 2: session.seq &+ 2
        default: session.seq + 1
        }
        if input.byte() % 3 == 0 {
            // A scroll update: near an item, a small move, or anywhere.
            let ids = model.ids
            var offset: Point
            switch input.byte() % 4 {
            case 0 where !ids.isEmpty:
                let r = geometry.rects[input.int(in: 0...(ids.count - 1))]
                offset = Point(x: session.offset.x, y: session.offset.y)
                if model.axis == .y { offset.y = r.y + Double(input.int(in: -400...400)) } else { offset.x = r.x + Double(input.int(in: -400...400)) }
            case 1: offset = Point(x: session.offset.x + Double(input.int(in: -60...60)), y: session.offset.y + Double(input.int(in: -600...600)))
            case 2: offset = Point(x: session.offset.x, y: session.scrollRange(model.axis).upper)
            default: offset = Point(x: input.coordinate(), y: input.coordinate())
            }
            var update = ViewportUpdate(offset: offset)
            if input.byte() % 8 == 0 { update.size = Size(width: input.pick([375, 800, 0]), height: input.pick([667, 200, 3000])) }
            if input.bool() { update.velocity = Point(x: 0, y: Double(input.int(in: -3000...3000))) }
            update.seq = seq
            trace("step \(step): \(update)")
            let outcome = Result { () throws(SessionError) in try session.apply(update) }
            trace("  -> \(outcome)")
            if var t = twin {
                let again = Result { () throws(SessionError) in try t.apply(update) }
                requireSameOutcome(outcome, session, again, t, step: step)
                twin = t
            }
            switch outcome {
            case .failure:
                require(Snapshot(session) == before && session.layout === beforeLayout, "a refused update changed the session (step \(step))")
            case .success(let plan):
                if seq == before.seq {
                    require(plan == answered && Snapshot(session) == before, "a retry changed the session or answered another plan (step \(step))")
                    continue
                }
                require(session.seq == before.seq + 1 && plan.seq == session.seq, "seq \(session.seq) after \(before.seq)")
                require(session.layout === beforeLayout, "an update changed the layout (step \(step))")
                answered = plan
                viewport = update.size ?? viewport
                client.apply(plan, newLayout: nil)
                if configuration.exposure {
                    let ids = model.ids
                    exposure.apply(plan, oldIDs: ids, newIDs: ids, step: step)
                    if model.exact { exposure.check(model, rects: geometry.rects, offset: plan.offset, viewport: viewport, step: step) }
                }
                client.check(session)
                func sign(_ v: Double?, _ from: Double, _ to: Double) -> Int {
                    if let v, v != 0 { return v > 0 ? 1 : -1 }
                    return to > from ? 1 : to < from ? -1 : 0
                }
                if model.exact {
                    let motion = (x: sign(update.velocity?.x, before.lastPlan.offset.x, plan.offset.x), y: sign(update.velocity?.y, before.lastPlan.offset.y, plan.offset.y))
                    client.checkRegion(offset: plan.offset, viewport: viewport, buffer: configuration.buffer, motion: motion)
                }
                requireFinite(plan, session, step: step)
            }
            continue
        }

        // An edit.
        let edit = makeEdit(&input, model, removed: removed, fresh: &fresh)
        let anchor = input.pick(EditAnchor.allCases)
        let (next, refusal) = applyModel(edit, to: model)
        trace("step \(step): edit resize \(edit.resize.map { "\($0.id) \($0.size)" }) insert \(edit.insert.map { "\($0.place) \($0.items.map { "\($0.id.prefix(12)) \(String(describing: $0.size)) \(String(describing: $0.reuse))" })" }) remove \(edit.remove) anchor \(anchor) seq \(String(describing: seq)); model: \(refusal ?? "accepted")")
        let outcome = Result { () throws(SessionError) in try session.apply(edit, anchor: anchor, seq: seq) }
        trace("  -> \(outcome)")
        if var t = twin {
            let again = Result { () throws(SessionError) in try t.apply(edit, anchor: anchor, seq: seq) }
            requireSameOutcome(outcome, session, again, t, step: step)
            twin = t
        }
        if seq == before.seq {
            guard case .success(let plan) = outcome else { fatalError("fuzz check failed: a retry was refused (step \(step)): \(outcome)") }
            require(plan == answered && Snapshot(session) == before && session.layout === beforeLayout && session.edits == edits,
                "a retry changed the session or answered another plan (step \(step)): \(plan) after \(answered)")
            continue
        }
        let conflict = seq.map { $0 != before.seq &+ 1 } ?? false
        switch outcome {
        case .failure(let error):
            if let refusal {
                guard case .invalid = error else { fatalError("fuzz check failed: an invalid edit (\(refusal)) answered \(error) (step \(step))") }
            } else {
                require(conflict, "an edit the model accepts was refused (step \(step)): \(error)")
                guard case .sequenceConflict = error else { fatalError("fuzz check failed: a seq conflict answered \(error) (step \(step))") }
            }
            require(Snapshot(session) == before && session.layout === beforeLayout && session.edits == edits, "a refused edit changed the session (step \(step))")
        case .success(let plan):
            require(refusal == nil, "an edit the model refuses (\(refusal ?? "")) was accepted (step \(step))")
            require(!conflict, "an edit with seq \(String(describing: seq)) after \(before.seq) was accepted (step \(step))")
            require(session.seq == before.seq + 1 && plan.seq == session.seq, "seq \(session.seq) after \(before.seq)")
            edits += 1
            answered = plan
            require(session.edits == edits, "edits \(session.edits), the model's \(edits)")
            for id in edit.remove { removed.append(id) }
            let oldModel = model
            let oldGeometry = geometry
            model = next
            adoptLanes(&model, from: session.layout)
            geometry = model.geometry()
            // The content size: in the plan exactly when it changed.
            if oldGeometry.contentSize != geometry.contentSize && model.exact && oldModel.exact {
                require(plan.contentSize == session.layout.contentSize, "the content size changed to \(session.layout.contentSize), the plan carries \(String(describing: plan.contentSize))")
            }
            require(plan.contentSize == nil ? session.layout.contentSize == beforeLayout.contentSize : plan.contentSize == session.layout.contentSize && session.layout.contentSize != beforeLayout.contentSize,
                "plan content size \(String(describing: plan.contentSize)), layout \(beforeLayout.contentSize) → \(session.layout.contentSize)")

            // The offset (docs/api.md anchors), from the model's rects before and after.
            let oldIDs = oldModel.ids
            let newIDs = model.ids
            var newIndex: [String: Int] = [:]
            for (k, id) in newIDs.enumerated() { newIndex[id] = k }
            let o = before.offset
            if anchor == .none {
                require(plan.offset == o, "anchor none moved the offset \(o) to \(plan.offset)")
            } else if oldModel.exact && model.exact {
                let axis = model.axis
                func range(_ axis: Axis, _ content: Size) -> (Double, Double) {
                    let (lead, trail) = axis == .x ? (configuration.insets.left, configuration.insets.right) : (configuration.insets.top, configuration.insets.bottom)
                    let far = (axis == .x ? content.width : content.height) + trail - (axis == .x ? viewport.width : viewport.height)
                    return (-lead, max(-lead, far))
                }
                let mainOffset = axis == .y ? o.y : o.x
                // At the end: within 1 point of the largest offset, on either side (API.md).
                if anchor == .end && abs(mainOffset - range(axis, oldGeometry.contentSize).1) <= 1 {
                    let (_, upper) = range(axis, geometry.contentSize)
                    let (cl, cu) = range(axis.cross, geometry.contentSize)
                    let crossOffset = axis == .y ? o.x : o.y
                    let expected = axis == .y ? Point(x: max(cl, min(crossOffset, cu)), y: upper) : Point(x: upper, y: max(cl, min(crossOffset, cu)))
                    require(plan.offset == expected, "anchor end at the end: offset \(plan.offset), the new end \(expected)")
                } else {
                    // The first item on screen (no buffer) in the previous order that survives.
                    let screen = (minX: o.x, minY: o.y, maxX: o.x + viewport.width, maxY: o.y + viewport.height)
                    var anchorItem: (old: Rect, new: Rect, id: String)?
                    for (k, r) in oldGeometry.rects.enumerated() where r.x < screen.maxX && r.x + r.width > screen.minX && r.y < screen.maxY && r.y + r.height > screen.minY {
                        if let j = newIndex[oldIDs[k]] {
                            anchorItem = (r, geometry.rects[j], oldIDs[k])
                            break
                        }
                    }
                    if let a = anchorItem {
                        let scale = abs(o.x) + abs(o.y) + abs(a.old.x) + abs(a.old.y) + abs(a.new.x) + abs(a.new.y)
                        let exactOffset = isEighths(o.x) && isEighths(o.y) && scale < 0x1p48
                        require(close(a.new.x - plan.offset.x, a.old.x - o.x, tolerance: scale * 1e-15, exact: exactOffset)
                            && close(a.new.y - plan.offset.y, a.old.y - o.y, tolerance: scale * 1e-15, exact: exactOffset),
                            "anchor \(anchor): \(a.id) was at \(a.old) with offset \(o), is at \(a.new) with offset \(plan.offset)")
                    }
                }
            }

            // Views: items materialized before and after keep theirs, under `move` exactly when their rect changed.
            let shownBefore = client.shown
            client.apply(plan, newLayout: model.modelLayout(rects: geometry.rects))
            if configuration.exposure {
                exposure.reused.formUnion(edit.remove)
                exposure.apply(plan, oldIDs: oldIDs, newIDs: newIDs, step: step)
                if model.exact { exposure.check(model, rects: geometry.rects, offset: plan.offset, viewport: viewport, step: step) }
            }
            client.check(session)
            if oldModel.exact && model.exact {
                let moved = Set(plan.move.map { newIDs[$0.item] })
                var oldIndex: [String: Int] = [:]
                for (k, id) in oldIDs.enumerated() where shownBefore[id] != nil { oldIndex[id] = k }
                for (id, view) in client.shown where shownBefore[id] == view {
                    guard let ok = oldIndex[id], let nk = newIndex[id] else { continue }
                    let changed = oldGeometry.rects[ok] != geometry.rects[nk]
                    require(moved.contains(id) == changed, "\(id) kept view \(view): rect \(oldGeometry.rects[ok]) → \(geometry.rects[nk]), under move: \(moved.contains(id))")
                }
                client.checkRegion(offset: plan.offset, viewport: viewport, buffer: configuration.buffer, motion: (0, 0))
            }
            requireFinite(plan, session, step: step)
        }
        let count = model.ids.count
        checkLayout(session.layout, model, geometry, sample: count <= fullCheckLimit ? 1 : count / 64, phase: step, "after step \(step)")
    }
    checkLayout(session.layout, model, geometry, "at the end")
    requireFinite(session.lastPlan, session, step: 0)
    if let twin { require(twin.snapshot() == session.snapshot(), "at the end, the restored session's snapshot differs from the original's") }
    if edits > 0 {
        // The session as another instance would take it over now: its history may have folded
        // into a checkpoint (the version's binary form), decoded under the stored layout's id.
        let saved = session.snapshot()
        guard let restored = try? ViewportSession(restoring: saved, layouts: { $0 == layout.digest ? layout : nil }) else {
            fatalError("fuzz check failed: at the end, the session's snapshot cannot be restored")
        }
        require(restored.snapshot() == saved, "at the end, a restored session's snapshot differs from the one it was restored from")
        require(restored.layout.digest == layout.digest && restored.layout.reuseNames == session.layout.reuseNames, "at the end, the restored layout's id or reuse classes differ")
        checkLayout(restored.layout, model, geometry, "restored at the end")
    }
    if edits > 0 && model.ids.count <= fullCheckLimit { requireRoundTrip(session.layout, model, geometry) }
}
