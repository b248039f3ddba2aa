import Foundation
import Synchronization
import Testing
import ViewportService
import ViewportTestSupport

/// Requests that need a round trip to the shared store run on threads of their own
/// (`store.requestThreads`), with their connections suspended, so that a slow store holds no
/// HTTP worker: with `http.threads` 2 and several requests waiting on the store, a session this
/// instance owns is still answered from memory at once. Over sockets, on a real redis-server that
/// `CLIENT PAUSE` keeps slow. An NDJSON stream's start (taking its session from the store) runs
/// there too, before its lines are read.
@Suite(.serialized, .tags(.live))
struct StoreOffloadTests {
    /// Keeps the store answering slowly for `seconds`: every command of the instance's clients
    /// waits up to `pause` (`CLIENT PAUSE … ALL`, renewed before it ends), within `store.timeout`.
    static func slowStore(_ redis: RedisTestServer, for seconds: Double, pause milliseconds: Int) -> Thread {
        let thread = Thread {
            let until = Date().addingTimeInterval(seconds)
            while Date() < until {
                _ = try? redis.cli(["CLIENT", "PAUSE", String(milliseconds), "ALL"])
                usleep(UInt32(milliseconds - 20) * 1000)
            }
        }
        thread.start()
        return thread
    }

    /// Two HTTP workers and a store that may answer slowly within `store.timeout` (1 s). The
    /// sessions these tests open before the store is slowed are opened as a client does (a 503
    /// tried again after its `Retry-After`): the first store round trips of an instance just
    /// started can take longer than that timeout on a loaded machine, and the opening is not
    /// what these tests are about.
    static func configure(_ c: inout ServiceConfiguration, requestThreads: Int = 4) {
        c.http.threads = 2
        c.store.requestThreads = requestThreads
        c.store.leaseTimeout = .seconds(4)
        c.store.timeout = .seconds(1)
    }

    /// Ten updates of `session` on `client`, 0.1 s apart: how many answered each status, and the
    /// seconds of each answer, sorted.
    ///
    /// An update that waited behind a store paused 0.4 s at a time waits the rest of a pause, so
    /// such updates have a median near 0.2 s; one answered from memory takes milliseconds, and an
    /// overloaded machine can stall one of ten for a few hundred. The tests bound the median
    /// tightly and the slowest loosely.
    static func tenSteps(_ session: inout SteppedSession, on client: Client) throws -> (statuses: [Int: Int], seconds: [Double]) {
        var seconds: [Double] = []
        var statuses: [Int: Int] = [:]
        for _ in 0..<10 {
            let started = Date()
            let status = try session.step(client).status
            seconds.append(Date().timeIntervalSince(started))
            statuses[status, default: 0] += 1
            usleep(100_000)
        }
        return (statuses, seconds.sorted())
    }

    /// "median M s, slowest S s" of sorted `seconds`.
    static func summary(_ seconds: [Double]) -> String {
        String(format: "median %.3f s, slowest %.3f s", seconds[seconds.count / 2], seconds.last ?? 0)
    }

    /// Expects ``tenSteps(_:on:)``'s sorted `seconds` to be answers from memory, not waits behind
    /// `what`: a median under 0.08 s and a slowest under 0.35 s.
    static func expectAnsweredFromMemory(_ seconds: [Double], behind what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(seconds[seconds.count / 2] < 0.08 && (seconds.last ?? 0) < 0.35,
            "updates of an owned session waited behind \(what): \(summary(seconds))", sourceLocation: sourceLocation)
    }

    static func unknownID(_ k: Int) -> String {
        String(repeating: "0", count: 24) + String(format: "%08x", 0x1000 + k)
    }

