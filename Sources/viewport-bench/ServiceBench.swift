#if canImport(Glibc)
import Glibc
#endif
import CHeapStats
import Logging
import ViewportCore
import ViewportHTTP
import ViewportService

/// `viewport-bench N service-load` and `viewport-bench 0 serve PORT`: the service's cost per
/// request apart from sockets, and the real server in a process valgrind can run.
enum ServiceBench {
    /// The shapes of `scripts/load.sh`: the same offset again (empty plans), 97 pt steps, and
    /// 5003 pt jumps (every view leaves, as many enter).
    static let shapes: [(name: String, step: Double)] = [("empty", 0), ("steps", 97), ("jumps", 5003)]
    static let viewport = Size(width: 375, height: 667)
    static let rows = 10_000
    static let sessions = 64

    /// The load script's requests (64 sessions on a 10,000-row list) on each shape, through the core
    /// alone and through the service's request handler in process (`InProcessClient`: route,
    /// session lookup, JSON decode, apply, plan encoding, metrics; no sockets, no libmicrohttpd):
    /// nanoseconds and malloc calls per update or request. Three interleaved rounds; the best of
    /// each is printed.
    static func runServiceLoad() throws {
        var builder = LayoutBuilder()
        for i in 0..<rows { try builder.append(id: String(i), rect: Rect(x: 0, y: Double(i) * 50, width: 375, height: 50), reuse: "row") }
        let list = try builder.build()
        let maxY = Double(rows * 50) - viewport.height
        let start = (0..<sessions).map { Double($0 * 1009 % Int(maxY)) }

        let client = InProcessClient(configuration: ServiceConfiguration())
        var rowsJSON = #"{"items":["#
        for i in 0..<rows { rowsJSON += (i == 0 ? "" : ",") + #"{"id":"\#(i)","rect":[0,\#(i * 50),375,50],"reuse":"row"}"# }
        rowsJSON += "]}"
        let layoutID = field("layout", of: client.send("POST", "/v1/layouts", json: Array(rowsJSON.utf8)))
        let paths: [String] = start.map { y in
            let body = #"{"layout":"\#(layoutID)","viewport":[375,667],"offset":[0,\#(Int(y))]}"#
            return "/v1/sessions/" + field("session", of: client.send("POST", "/v1/sessions", json: Array(body.utf8))) + "/viewport"
        }
        var cores = try start.map { y in
            try ViewportSession(layout: list, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: y)))
        }
        var coreYs = start
        var handlerYs = start

