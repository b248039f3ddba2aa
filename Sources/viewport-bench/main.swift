// viewport-bench: measures the planning core in a release build.
//
//   swift run -c release viewport-bench [items] [stack | stackapi | small | service-load]
//
// Prints index build time and bytes per item, planned updates per second for small steps and for
// jumps, bytes per session, and the same updates through two baselines (LazyScrollView's sorted
// arrays with set intersection, and a linear scan) as ratios measured in the same run.
//
//   swift run -c release viewport-bench [items] buffer
//
// only compares a direction-aware buffer (`{"ahead": 600, "behind": 40}`) with symmetric ones on
// the small-step and fling traces, side by side in one run.
//
//   swift run -c release viewport-bench 10 service-load
//
// the load script's three shapes (empty plans, 97 pt steps, 5003 pt jumps) through the core alone and
// through the service's request handler in process: ns and malloc calls per request.
//
//   swift run -c release viewport-bench 0 session-memory
//
// heap bytes per session (20,000 sessions on the 10,000-row list) opened by the core alone and
// through the service's handler in process, and what one 97 pt step adds.
//
//   viewport-bench 0 serve PORT
//
// runs the real server on 127.0.0.1:PORT until killed (scripts/callgrind-requests.py runs it
// under valgrind, which cannot start viewportd itself here).
#if canImport(Glibc)
import Glibc
#endif
import CHeapStats
import ViewportCore
import ViewportHTTP
import ViewportService

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Bytes allocated on the heap right now.
func heapBytes() -> Int { Int(viewportd_heap_in_use()) }

func line(_ name: String, _ value: String) {
    print(name + String(repeating: " ", count: max(1, 46 - name.count)) + value)
}

func fmt(_ v: Double, _ digits: Int = 2) -> String {
    let p = pow(10.0, Double(digits))
    return String((v * p).rounded() / p)
}