    @Test func anOwnedSessionIsAnsweredWhileOtherRequestsWaitOnASlowStore() throws {
        try withCluster(1, configure: { Self.configure(&$0) }) { cluster in
            let a = try cluster[0].connect(timeout: 10)
            var session = try SteppedSession(on: a, retries: 2)
            for _ in 0..<3 { #expect(try session.step(a).status == 200) }

            _ = Self.slowStore(cluster.redis, for: 3, pause: 400)
            usleep(100_000)
            // Six clients ask for sessions this instance does not hold: each needs the store.
            let port = cluster[0].port
            let stop = Atomic<Bool>(false)
            let storeAnswers = Mutex<[Double]>([])
            let askers = Thread {
                onThreads(6, timeout: 20) { k in
                    guard let client = try? HTTPTestClient.connect(port: port, timeout: 10) else { return }
                    var n = 0
                    while !stop.load(ordering: .relaxed) && n < 50 {
                        let started = Date()
                        let reply = try? client.send(method: "GET", path: "/v1/sessions/\(Self.unknownID(k * 100 + n))")
                        let seconds = Date().timeIntervalSince(started)
                        if reply?.status == 404 { storeAnswers.withLock { $0.append(seconds) } }
                        n += 1
                    }
                }
            }
            askers.start()
            usleep(300_000)

            // Meanwhile, the owned session's updates are answered from memory.
            let (statuses, seconds) = try Self.tenSteps(&session, on: a)
            stop.store(true, ordering: .relaxed)
            #expect(try eventually(within: 15) { askers.isFinished })

            let waits = storeAnswers.withLock { $0 }.sorted()
            let median = waits.isEmpty ? 0 : waits[waits.count / 2]
            let longest = waits.last ?? 0
            print("store answers: \(waits.count), median \(String(format: "%.3f", median)) s, longest \(String(format: "%.3f", longest)) s; owned session: \(statuses), \(Self.summary(seconds))")
            #expect(waits.count >= 6, "requests that need the store were answered (404)")
            #expect(longest >= 0.2, "the store was slow: the longest 404 took \(longest) s")
            #expect(statuses == [200: 10])
            Self.expectAnsweredFromMemory(seconds, behind: "the store")
        }
    }

    /// How a client starts updating a session it names: an NDJSON stream, or a WebSocket.
    enum Start: Sendable, CustomStringConvertible {
        case stream
        case socket

        var description: String { self == .stream ? "NDJSON stream" : "WebSocket" }

        /// One update of session `id` on a new connection to `port`: its status (a socket's
        /// message answers a plan, 200, or a problem with its status), nil when none came.
        func update(_ id: String, port: Int) -> Int? {
            let line = #"{"offset":[0,50]}"#
            switch self {
            case .stream:
                // A connection per stream: a streamed answer may close its connection.
                guard let client = try? HTTPTestClient.connect(port: port, timeout: 10) else { return nil }
                defer { client.close() }
                let reply = try? client.send(
                    method: "POST", path: "/v1/sessions/\(id)/viewport", headers: [("Content-Type", "application/x-ndjson")], body: line + "\n")
                return reply?.status
            case .socket:
                guard let ws = try? WebSocketTestClient.connect(port: port, path: "/v1/sessions/\(id)/socket", timeout: 10) else { return nil }
                guard ws.isOpen else { return ws.handshake.status }
                defer { try? ws.sendClose() }
                guard (try? ws.send(text: line)) != nil, let answer = try? ws.readMessage(timeout: 10) else { return nil }
                let object = try? JSONSerialization.jsonObject(with: Data(answer.payload)) as? [String: Any]
                return object?["status"] as? Int ?? 200
            }
        }
    }

    @Test(arguments: [Start.stream, .socket])
    func anOwnedSessionIsAnsweredWhileOthersAreTakenFromASlowStore(_ start: Start) throws {
        try withCluster(2, configure: { Self.configure(&$0) }) { cluster in
            let a = try cluster[0].connect(timeout: 10)
            var session = try SteppedSession(on: a, retries: 2)
            for _ in 0..<3 { #expect(try session.step(a).status == 200) }
            // Sessions B holds: a stream for one of them on A takes it over through the store.
            let b = try cluster[1].connect(timeout: 10)
            let elsewhere = try (0..<12).map { _ in try SteppedSession(on: b, retries: 2).id }

            _ = Self.slowStore(cluster.redis, for: 3, pause: 400)
            usleep(100_000)
            // Six clients send updates to A (each on a new stream or socket) for sessions it does
            // not hold: two B holds each, then unknown ones. Each needs the store.
            let port = cluster[0].port
            let stop = Atomic<Bool>(false)
            let streams = Mutex<[(status: Int, seconds: Double)]>([])
            let streamers = Thread {
                onThreads(6, timeout: 20) { k in
                    var n = 0
                    while !stop.load(ordering: .relaxed) && n < 50 {
                        let id = n < 2 ? elsewhere[k * 2 + n] : Self.unknownID(k * 100 + n)
                        let started = Date()
                        let status = start.update(id, port: port)
                        let seconds = Date().timeIntervalSince(started)
                        if let status { streams.withLock { $0.append((status, seconds)) } }
                        n += 1
                    }
                }
            }
            streamers.start()
            usleep(300_000)

            // Meanwhile, the owned session's updates are answered from memory.
            let (statuses, seconds) = try Self.tenSteps(&session, on: a)
            stop.store(true, ordering: .relaxed)
            #expect(try eventually(within: 15) { streamers.isFinished })

            let answered = streams.withLock { $0 }
            let byStatus = Dictionary(answered.map { ($0.status, 1) }, uniquingKeysWith: +)
            let longest = answered.map(\.seconds).max() ?? 0
            print("\(start)s: \(byStatus), longest \(String(format: "%.3f", longest)) s; owned session: \(statuses), \(Self.summary(seconds))")
            #expect(answered.count >= 6)
            #expect(byStatus[200, default: 0] >= 1, "streams took sessions B held")
            #expect(Set(byStatus.keys).isSubset(of: [200, 404, 503]), "\(byStatus)")
            #expect(longest >= 0.2, "the store was slow: the longest stream took \(longest) s")
            #expect(statuses == [200: 10])
            Self.expectAnsweredFromMemory(seconds, behind: "\(start)s waiting on the store")
        }
    }

    @Test func aStreamOrASocketForASessionHeldElsewhereStartsOnceTakenHere() throws {
        try withCluster(2, configure: { Self.configure(&$0) }) { cluster in
            let a = try cluster[0].connect(timeout: 10)
            let b = try cluster[1].connect(timeout: 10)
            let streamed = try SteppedSession(on: b), socketed = try SteppedSession(on: b)
            let lines = #"{"offset":[0,97],"seq":1}"# + "\n" + #"{"offset":[0,194],"seq":2}"# + "\n"
            let stream = try a.send("POST", "/v1/sessions/\(streamed.id)/viewport", body: Array(lines.utf8), contentType: "application/x-ndjson")
            #expect(stream.status == 200)
            #expect(stream.lines.map { $0["seq"] as? Int } == [1, 2], "\(stream.text)")
            // The stream's start took the session here: B's copy moved.
            #expect(try a.get("/v1/sessions/\(streamed.id)").json["seq"] as? Int == 2)

            let ws = try WebSocketTestClient.connect(port: cluster[0].port, path: "/v1/sessions/\(socketed.id)/socket")
            #expect(ws.isOpen)
            try ws.send(text: #"{"offset":[0,97],"seq":1}"#)
            let plan = try JSONSerialization.jsonObject(with: Data(try ws.readMessage().payload)) as? [String: Any]
            #expect(plan?["seq"] as? Int == 1)

            // Unknown sessions: 404 from the start, as without a store.
            let unknown = try a.send("POST", "/v1/sessions/\(Self.unknownID(1))/viewport", body: Array(lines.utf8), contentType: "application/x-ndjson")
            #expect(unknown.status == 404)
            #expect(try WebSocketTestClient.connect(port: cluster[0].port, path: "/v1/sessions/\(Self.unknownID(2))/socket").handshake.status == 404)
        }
    }

    @Test func stoppingWaitsForRequestsOnTheStoreAndAnswersThem() throws {
        let cluster = try TestCluster(1) { Self.configure(&$0) }
        defer { cluster.stop() }
        let port = cluster[0].port
        _ = try cluster.redis.cli(["CLIENT", "PAUSE", "700", "ALL"])
        let statuses = Mutex<[Int]>([])
        let askers = Thread {
            onThreads(4, timeout: 20) { k in
                guard let client = try? HTTPTestClient.connect(port: port, timeout: 10) else { return }
                let reply = try? client.send(method: "GET", path: "/v1/sessions/\(Self.unknownID(k))")
                statuses.withLock { $0.append(reply?.status ?? 0) }
            }
        }
        askers.start()
        usleep(200_000)
        let started = Date()
        cluster[0].stop()
        let seconds = Date().timeIntervalSince(started)
        #expect(try eventually(within: 10) { askers.isFinished })
        let answered = statuses.withLock { $0 }
        print("stopped in \(String(format: "%.3f", seconds)) s; answers \(answered)")
        // Each request waiting on the store got its answer before the port closed.
        #expect(answered.count == 4)
        #expect(answered.allSatisfy { $0 == 404 || $0 == 503 }, "\(answered)")
        #expect(seconds < 4)
    }

    @Test func requestsPastTheStoreThreadsQueueAre503WithRetryAfter() throws {
        // One store thread, so at most 1 + 64 requests wait for the store; the rest answer 503 at once.
        let cluster = try TestCluster(1) { Self.configure(&$0, requestThreads: 1) }
        defer { cluster.stop() }
        let port = cluster[0].port
        _ = try cluster.redis.cli(["CLIENT", "PAUSE", "800", "ALL"])
        let replies = Mutex<[(status: Int, retryAfter: String?, detail: String)]>([])
        #expect(onThreads(80, timeout: 20) { k in
            guard let client = try? HTTPTestClient.connect(port: port, timeout: 10) else { return }
            guard let reply = try? client.send(method: "GET", path: "/v1/sessions/\(Self.unknownID(k))") else { return }
            replies.withLock { $0.append((reply.status, reply.header("Retry-After"), String(decoding: reply.body, as: UTF8.self))) }
        })
        let all = replies.withLock { $0 }
        let refused = all.filter { $0.status == 503 && $0.detail.contains("store.requestThreads") }
        print("80 requests: \(all.filter { $0.status == 404 }.count) × 404, \(refused.count) refused")
        #expect(all.count == 80)
        #expect(all.allSatisfy { $0.status == 404 || $0.status == 503 })
        #expect(refused.count >= 80 - 65, "at most 65 wait for the store")
        #expect(refused.allSatisfy { $0.retryAfter == "1" })
    }
}
