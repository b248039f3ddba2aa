#if canImport(Glibc)
import Glibc
#endif
import Logging
import ViewportCore
import ViewportService
import ViewportTestSupport

/// Stacks through the API: edits of a session's layout in the core (`session.apply` of
/// a PATCH, plan included), the same PATCH over HTTP on a 1M-item and a 1k-item stack side by
/// side, posting a 1M-item stack with estimates over HTTP, and the memory a session's edits keep.
///
///   swift run -c release viewport-bench 1000000 stackapi
func runStackAPIBench(count: Int) throws {
    print("stack API, \(count) items\n")
    var rng = BenchRandom(state: 11)

    // The core: a chat of `count` estimated messages, a phone's viewport in the middle.
    let t0 = now()
    let big = try chatLayout(count)
    line("layout build, \(count) estimated items", "\(fmt((now() - t0) * 1000, 1)) ms")
    let small = try chatLayout(1000)
    let viewport = Size(width: 375, height: 667)
    for (name, layout) in [("\(count)", big), ("1000", small)] {
        let middle = Point(x: 0, y: Double(layout.count / 2) * 84)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: viewport, offset: middle))
        // 10 measured sizes near the viewport (the shown items from the first on screen), two
        // sets alternating so every PATCH changes rects.
        let first = session.visible.map(\.item).first { session.layout.rects[$0].y + 80 > middle.y } ?? 0
        let ids = (0..<10).map { session.layout.id(at: first + $0) }
        let edits = (0..<2).map { set in StackEdit(resize: ids.enumerated().map { .init(id: $1, size: Size(width: 375, height: Double(60 + 40 * set + $0))) }) }
        let iterations = 20_000
        if CommandLine.arguments.dropFirst(3).first == "profile" {
            // For perf: only the PATCH of 10 resizes on the big stack, for a while.
            for k in 0..<2_000_000 { _ = try session.apply(edits[k & 1], anchor: .visible) }
            exit(0)
        }
        for anchor in EditAnchor.allCases {
            var moved = 0
            let c0 = cpuNow()
            for k in 0..<iterations { moved &+= try session.apply(edits[k & 1], anchor: anchor).move.count }
            let per = (cpuNow() - c0) / Double(iterations)
            line("core PATCH 10 resizes, \(name) items, \(anchor.rawValue)", "\(fmt(per * 1e6, 2)) µs  (\(moved / iterations) moves/plan)")
        }
        // A chat message arriving at the end while the viewport follows it.
        var chat = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: layout.contentSize.height - 667)))
        let c1 = cpuNow()
        for k in 0..<iterations {
            _ = try chat.apply(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "new\(k)", size: Size(width: 375, height: 50))])]), anchor: .end)
        }
        line("core PATCH insert 1 at the end, anchor end, \(name)", "\(fmt((cpuNow() - c1) / Double(iterations) * 1e6, 2)) µs")
        let c2 = cpuNow()
        for k in 0..<(iterations / 10) {
            let history = (0..<10).map { StackEdit.NewItem(id: "old\(k)-\($0)", size: Size(width: 375, height: 50)) }
            _ = try session.apply(StackEdit(insert: [.init(place: .start(section: "chat"), items: history)]), anchor: .visible)
        }
        line("core PATCH insert 10 at the start, visible, \(name)", "\(fmt((cpuNow() - c2) / Double(iterations / 10) * 1e6, 2)) µs")
    }
    print("")

    // Memory a session's edits keep: the copied paths of its stack and the id overlay. One
    // session, 2,000 PATCHes; the session keeps its latest version (and the previous, in its
    // last plan).
    let patches = 2_000
    for (name, spread) in [("near one another", false), ("scattered", true)] {
        var session = try ViewportSession(layout: big, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: 1000)))
        let before = heapBytes()
        for _ in 0..<patches {
            let around = Int(rng.next() % UInt64(count - 40))
            let edit = StackEdit(resize: (0..<10).map { k in
                let item = spread ? Int(rng.next() % UInt64(count)) : around + 3 * k
                return .init(id: "m\(item)", size: Size(width: 375, height: Double(50 + k)))
            })
            _ = try session.apply(edit, anchor: .none)
        }
        let bytes = Double(heapBytes() - before) / Double(patches)
        line("memory per PATCH of 10 resizes, \(name)", "\(fmt(bytes, 0)) B (\(fmt(bytes / 10, 0)) B per resize)")
    }
    do {
        var session = try ViewportSession(layout: big, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: 1000)))
        let before = heapBytes()
        for k in 0..<patches {
            let after = "m\(rng.next() % UInt64(count))"
            _ = try session.apply(StackEdit(insert: [.init(place: .after(after), items: [.init(id: "ins\(k)", size: Size(width: 375, height: 30))])]), anchor: .none)
        }
        line("memory per PATCH inserting 1 item, scattered", "\(fmt(Double(heapBytes() - before) / Double(patches), 0)) B")
        let again = heapBytes()
        for k in 0..<patches {
            _ = try session.apply(StackEdit(insert: [.init(place: .end(section: "chat"), items: [.init(id: "end\(k)", size: Size(width: 375, height: 30))])]), anchor: .none)
        }
        line("memory per PATCH inserting 1 item at the end", "\(fmt(Double(heapBytes() - again) / Double(patches), 0)) B")
    }
    print("")

    // HTTP: a real server on a loopback port; the PATCH above on a 1M-item and a 1k-item stack,
    // interleaved request by request.
    var configuration = ServiceConfiguration()
    configuration.http.host = "127.0.0.1"
    configuration.http.port = 0
    configuration.layouts.maxItems = max(2_000_000, count)
    let server = ViewportServer(configuration: configuration, logger: Logger(label: "viewport-bench", factory: { _ in SwiftLogNoOpLogHandler() }))
    try server.start()
    defer { server.stop() }
    let client = try HTTPTestClient.connect(port: server.port, timeout: 60)
    let json = [("Content-Type", "application/json")]
    var layoutIDs: [String] = []
    for n in [count, 1000] {
        let body = Array(chatJSON(n).utf8)
        var times: [Double] = []
        var id = ""
        for _ in 0..<(n == count ? 3 : 1) {
            let w0 = now()
            let reply = try client.send(method: "POST", path: "/v1/layouts", headers: json, body: body)
            times.append(now() - w0)
            id = field("layout", of: reply.body)
        }
        layoutIDs.append(id)
        if n == count {
            line("POST /v1/layouts, \(n) estimated items (\(body.count / 1_000_000) MB)", times.map { "\(fmt($0, 2)) s" }.joined(separator: ", "))
        }
    }
    var sessions: [String] = []
    for (k, id) in layoutIDs.enumerated() {
        let n = k == 0 ? count : 1000
        let reply = try client.send(
            method: "POST", path: "/v1/sessions", headers: json,
            body: #"{"layout":"\#(id)","viewport":[375,667],"offset":[0,\#(n / 2 * 84)]}"#)
        sessions.append(field("session", of: reply.body))
    }
    let rounds = 5_000
    var latencies: [[Double]] = [[], []]
    for k in 0..<rounds {
        for s in 0..<2 {
            let n = s == 0 ? count : 1000
            let ids = (0..<10).map { "m\(n / 2 + $0)" }
            let sizes = ids.enumerated().map { #"{"id":"\#($1)","size":[375,\#(60 + 40 * (k & 1) + $0)]}"# }.joined(separator: ",")
            let body = #"{"resize":[\#(sizes)]}"#
            let w0 = now()
            let reply = try client.send(method: "PATCH", path: "/v1/sessions/\(sessions[s])/layout", headers: json, body: body)
            latencies[s].append(now() - w0)
            guard reply.status == 200 else { fatalError("PATCH answered \(reply.status)") }
        }
    }
    for s in 0..<2 {
        let sorted = latencies[s].sorted()
        func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1e6 }
        line("HTTP PATCH 10 resizes, \(s == 0 ? count : 1000) items", "median \(fmt(at(0.5), 0)) µs, p90 \(fmt(at(0.9), 0)) µs, p99 \(fmt(at(0.99), 0)) µs")
    }
    let ratio = latencies[0].sorted()[rounds / 2] / latencies[1].sorted()[rounds / 2]
    line("  median ratio (1M / 1k)", fmt(ratio, 2))
    client.close()
    print("")
}

