#if canImport(Glibc)
import Glibc
#endif
import ViewportCore

/// The planner alone on the feed layout, timed in thread CPU time, best
/// of `rounds`: small steps (7 pt, a 60 Hz drag), jumps (random offsets: the whole materialized
/// set leaves and another enters) and flings (120 pt), and moves that stay inside the safe window
/// (what most small steps cost). The traces take turns within each
/// round, so a burst of noise from the shared machine hits them alike.
///
///   swift run -c release viewport-bench 1000000 core [rounds]
///   swift run -c release viewport-bench 1000000 jumps     (only jumps, for a while: for perf)
@MainActor
func runCoreBench(layout: Layout, viewport: Size, smallSteps: [Double], jumps: [Double], flings: [Double], rounds: Int, onlyStill: Bool = false) throws {
    // Moves of a quarter point around the small steps' start: every one stays inside the safe
    // window, so this is the cost of an update that changes nothing (most small steps).
    let still = smallSteps.isEmpty ? [] : (0..<smallSteps.count).map { smallSteps[0] + Double($0 % 4) * 0.25 }
    func run(_ offsets: [Double]) throws -> (seconds: Double, changes: Int, leaving: Int) {
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: viewport))
        var changes = 0
        var leaving = 0
        let start = cpuNow()
        for y in offsets {
            let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y)))
            changes &+= plan.createCount &+ plan.reuseCount
            leaving &+= plan.recycleCount &+ plan.discardCount
        }
        return (cpuNow() - start, changes, leaving)
    }
    let traces = [
        ("small steps (7 pt)", onlyStill ? [] : smallSteps), ("still (inside the safe window)", still), ("jumps (random offsets)", jumps),
        ("flings (120 pt steps)", flings),
    ]
    var best = [Double](repeating: .infinity, count: traces.count)
    var changes = [Int](repeating: 0, count: traces.count)
    var leaving = [Int](repeating: 0, count: traces.count)
    for _ in 0..<rounds {
        for (k, trace) in traces.enumerated() {
            let r = try run(trace.1)
            best[k] = min(best[k], r.seconds)
            changes[k] = r.changes
            leaving[k] = r.leaving
        }
    }
    for (k, trace) in traces.enumerated() where !trace.1.isEmpty {
        let n = Double(trace.1.count)
        line(
            "core \(trace.0): updates/s",
            "\(fmt(n / best[k] / 1e6, 3)) M  (\(fmt(best[k] / n * 1e9, 0)) ns; \(fmt(Double(changes[k]) / n, 2)) enter, \(fmt(Double(leaving[k]) / n, 2)) leave per update)")
    }
}

/// Heap bytes per session: 10,000 sessions (or one per 1,000 pt of content) with ~13 items shown,
/// each scrolled a little so pools exist.
func sessionBytes(layout: Layout) throws {
    let sessionCount = min(10_000, max(1, Int(layout.contentSize.height / 1000) - 1))
    var sessions: [ViewportSession] = []
    sessions.reserveCapacity(sessionCount)
    let before = heapBytes()
    for i in 0..<sessionCount {
        var s = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 1000), offset: Point(x: 0, y: Double(i) * 1000)))
        _ = try s.apply(ViewportUpdate(offset: Point(x: 0, y: Double(i) * 1000 + 400)))
        sessions.append(s)
    }
    let bytes = Double(heapBytes() - before) / Double(sessionCount)
    let shown = sessions.reduce(0) { $0 + $1.visible.count } / sessionCount
    line("bytes per session", "\(fmt(bytes, 0))  (\(shown) items shown, \(sessionCount) sessions)")
}
