#if canImport(Glibc)
import Glibc
#endif

/// `viewport-bench 0 net PORT [items] [updates] [jumps] [round trips] [parts]`: viewportd's streams over
/// the network, measured by a native client (scripts/load.sh stream starts the server and calls
/// this):
///
/// - an NDJSON stream of small steps (7 pt) and one of jumps (random offsets), each sent whole
///   before anything is read, then read to the end;
/// - the same traces over a WebSocket, pipelined (one thread sends every update while another
///   reads the plans), as a ratio of the NDJSON rate;
/// - sequential round trips over the WebSocket (send one update, wait for its plan), against a
///   bare TCP ping-pong on loopback in the same run (an echo thread answering the same number of
///   bytes as a plan), as a ratio.
///
/// `parts` (comma-separated, default all) picks some: `ndjson-steps`, `ndjson-jumps`, `ws-steps`,
/// `ws-jumps`, `rtt` (for profiling one of them).
///
/// A round trip costs ~12 µs when the two threads share a CPU and ~55 µs when the reply has to
/// wake the other one (this VM's cross-CPU wake-up), whichever server answers; the scheduler
/// places viewportd's socket thread and the echo thread independently, so unpinned the ratio is
/// a coin toss (0.3× to 4.7× over eight runs). `VIEWPORT_BENCH_ECHO_CPU=N` pins the echo thread
/// to CPU N: `scripts/load.sh stream` pins viewportd and the echo thread to one CPU and this
/// client to another (both replies cross CPUs), then all three to one CPU.
enum NetBench {
    static let viewportHeight = 667.0
    static let rowHeight = 50.0