// Modes that need no 1M-item feed (ServiceBench.swift).
switch CommandLine.arguments.dropFirst(2).first {
case "service-load":
    try ServiceBench.runServiceLoad()
    exit(0)
case "net":
    try NetBench.run(Array(CommandLine.arguments.dropFirst(3)))
    exit(0)
case "session-memory":
    try ServiceBench.runSessionMemory()
    exit(0)
case "open-sessions":
    try NetBench.openSessions(Array(CommandLine.arguments.dropFirst(3)))
    exit(0)
case "serve":
    try ServiceBench.serve(port: CommandLine.arguments.dropFirst(3).first.flatMap { Int($0) } ?? 0)
default:
    break
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000_000 : 1_000_000
/// `viewport-bench N small`: only the small-step measurement (for profiling it).
let onlySmallSteps = CommandLine.arguments.dropFirst(2).first == "small"
/// `viewport-bench N buffer`: only the direction-aware buffer comparison.
let onlyBuffers = CommandLine.arguments.dropFirst(2).first == "buffer"
print("viewport-bench: \(count) items, release build\n")
/// `viewport-bench N stack`: only the stack measurements (StackBench.swift).
if CommandLine.arguments.dropFirst(2).first == "stack" {
    try runStackBench(count: count)
    exit(0)
}
/// `viewport-bench N stackapi`: stacks through sessions and HTTP (StackAPIBench.swift).
if CommandLine.arguments.dropFirst(2).first == "stackapi" {
    try runStackAPIBench(count: count)
    exit(0)
}

// A feed: two columns of cards of varying heights, plus a full-width banner every 50 rows.
var specs: [(String, Rect, String?)] = []
specs.reserveCapacity(count)
var columnY = [0.0, 0.0]
var seed: UInt64 = 42
@MainActor func nextRandom() -> UInt64 {
    seed = seed &* 6364136223846793005 &+ 1442695040888963407
    return seed >> 33
}
for i in 0..<count {
    if i % 100 == 99 {
        let y = max(columnY[0], columnY[1])
        specs.append(("banner-\(i)", Rect(x: 0, y: y, width: 375, height: 120), "banner"))
        columnY = [y + 130, y + 130]
    } else {
        let column = columnY[0] <= columnY[1] ? 0 : 1
        let height = Double(80 + nextRandom() % 160)
        specs.append(("card-\(i)", Rect(x: column == 0 ? 5 : 190, y: columnY[column], width: 180, height: height), "card"))
        columnY[column] += height + 10
    }
}

let heapBefore = heapBytes()
var t0 = now()
var builder = LayoutBuilder(expectedCount: count)
for (id, rect, reuse) in specs { try builder.append(id: id, rect: rect, reuse: reuse) }
let layout = try builder.build()
let layoutSeconds = now() - t0
let layoutBytes = heapBytes() - heapBefore
t0 = now()
let allRects = ContiguousArray(layout.rects)
let index = SpatialIndex(rects: allRects)
let indexSeconds = now() - t0
specs = []

line("layout build (validate, ids, digest, index)", "\(fmt(layoutSeconds * 1000, 1)) ms")
// The content-addressed id alone (SHA-256 over the canonical serialization), best of 5.
var digestSeconds = Double.infinity
for _ in 0..<5 {
    let start = now()
    precondition(LayoutBuilder.digest(of: layout) == layout.digest)
    digestSeconds = min(digestSeconds, now() - start)
}
line("layout digest alone (best of 5)", "\(fmt(digestSeconds * 1000, 1)) ms  (\(fmt(Double(count) / digestSeconds / 1e6, 2)) M items/s)")
// The id lookup alone (the id table's hash table), best of 5.
var idTableSeconds = Double.infinity
for _ in 0..<5 {
    let start = now()
    precondition(LayoutBuilder.rebuildIDLookup(of: layout))
    idTableSeconds = min(idTableSeconds, now() - start)
}
line("id lookup alone (best of 5)", "\(fmt(idTableSeconds * 1000, 1)) ms")
line("index build alone", "\(fmt(indexSeconds * 1000, 1)) ms  (\(index.count) rects)")
line("bytes per item (heap, whole layout)", fmt(Double(layoutBytes) / Double(count), 1))
line("bytes per item (layout.memoryBytes)", fmt(Double(layout.memoryBytes) / Double(count), 1))
print("")

let viewport = Size(width: 375, height: 667)
let contentHeight = layout.contentSize.height

/// Runs `steps` updates of a scroll trace and returns updates per second.
@MainActor func runTrace(_ offsets: [Double]) throws -> (rate: Double, changes: Int) {
    var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: viewport))
    var changes = 0
    let start = now()
    for y in offsets {
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y)))
        changes &+= plan.createCount &+ plan.reuseCount
    }
    return (Double(offsets.count) / (now() - start), changes)
}