/// A chat of `n` messages with estimated sizes, as `SectionStack` builds it from `sections`.
func chatLayout(_ n: Int) throws -> Layout {
    var builder = LayoutBuilder(expectedCount: n)
    var stack = SectionStack(withStacks: true)
    let items = (0..<n).map { StackSpec.Item(id: "m\($0)") }
    try stack.append(
        SectionSpec(id: "chat", reuse: "msg", shape: .stack(StackSpec(items: items, estimate: Size(width: 375, height: 80), spacing: 4))), to: &builder)
    return try builder.build()
}

/// The same chat as the JSON a client posts.
func chatJSON(_ n: Int) -> String {
    var s = #"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":["#
    s.reserveCapacity(n * 16 + 100)
    for k in 0..<n {
        if k > 0 { s += "," }
        s += #"{"id":"m\#(k)"}"#
    }
    return s + #"],"estimate":[375,80],"spacing":4}}]}"#
}

/// A string field of a JSON object, found by its key (enough for ids viewportd writes).
func field(_ name: String, of body: [UInt8]) -> String {
    let key = Array("\"\(name)\":\"".utf8)
    guard body.count >= key.count else { return "" }
    for start in 0...(body.count - key.count) where body[start..<(start + key.count)].elementsEqual(key) {
        return String(decoding: body[(start + key.count)...].prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
    }
    return ""
}