    static func run(_ arguments: [String]) throws {
        guard let port = arguments.first.flatMap({ Int($0) }) else {
            print("usage: viewport-bench 0 net PORT [items] [updates] [jumps] [round trips]")
            exit(2)
        }
        let items = arguments.dropFirst(1).first.flatMap { Int($0) } ?? 1_000_000
        let updates = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1_000_000
        let jumps = arguments.dropFirst(3).first.flatMap { Int($0) } ?? 100_000
        let roundTrips = arguments.dropFirst(4).first.flatMap { Int($0) } ?? 20_000
        let parts = Set((arguments.dropFirst(5).first ?? "ndjson-steps,ndjson-jumps,ws-steps,ws-jumps,rtt").split(separator: ",").map(String.init))

        // The layout of scripts/load.sh: a vertical list, item i at [0, 50 i, 375, 50].
        var t0 = now()
        var json: [UInt8] = []
        json.reserveCapacity(items * 60)
        json += Array(#"{"items":["#.utf8)
        for i in 0..<items {
            if i > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"id":"\#(i)","rect":[0,\#(i * 50),375,50],"reuse":"row"}"#.utf8)
        }
        json += Array("]}".utf8)
        let control = try NetClient(port: port)
        t0 = now()
        let (status, body) = try control.request("POST", "/v1/layouts", json: json)
        guard status == 201 || status == 200, let layout = field("layout", in: body) else {
            throw NetClient.Failure(description: "POST /v1/layouts answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        line("POST /v1/layouts, \(items) items (\(json.count / 1_000_000) MB)", "\(fmt((now() - t0) * 1000, 0)) ms")
        json = []

        let maxY = Double(items) * rowHeight - viewportHeight
        var y = maxY / 3
        var smallSteps: [Double] = []
        smallSteps.reserveCapacity(updates)
        for i in 0..<updates {
            y += (i / 20_000) % 2 == 0 ? 7 : -7
            smallSteps.append(y)
        }
        var seed: UInt64 = 7
        let jumpOffsets = (0..<jumps).map { _ -> Double in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double((seed >> 33) % UInt64(maxY))
        }

        func openSession() throws -> String {
            let (status, body) = try control.request(
                "POST", "/v1/sessions", json: Array(#"{"layout":"\#(layout)","viewport":[375,667],"offset":[0,\#(Int(maxY / 3))]}"#.utf8))
            guard status == 201, let session = field("session", in: body) else {
                throw NetClient.Failure(description: "POST /v1/sessions answered \(status)")
            }
            return session
        }

        var ndjsonRates: [String: Double] = [:]
        let traces = [("small steps (7 pt)", "steps", smallSteps), ("jumps (random offsets)", "jumps", jumpOffsets)]
        // An empty trace (0 updates or 0 jumps: only the layout's POST is wanted) is skipped.
        for (name, key, trace) in traces where parts.contains("ndjson-" + key) && !trace.isEmpty {
            let result = try ndjson(port: port, session: try openSession(), offsets: trace)
            ndjsonRates[name] = result.rate
            line("NDJSON, \(name), sent whole then read", "\(fmt(result.rate / 1e6, 3)) M updates/s  (\(trace.count) updates, \(result.bytes / trace.count) B per plan line)")
        }
        for (name, key, trace) in traces where parts.contains("ws-" + key) && !trace.isEmpty {
            let rate = try webSocketPipelined(port: port, session: try openSession(), offsets: trace)
            let ratio = ndjsonRates[name].map { "\(fmt(rate / $0, 2))× the NDJSON stream; target ≥ 0.5×" } ?? "no NDJSON run to compare"
            line("WebSocket pipelined, \(name)", "\(fmt(rate / 1e6, 3)) M updates/s  (\(ratio))")
        }
        guard parts.contains("rtt"), !smallSteps.isEmpty else { return }
        // Sequential round trips, interleaved with the bare TCP ping-pong in chunks so that the
        // machine's noise hits both alike.
        let socket = try WebSocketClient(port: port, session: try openSession())
        let echo = try EchoServer(cpu: ProcessInfoEnvironment.int("VIEWPORT_BENCH_ECHO_CPU"))
        let ping = try NetClient(port: echo.port)
        var wsSeconds = 0.0
        var tcpSeconds = 0.0
        var replyBytes = 0
        // The size of an update's frame: 2 header bytes, the 4-byte mask, 22 bytes of JSON.
        let pingMessage = [UInt8](repeating: UInt8(ascii: "x"), count: 28)
        let chunk = 1000
        var position = 0
        for _ in 0..<(roundTrips / chunk) {
            var t = now()
            for _ in 0..<chunk {
                position = (position + 1) % smallSteps.count
                replyBytes += try socket.roundTrip(Array(#"{"offset":[0,\#(Int(smallSteps[position]))]}"#.utf8))
            }
            wsSeconds += now() - t
            t = now()
            for _ in 0..<chunk {
                try ping.write(pingMessage)
                try ping.readExactly(echo.replySize)
            }
            tcpSeconds += now() - t
        }
        let n = Double((roundTrips / chunk) * chunk)
        let ws = wsSeconds / n * 1e6
        let tcp = tcpSeconds / n * 1e6
        line("WebSocket sequential round trip", "\(fmt(ws, 1)) µs  (plan frames of \(fmt(Double(replyBytes) / n, 0)) B on average)")
        line("bare TCP ping-pong on loopback", "\(fmt(tcp, 1)) µs  (\(pingMessage.count) B out, \(echo.replySize) B back)")
        line("  ratio WebSocket / TCP", "\(fmt(ws / tcp, 2))×  (target ≤ 2×)")
        echo.stop()
    }

    /// One NDJSON stream: the whole body is written, then the answer is read to its end.
    static func ndjson(port: Int, session: String, offsets: [Double]) throws -> (rate: Double, bytes: Int) {
        var body: [UInt8] = []
        body.reserveCapacity(offsets.count * 24)
        for y in offsets { body += Array(#"{"offset":[0,\#(Int(y))]}"#.utf8) + [10] }
        let client = try NetClient(port: port)
        let head = "POST /v1/sessions/\(session)/viewport HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nContent-Length: \(body.count)\r\n\r\n"
        let t0 = now()
        try client.write(Array(head.utf8))
        try client.write(body)
        let (status, headers) = try client.readHead()
        guard status == 200 else { throw NetClient.Failure(description: "NDJSON stream answered \(status)") }
        var lines = 0
        var bytes = 0
        var problem: [UInt8]?
        try client.readBody(headers: headers) { piece in
            bytes += piece.count
            for byte in piece where byte == 10 { lines += 1 }
            if problem == nil, NetClient.find(Array(#""title""#.utf8), in: piece) != nil { problem = Array(piece.prefix(300)) }
        }
        let seconds = now() - t0
        if let problem { throw NetClient.Failure(description: "the stream answered a problem: \(String(decoding: problem, as: UTF8.self))") }
        guard lines == offsets.count else { throw NetClient.Failure(description: "sent \(offsets.count) updates, got \(lines) plan lines") }
        return (Double(offsets.count) / seconds, bytes)
    }

    /// Every update sent by one thread while this one reads the plans.
    static func webSocketPipelined(port: Int, session: String, offsets: [Double]) throws -> Double {
        let socket = try WebSocketClient(port: port, session: session)
        var frames: [UInt8] = []
        frames.reserveCapacity(offsets.count * 30)
        for y in offsets { WebSocketClient.appendFrame(Array(#"{"offset":[0,\#(Int(y))]}"#.utf8), to: &frames) }
        let t0 = now()
        let sender = Thread { [frames] in
            do { try socket.client.write(frames) } catch { print("WebSocket sender: \(error)") }
        }
        let count = try socket.readMessages(offsets.count)
        let seconds = now() - t0
        sender.join()
        guard count == offsets.count else { throw NetClient.Failure(description: "sent \(offsets.count) updates, got \(count) plans") }
        return Double(offsets.count) / seconds
    }

    static func field(_ name: String, in body: [UInt8]) -> String? {
        let marker = Array("\"\(name)\":\"".utf8)
        guard let start = body.withUnsafeBytes({ NetClient.find(marker, in: $0) }) else { return nil }
        return String(decoding: body[(start + marker.count)...].prefix(while: { $0 != UInt8(ascii: "\"") }), as: UTF8.self)
    }
}

extension NetBench {
    /// `viewport-bench 0 open-sessions PORT LAYOUT COUNT FILE`: opens `COUNT` sessions on a stored
    /// layout over one keep-alive connection (offsets spread over the list) and appends their ids
    /// to `FILE`, one a line (for `scripts/load.sh sessions`).
    static func openSessions(_ arguments: [String]) throws {
        guard arguments.count == 4, let port = Int(arguments[0]), let count = Int(arguments[2]) else {
            print("usage: viewport-bench 0 open-sessions PORT LAYOUT COUNT FILE")
            exit(2)
        }
        let layout = arguments[1]
        let client = try NetClient(port: port)
        var ids = ""
        let t0 = now()
        for k in 0..<count {
            let body = #"{"layout":"\#(layout)","viewport":[375,667],"offset":[0,\#((k &* 7919) % 400_000)]}"#
            let (status, answer) = try client.request("POST", "/v1/sessions", json: Array(body.utf8))
            guard status == 201, let id = field("session", in: answer) else {
                throw NetClient.Failure(description: "POST /v1/sessions answered \(status): \(String(decoding: answer.prefix(300), as: UTF8.self))")
            }
            ids += id + "\n"
        }
        let seconds = now() - t0
        guard let file = fopen(arguments[3], "a") else { throw NetClient.Failure(description: "cannot open \(arguments[3])") }
        _ = ids.withCString { fputs($0, file) }
        fclose(file)
        print("opened \(count) sessions in \(fmt(seconds, 2)) s (\(fmt(Double(count) / seconds / 1000, 1))k/s)")
    }
}

/// A WebSocket client of `GET /v1/sessions/{id}/socket` (text frames, masked with a zero key).
final class WebSocketClient: @unchecked Sendable {
    let client: NetClient

    init(port: Int, session: String) throws {
        client = try NetClient(port: port)
        let head = "GET /v1/sessions/\(session)/socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try client.write(Array(head.utf8))
        let (status, _) = try client.readHead()
        guard status == 101 else { throw NetClient.Failure(description: "WebSocket handshake answered \(status)") }
    }

    /// A masked text frame (the zero mask key leaves the payload as it is).
    static func appendFrame(_ payload: [UInt8], to out: inout [UInt8]) {
        out.append(0x81)
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out.append(0x80 | 126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        }
        out += [0, 0, 0, 0]
        out += payload
    }

    /// Sends one update and waits for its plan; returns the plan frame's size.
    func roundTrip(_ payload: [UInt8]) throws -> Int {
        var frame: [UInt8] = []
        Self.appendFrame(payload, to: &frame)
        try client.write(frame)
        var size = 0
        _ = try readMessages(1) { size = $0 }
        return size
    }

    /// Reads `count` messages (text frames); a problem in one is an error.
    func readMessages(_ count: Int, each: (Int) -> Void = { _ in }) throws -> Int {
        var seen = 0
        var failure: String?
        while seen < count {
            var progressed = true
            while progressed && seen < count {
                progressed = false
                client.consume { bytes in
                    guard bytes.count >= 2 else { return 0 }
                    var length = Int(bytes[1] & 0x7F)
                    var header = 2
                    if length == 126 {
                        guard bytes.count >= 4 else { return 0 }
                        length = Int(bytes[2]) << 8 | Int(bytes[3])
                        header = 4
                    } else if length == 127 {
                        guard bytes.count >= 10 else { return 0 }
                        length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[$1]) }
                        header = 10
                    }
                    guard bytes.count >= header + length else { return 0 }
                    let payload = UnsafeRawBufferPointer(rebasing: bytes[header..<(header + length)])
                    if bytes[0] & 0x0F == 0x8 { failure = "the server closed the socket" }
                    if failure == nil, payload.count < 400, NetClient.find(Array(#""title""#.utf8), in: payload) != nil {
                        failure = String(decoding: payload, as: UTF8.self)
                    }
                    seen += 1
                    each(header + length)
                    progressed = true
                    return header + length
                }
            }
            if let failure { throw NetClient.Failure(description: "WebSocket: \(failure)") }
            if seen < count { guard try client.fill() else { throw NetClient.Failure(description: "WebSocket closed") } }
        }
        return seen
    }
}

/// A bare TCP echo on loopback for the ping-pong baseline: reads 28 bytes (an update frame's
/// size) and answers `replySize` bytes (a small plan frame's), one thread, blocking sockets.
final class EchoServer: @unchecked Sendable {
    let listener: Int32
    let port: Int
    let replySize = 64
    private var thread: Thread?

    /// `cpu`: the one CPU the echo thread runs on (nil: wherever the scheduler puts it).
    init(cpu: Int? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw NetClient.Failure(description: "echo server: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let reply = [UInt8](repeating: UInt8(ascii: "x"), count: 64)
        thread = Thread {
            if let cpu, !pinCurrentThread(to: cpu) {
                print("echo server: cannot pin to CPU \(cpu) (errno \(errno)); unpinned")
            }
            let accepted = accept(fd, nil, nil)
            guard accepted >= 0 else { return }
            let connection = NetClient(accepted: accepted)
            while true {
                do {
                    try connection.readExactly(28)
                    try connection.write(reply)
                } catch {
                    return
                }
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension NetClient {
    /// Reads and drops exactly `count` bytes.
    func readExactly(_ count: Int) throws {
        var left = count
        while left > 0 {
            if available == 0 { guard try fill() else { throw Failure(description: "closed") } }
            consume { bytes in
                let n = min(left, bytes.count)
                left -= n
                return n
            }
        }
    }
}

/// A joinable POSIX thread running a closure.
final class Thread: @unchecked Sendable {
    private var handle = pthread_t()

    init(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body))
        pthread_create(&handle, nil, { raw in
            guard let raw else { return nil }
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            box.body()
            return nil
        }, box.toOpaque())
    }

    func join() { pthread_join(handle, nil) }

    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// Reads integers from the environment.
enum ProcessInfoEnvironment {
    /// The variable as an integer; nil when unset or not one.
    static func int(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }
}

/// Restricts the calling thread to one CPU (`sched_setaffinity` on pid 0, the caller); false
/// when the kernel refuses (no such CPU, or outside the process's allowed set). Glibc declares
/// `sched_setaffinity` only under `_GNU_SOURCE`, which Swift's Glibc module is not built with, so
/// it is looked up by name (a C target for one call would be more package than it is worth).
func pinCurrentThread(to cpu: Int) -> Bool {
    typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
    guard cpu >= 0, cpu < MemoryLayout<cpu_set_t>.size * 8,
        let symbol = dlsym(nil, "sched_setaffinity")  // nil: RTLD_DEFAULT, every loaded object
    else { return false }
    var set = cpu_set_t()
    withUnsafeMutableBytes(of: &set) { bytes in
        bytes[cpu / 8] |= UInt8(1) << UInt8(cpu % 8)
    }
    let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
    return withUnsafeBytes(of: &set) { bytes in bytes.baseAddress.map { setAffinity(0, bytes.count, $0) } } == 0
}