/// Small steps and flings with `{"ahead": 600, "behind": 40}` against symmetric buffers of 20 (the
/// default) and 600 (its `max`). The machine is noisy (shared cores), so the three sessions take
/// the same trace in interleaved chunks of 10,000 updates, in a rotating order, each timing its
/// own chunks: a burst of noise hits all three alike. Three rounds; the best total of each.
@MainActor func compareBuffers(smallSteps: [Double], flings: [Double]) throws {
    let buffers: [(String, Buffer)] = [("20", 20), ("600/40", Buffer(ahead: 600, behind: 40)), ("600", 600)]
    for (name, trace, velocity) in [
        ("small steps (7 pt)", smallSteps, false), ("small steps with velocity", smallSteps, true),
        ("flings (120 pt)", flings, false), ("flings with velocity", flings, true),
    ] {
        var best = [Double](repeating: .infinity, count: buffers.count)
        var entering = [Int](repeating: 0, count: buffers.count)
        for _ in 0..<3 {
            var sessions = try buffers.map { _, buffer in
                var configuration = SessionConfiguration(viewport: viewport)
                configuration.buffer = buffer
                return try ViewportSession(layout: layout, configuration: configuration)
            }
            var seconds = [Double](repeating: 0, count: buffers.count)
            var changes = [Int](repeating: 0, count: buffers.count)
            let chunk = 10_000
            for (c, start) in stride(from: 0, to: trace.count, by: chunk).enumerated() {
                let end = min(trace.count, start + chunk)
                for r in 0..<buffers.count {
                    let k = (c + r) % buffers.count
                    var last = start == 0 ? sessions[k].offset.y : trace[start - 1]
                    let t0 = now()
                    for y in trace[start..<end] {
                        let v: Point? = velocity ? Point(x: 0, y: (y - last) * 60) : nil
                        last = y
                        let plan = try sessions[k].apply(ViewportUpdate(offset: Point(x: 0, y: y), velocity: v))
                        changes[k] &+= plan.createCount &+ plan.reuseCount
                    }
                    seconds[k] += now() - t0
                }
            }
            for k in buffers.indices { best[k] = min(best[k], seconds[k]) }
            entering = changes
        }
        let rates = best.map { Double(trace.count) / $0 }
        line("buffer \(name): updates/s", zip(buffers, rates).map { "\($0.0.0): \(fmt($0.1 / 1e6, 3)) M" }.joined(separator: ", "))
        line("  600/40 ÷ 20, 600/40 ÷ 600", "\(fmt(rates[1] / rates[0], 3)), \(fmt(rates[1] / rates[2], 3))  (views entering: \(entering.map(String.init).joined(separator: " / ")))")
    }
}

// Small steps: a finger drag at 60 Hz, 7 pt per frame, down the first part of the feed and back.
let smallSteps = 2_000_000
var offsets: [Double] = []
offsets.reserveCapacity(smallSteps)
var y = contentHeight / 3
for i in 0..<smallSteps {
    y += (i / 20_000) % 2 == 0 ? 7 : -7
    offsets.append(y)
}
_ = try runTrace(Array(offsets.prefix(100_000)))  // warm up
let smallStepOffsets = offsets
let flingOffsets = (0..<500_000).map { contentHeight / 3 + Double($0 % 20_000) * 120 }
if onlyBuffers {
    try compareBuffers(smallSteps: smallStepOffsets, flings: flingOffsets)
    exit(0)
}
/// `viewport-bench N core [rounds]`: the planner alone, small steps, jumps and flings in CPU time
/// (CoreBench.swift); `viewport-bench N jumps [rounds]`: only jumps, 25 rounds by default (for perf);
/// `viewport-bench N still [rounds]`: only updates inside the safe window (for perf).
if let mode = CommandLine.arguments.dropFirst(2).first, mode == "core" || mode == "jumps" || mode == "still" {
    let jumpOffsets = (0..<200_000).map { _ in Double(nextRandom() % UInt64(contentHeight)) }
    let rounds = CommandLine.arguments.dropFirst(3).first.flatMap { Int($0) } ?? (mode == "core" ? 3 : 25)
    if mode == "jumps" {
        try runCoreBench(layout: layout, viewport: viewport, smallSteps: [], jumps: jumpOffsets, flings: [], rounds: rounds)
    } else if mode == "still" {
        try runCoreBench(layout: layout, viewport: viewport, smallSteps: smallStepOffsets, jumps: [], flings: [], rounds: rounds, onlyStill: true)
    } else {
        try runCoreBench(layout: layout, viewport: viewport, smallSteps: smallStepOffsets, jumps: jumpOffsets, flings: flingOffsets, rounds: rounds)
        try sessionBytes(layout: layout)
    }
    exit(0)
}
let small = try runTrace(offsets)
line("small steps (7 pt): updates/s", "\(fmt(small.rate / 1e6, 3)) M  (\(small.changes) views entering)")
if onlySmallSteps {
    for _ in 0..<4 { _ = try runTrace(offsets) }
    exit(0)
}

// Jumps: anywhere in the content.
let jumps = 200_000
offsets = (0..<jumps).map { _ in Double(nextRandom() % UInt64(contentHeight)) }
let jump = try runTrace(offsets)
line("jumps (random offsets): updates/s", "\(fmt(jump.rate / 1e6, 3)) M  (\(jump.changes / jumps) views entering per jump)")