        var best: [String: (core: Double, handler: Double, coreMallocs: Double, handlerMallocs: Double, bytes: Int)] = [:]
        for round in 0..<3 {
            for (name, step) in shapes {
                // Core only.
                let coreRounds = 5_000
                var entries = 0
                var mallocs = viewportd_malloc_calls()
                var t0 = now()
                for _ in 0..<coreRounds {
                    for k in 0..<sessions {
                        coreYs[k] = bounce(coreYs[k], step, maxY)
                        let plan = try cores[k].apply(ViewportUpdate(offset: Point(x: 0, y: reflect(coreYs[k], maxY))))
                        entries &+= plan.recycleCount &+ plan.reuseCount
                    }
                }
                let core = (now() - t0) / Double(coreRounds * sessions) * 1e9
                let coreMallocs = Double(viewportd_malloc_calls() - mallocs) / Double(coreRounds * sessions)
                // Through the handler.
                let handlerRounds = 2_000
                var bytesOut = 0
                mallocs = viewportd_malloc_calls()
                t0 = now()
                for _ in 0..<handlerRounds {
                    for k in 0..<sessions {
                        handlerYs[k] = bounce(handlerYs[k], step, maxY)
                        let response = client.send("POST", paths[k], json: Array(#"{"offset":[0,\#(Int(reflect(handlerYs[k], maxY)))]}"#.utf8))
                        switch response.body {
                        case .buffer(let buffer): bytesOut &+= buffer.count
                        case .bytes(let bytes): bytesOut &+= bytes.count
                        case .stream: break
                        }
                    }
                }
                let handler = (now() - t0) / Double(handlerRounds * sessions) * 1e9
                let handlerMallocs = Double(viewportd_malloc_calls() - mallocs) / Double(handlerRounds * sessions)
                let previous = best[name]
                best[name] = (
                    min(previous?.core ?? .infinity, core), min(previous?.handler ?? .infinity, handler),
                    coreMallocs, handlerMallocs, bytesOut / (handlerRounds * sessions))
                if round == 0 && entries < 0 { print(entries) }
            }
        }
        print("service-load: 64 sessions on a 10,000-row list, best of 3 interleaved rounds")
        print("(the handler's malloc count includes building each request's head and body, about 4 calls)")
        line("shape", "core ns/update  handler ns/request  mallocs core/handler  plan bytes")
        for (name, step) in shapes {
            guard let b = best[name] else { continue }
            line("  \(name) (\(Int(step)) pt)", "\(pad(fmt(b.core, 0), 14))  \(pad(fmt(b.handler, 0), 18))  \(pad("\(fmt(b.coreMallocs, 1)) / \(fmt(b.handlerMallocs, 1))", 20))  \(b.bytes)")
        }
    }

    /// Heap per session: sessions opened through the service's handler in process (the session,
    /// its handle, the store's entry, its id) against the same sessions built by the core alone,
    /// after opening and after one 97 pt step each (pools then hold views).
    static func runSessionMemory(count: Int = 20_000) throws {
        var builder = LayoutBuilder()
        for i in 0..<rows { try builder.append(id: String(i), rect: Rect(x: 0, y: Double(i) * 50, width: 375, height: 50), reuse: "row") }
        let list = try builder.build()
        let maxY = Double(rows * 50) - viewport.height
        var before = heapBytes()
        var cores: [ViewportSession] = []
        cores.reserveCapacity(count)
        for k in 0..<count {
            cores.append(try ViewportSession(
                layout: list, configuration: SessionConfiguration(viewport: viewport, offset: Point(x: 0, y: Double((k &* 7919) % Int(maxY))))))
        }
        let coreOpen = Double(heapBytes() - before) / Double(count)
        before = heapBytes()
        for k in 0..<count { _ = try cores[k].apply(ViewportUpdate(offset: Point(x: 0, y: Double((k &* 7919) % Int(maxY)) + 97))) }
        let coreStep = Double(heapBytes() - before) / Double(count)
        cores = []

        var configuration = ServiceConfiguration()
        configuration.sessions.max = count + 10
        let client = InProcessClient(configuration: configuration)
        var rowsJSON = #"{"items":["#
        for i in 0..<rows { rowsJSON += (i == 0 ? "" : ",") + #"{"id":"\#(i)","rect":[0,\#(i * 50),375,50],"reuse":"row"}"# }
        rowsJSON += "]}"
        let layoutID = field("layout", of: client.send("POST", "/v1/layouts", json: Array(rowsJSON.utf8)))
        var paths: [String] = []
        paths.reserveCapacity(count)
        let bodies = (0..<count).map { k in Array(#"{"layout":"\#(layoutID)","viewport":[375,667],"offset":[0,\#((k &* 7919) % Int(maxY))]}"#.utf8) }
        let steps = (0..<count).map { k in Array(#"{"offset":[0,\#((k &* 7919) % Int(maxY) + 97)]}"#.utf8) }
        before = heapBytes()
        for k in 0..<count {
            paths.append("/v1/sessions/" + field("session", of: client.send("POST", "/v1/sessions", json: bodies[k])) + "/viewport")
        }
        let pathBytes = paths.reduce(0) { $0 + $1.utf8.count + 32 } / count
        let serviceOpen = Double(heapBytes() - before) / Double(count) - Double(pathBytes)
        before = heapBytes()
        for k in 0..<count { _ = client.send("POST", paths[k], json: steps[k]) }
        let serviceStep = Double(heapBytes() - before) / Double(count)
        print("session memory: \(count) sessions on a 10,000-row list (375x667, ~15 rows shown), heap bytes per session")
        line("  core alone: opened / after a 97 pt step", "\(fmt(coreOpen, 0)) / +\(fmt(coreStep, 0))  (ViewportSession inline: \(MemoryLayout<ViewportSession>.size) B)")
        line("  through the service: opened / after a step", "\(fmt(serviceOpen, 0)) / +\(fmt(serviceStep, 0))")
    }

    /// Runs the real server (default configuration, 127.0.0.1:`port`) until killed: for valgrind,
    /// which cannot run viewportd itself here (it crashes in viewportd's start-up), and for
    /// profiling the server without viewportd's configuration loading.
    static func serve(port: Int) throws -> Never {
        var configuration = ServiceConfiguration()
        configuration.http.host = "127.0.0.1"
        configuration.http.port = port
        configuration.http.connectionTimeout = .seconds(600)
        let server = ViewportServer(configuration: configuration, logger: Logger(label: "viewport-bench"))
        try server.start()
        print("listening on http://127.0.0.1:\(server.port)")
        fflush(nil)
        while true { sleep(3600) }
    }

    /// Moves `y` by `step` along a path that runs down to `maxY` and back up (in [0, 2 maxY)).
    static func bounce(_ y: Double, _ step: Double, _ maxY: Double) -> Double {
        (y + step).truncatingRemainder(dividingBy: 2 * maxY)
    }

    static func reflect(_ y: Double, _ maxY: Double) -> Double { y > maxY ? 2 * maxY - y : y }

    private static func pad(_ s: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - s.count)) + s }

    /// The string value of `"name":"…"` in a 201 JSON body (ids are plain hex).
    private static func field(_ name: String, of response: HTTPResponse) -> String {
        guard let body = response.body.inMemoryBytes, response.status == 201 else { fatalError("\(name): status \(response.status)") }
        let marker = Array("\"\(name)\":\"".utf8)
        guard let start = (0...(body.count - marker.count)).first(where: { body[$0..<($0 + marker.count)].elementsEqual(marker) }) else {
            fatalError("no \(name) in the response")
        }
        return String(decoding: body[(start + marker.count)...].prefix(while: { $0 != UInt8(ascii: "\"") }), as: UTF8.self)
    }
}
