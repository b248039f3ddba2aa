#if canImport(Glibc)
import Glibc
#endif
import ViewportCore

/// This thread's CPU time in seconds: the machine is shared, and CPU time leaves out the time
/// other processes run instead of this one (wall time does not).
func cpuNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Stacks, timed in thread CPU time: building a stack of estimated items, a PATCH-sized batch of resizes on a
/// session's copy of a shared stack, inserts, queries, and memory per item and per edit.
///
///   swift run -c release viewport-bench 1000000 stack
func runStackBench(count: Int) throws {
    print("stack, \(count) items\n")
    var rng = BenchRandom(state: 7)

    // Build: every item estimated (a chat or feed posted before anything was measured).
    let items = (0..<count).map { StackSection.Item(uid: Int32($0)) }
    var before = heapBytes()
    var t0 = cpuNow()
    let section = try StackSection(spacing: 4, estimate: Size(width: 375, height: 80), reuseClass: 0, items: items)
    let buildSeconds = cpuNow() - t0
    // `items` would be freed right after its last use, inside the measurement.
    let sectionBytes = withExtendedLifetime(items) { heapBytes() - before }
    line("build, estimates (section)", "\(fmt(buildSeconds * 1000, 1)) ms, \(fmt(Double(sectionBytes) / Double(count), 1)) B/item")
    let entries = ContiguousArray(section.tree.entries)
    t0 = cpuNow()
    let bare = StackTree(entries: entries, laneCount: 1, spacing: 4)
    line("build, tree alone from entries", "\(fmt((cpuNow() - t0) * 1000, 1)) ms")
    _ = bare.count
    let measured = (0..<count).map { StackSection.Item(uid: Int32($0), size: Size(width: 180, height: Double(80 + $0 % 160))) }
    t0 = cpuNow()
    let masonry = try StackSection(spacing: 10, lanes: 2, laneSize: 180, items: measured)
    line("build, 2-lane masonry, measured", "\(fmt((cpuNow() - t0) * 1000, 1)) ms")

    // A PATCH of 10 measured sizes near the viewport: uid → rank, then resize, on a copy that
    // shares the stored stack (the first resize copies the path, the others reuse it). Each
    // iteration drops the previous copy, as a session replacing its layout would.
    let batches = 100_000
    var session = section
    var moved = 0.0
    t0 = cpuNow()
    for _ in 0..<batches {
        session = section
        let around = Int(rng.next() % UInt64(count - 40))
        for k in 0..<10 {
            guard let rank = session.rank(ofUID: Int32(around + 3 * k)) else { fatalError("uid not found") }
            try session.resize(at: rank, to: Size(width: 375, height: 60 + Double(k)))
        }
        moved += session.rect(at: around + 30).y
    }
    let batchSeconds = (cpuNow() - t0) / Double(batches)
    line("PATCH of 10 resizes (lookup + resize)", "\(fmt(batchSeconds * 1e6, 2)) µs, \(fmt(batchSeconds * 1e9 / 10, 0)) ns/op")
    // The same without the uid lookups, and one resize alone (a path copy each).
    t0 = cpuNow()
    for _ in 0..<batches {
        session = section
        let around = Int(rng.next() % UInt64(count - 40))
        for k in 0..<10 { try session.resize(at: around + 3 * k, to: Size(width: 375, height: 60 + Double(k))) }
    }
    line("  10 resizes by rank", "\(fmt((cpuNow() - t0) / Double(batches) * 1e6, 2)) µs")
    t0 = cpuNow()
    for _ in 0..<batches {
        session = section
        try session.resize(at: Int(rng.next() % UInt64(count)), to: Size(width: 375, height: 61))
    }
    if CommandLine.arguments.dropFirst(3).first == "profile" {
        // For perf: only path-copying resizes, for a while.
        for _ in 0..<3_000_000 {
            session = section
            try session.resize(at: Int(rng.next() % UInt64(count)), to: Size(width: 375, height: 61))
        }
        exit(0)
    }
    line("  1 resize (copies the path)", "\(fmt((cpuNow() - t0) / Double(batches) * 1e9, 0)) ns")
    t0 = cpuNow()
    var ranks = 0
    for _ in 0..<batches { ranks &+= section.rank(ofUID: Int32(rng.next() % UInt64(count))) ?? 0 }
    line("  rank(ofUID:)", "\(fmt((cpuNow() - t0) / Double(batches) * 1e9, 0)) ns")

    // Inserts: a chat appending at the end, history prepended at the start, a message in the middle.
    var chat = section
    let inserts = 100_000
    t0 = cpuNow()
    for k in 0..<inserts { try chat.insert([StackSection.Item(uid: Int32(count + k))], at: .end) }
    line("insert at end, one at a time", "\(fmt((cpuNow() - t0) / Double(inserts) * 1e9, 0)) ns/insert")
    t0 = cpuNow()
    for k in 0..<inserts { try chat.insert([StackSection.Item(uid: Int32(count + inserts + k))], at: .start) }
    line("insert at start, one at a time", "\(fmt((cpuNow() - t0) / Double(inserts) * 1e9, 0)) ns/insert")
    t0 = cpuNow()
    for k in 0..<inserts {
        let r = Int(rng.next() % UInt64(chat.count))
        try chat.insert([StackSection.Item(uid: Int32(count + 2 * inserts + k))], at: .after(r))
    }
    line("insert after a random item", "\(fmt((cpuNow() - t0) / Double(inserts) * 1e9, 0)) ns/insert, \(chat.tree.relabelledEntries) relabelled")
    t0 = cpuNow()
    try chat.insert((0..<100_000).map { StackSection.Item(uid: Int32(count + 3 * inserts + $0)) }, at: .after(count / 2))
    line("insert a run of 100,000 in the middle", "\(fmt((cpuNow() - t0) * 1000, 2)) ms")
    t0 = cpuNow()
    for _ in 0..<inserts { chat.remove(at: Int(rng.next() % UInt64(chat.count))) }
    line("remove a random item", "\(fmt((cpuNow() - t0) / Double(inserts) * 1e9, 0)) ns/remove")

    // Queries: the viewport of a phone (375 × 667 + 20 buffer) at random offsets.
    let queries = 200_000
    let height = section.extent
    var found = 0
    t0 = cpuNow()
    for _ in 0..<queries {
        let y = Double(rng.next() % UInt64(height))
        section.forEachItem(minX: -20, minY: y - 20, maxX: 395, maxY: y + 687) { rank, _ in found &+= rank & 1 }
    }
    line("box query (viewport), 1 lane, random", "\(fmt((cpuNow() - t0) / Double(queries) * 1e9, 0)) ns/query")
    // Scrolling: 7 pt steps, as a finger drag asks the planner.
    let scrollMode = CommandLine.arguments.dropFirst(3).first == "profile-query"
    let steps = scrollMode ? 20_000_000 : 1_000_000
    t0 = cpuNow()
    for k in 0..<steps {
        let y = height / 3 + Double(k % 100_000) * 7
        section.forEachItem(minX: -20, minY: y - 20, maxX: 395, maxY: y + 687) { rank, _ in found &+= rank & 1 }
    }
    line("box query (viewport), 1 lane, 7 pt steps", "\(fmt((cpuNow() - t0) / Double(steps) * 1e9, 0)) ns/query")
    if scrollMode { exit(0) }
    t0 = cpuNow()
    let masonryHeight = masonry.extent
    for _ in 0..<queries {
        let y = Double(rng.next() % UInt64(masonryHeight))
        masonry.forEachItem(minX: -20, minY: y - 20, maxX: 395, maxY: y + 687) { rank, _ in found &+= rank & 1 }
    }
    line("box query (viewport), 2-lane masonry, random", "\(fmt((cpuNow() - t0) / Double(queries) * 1e9, 0)) ns/query")
    t0 = cpuNow()
    var sum = 0.0
    for _ in 0..<queries { sum += section.rect(at: Int(rng.next() % UInt64(count))).y }
    line("rect(at:) random", "\(fmt((cpuNow() - t0) / Double(queries) * 1e9, 0)) ns")
    t0 = cpuNow()
    for _ in 0..<queries { sum += section.nearestLeadingEdge(to: Double(rng.next() % UInt64(height)))?.edge ?? 0 }
    line("nearest leading edge (paging items)", "\(fmt((cpuNow() - t0) / Double(queries) * 1e9, 0)) ns")

    // Memory: the stored stack per item, and what each session's edit keeps alive.
    line("memory per item (section, heap)", "\(fmt(Double(sectionBytes) / Double(count), 1)) B")
    let versions = 10_000
    var kept: [StackSection] = []
    kept.reserveCapacity(versions)
    before = heapBytes()
    for _ in 0..<versions {
        var copy = section
        let around = Int(rng.next() % UInt64(count - 40))
        for k in 0..<10 { try copy.resize(at: around + 3 * k, to: Size(width: 375, height: 50)) }
        kept.append(copy)
    }
    line("memory per PATCH of 10 resizes (kept)", "\(fmt(Double(heapBytes() - before) / Double(versions), 0)) B")
    kept = []
    before = heapBytes()
    for k in 0..<versions {
        var copy = section
        try copy.insert([StackSection.Item(uid: Int32(count + k))], at: .after(Int(rng.next() % UInt64(count))))
        kept.append(copy)
    }
    line("memory per insert of 1 item (kept)", "\(fmt(Double(heapBytes() - before) / Double(versions), 0)) B")
    print("  (checksums \(moved) \(found) \(sum) \(ranks))\n")
}

/// SplitMix64 for the stack benchmark (independent of the main-actor generator in main.swift).
struct BenchRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