// Flings: 120 pt per frame.
let fling = try runTrace(flingOffsets)
line("flings (120 pt steps): updates/s", "\(fmt(fling.rate / 1e6, 3)) M")

// Direction-aware buffers against symmetric ones, side by side.
try compareBuffers(smallSteps: smallStepOffsets, flings: flingOffsets)

// Layout swap: 30 items prepended above a 1M-item feed, anchored on the visible items.
do {
    t0 = now()
    var prepended = LayoutBuilder(expectedCount: layout.count + 30)
    for k in 0..<30 { try prepended.append(id: "history-\(k)", rect: Rect(x: 5, y: Double(k) * 100, width: 365, height: 90), reuse: "card") }
    for i in 0..<layout.count {
        var r = layout.rects[i]
        r.y += 3000
        try prepended.append(id: layout.id(at: i), rect: r, reuse: layout.reuseName(of: i))
    }
    let next = try prepended.build()
    let buildSeconds = now() - t0
    var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: contentHeight / 2)))
    t0 = now()
    let plan = try session.changeLayout(to: next, anchor: .visible)
    line("layout swap, 1M items (diff only)", "\(fmt((now() - t0) * 1e6, 1)) µs  (\(plan.move.count) moved, new layout built in \(fmt(buildSeconds * 1000, 0)) ms)")
}

// A generated layout: the same number of items as one list section.
do {
    let before = heapBytes()
    t0 = now()
    var stack = SectionStack(axis: .y)
    var builder = LayoutBuilder()
    try stack.append(SectionSpec(id: "feed", reuse: "card", shape: .list(axis: nil, count: count, size: Size(width: 375, height: 120), spacing: 10)), to: &builder)
    let generated = try builder.build()
    let seconds = now() - t0
    line("generated list layout, \(count) items", "built in \(fmt(seconds * 1000, 0)) ms (digest), \(heapBytes() - before) bytes")
    var session = try ViewportSession(layout: generated, configuration: SessionConfiguration(viewport: viewport))
    let steps = 1_000_000
    var y = 0.0
    t0 = now()
    for i in 0..<steps {
        y += (i / 20_000) % 2 == 0 ? 7 : -7
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 1_000_000 + y)))
    }
    line("  small steps on it: updates/s", "\(fmt(Double(steps) / (now() - t0) / 1e6, 3)) M")
}

// Bytes per session: many sessions with ~15 items shown, each scrolled a little so pools exist.
try sessionBytes(layout: layout)
print("")

try runStackBench(count: count)

// Baselines on the same small-step trace (fewer updates: they are O(n) each).
let baselineSteps = 300
let baselineOffsets = (0..<baselineSteps).map { contentHeight / 3 + Double($0) * 7 }
do {
    t0 = now()
    let lazy = LazyScrollViewIndex(rects: allRects)
    line("LazyScrollView index build (two sorts)", "\(fmt((now() - t0) * 1000, 1)) ms")
    var shown = Set<Int>()
    var changes = 0
    t0 = now()
    for y in baselineOffsets {
        let now = lazy.items(in: Region(offset: Point(x: 0, y: y), viewport: viewport, buffer: 20))
        changes += now.subtracting(shown).count
        shown = now
    }
    let lazyRate = Double(baselineSteps) / (now() - t0)
    line("LazyScrollView small steps: updates/s", "\(fmt(lazyRate, 0))")
    line("  viewportd / LazyScrollView", "\(fmt(small.rate / lazyRate, 0))×")

    shown = []
    t0 = now()
    for y in baselineOffsets {
        let now = linearScan(allRects, Region(offset: Point(x: 0, y: y), viewport: viewport, buffer: 20))
        changes += now.subtracting(shown).count
        shown = now
    }
    let scanRate = Double(baselineSteps) / (now() - t0)
    line("linear scan small steps: updates/s", "\(fmt(scanRate, 0))")
    line("  viewportd / linear scan", "\(fmt(small.rate / scanRate, 0))×")
    _ = changes
}
