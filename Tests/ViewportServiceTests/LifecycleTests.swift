import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Idle expiry of sessions and the graceful stop.
@Suite(.serialized, .tags(.live)) struct LifecycleTests {
    /// The idle session goes once it has been idle for the timeout (not before), while a session
    /// touched every 50 ms (a thirtieth of the timeout: no race with the sweeper, even when the
    /// whole suite runs in parallel on two busy cores) stays. Its going is polled for with a
    /// deadline, never assumed after a fixed sleep.
    @Test func aSessionIdleLongerThanTheTimeoutIsGone() throws {
        try withService({ $0.sessions.idleTimeout = .milliseconds(1500) }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(10)))
            // Taken before the request that opens it: the server starts its idle clock later.
            let idleSince = ContinuousClock.now
            let idle = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            let busy = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            // `/metrics` does not touch a session (a GET of the session would).
            func open() throws -> Bool { metric("viewportd_sessions", in: try client.get("/metrics").text) == 2 }
            #expect(try open())
            var i = 0
            var refused: [Int] = []
            let expired = try eventually(within: 10, every: 0.05) {
                i += 1
                let status = try client.update(busy, #"{"offset":[0,\#(i)]}"#).status
                if status != 200 { refused.append(status) }
                return try !open()
            }
            #expect(expired)
            #expect(refused.isEmpty, "the busy session's updates answered \(refused)")
            #expect(ContinuousClock.now - idleSince >= .milliseconds(1500), "expired before its idle timeout")
            _ = try client.get("/v1/sessions/\(idle)").problem(404)
            _ = try client.update(idle, #"{"offset":[0,1]}"#).problem(404)
            _ = try client.delete("/v1/sessions/\(idle)").problem(404)
            #expect(try client.state(busy).int("seq") == i)
            // GET keeps a session alive too: 2 timeouts of GETs every 50 ms.
            let until = ContinuousClock.now.advanced(by: .milliseconds(3000))
            while ContinuousClock.now < until {
                #expect(try client.get("/v1/sessions/\(busy)").status == 200)
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(try client.get("/v1/sessions/\(busy)").status == 200)
            // The expired session released its layout.
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 1)
        }
    }

    /// A second's timeout: the three opens before the 429, and the open and `/metrics` at the
    /// end, each come well within it on a loaded machine (each new session must still count).
    @Test func expiredSessionsFreeTheirSlots() throws {
        try withService({ c in
            c.sessions.idleTimeout = .seconds(1)
            c.sessions.max = 2
        }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(10)))
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#).problem(429)
            // Both expire (the sweeper runs every timeout / 4); `/metrics` touches nothing.
            #expect(try eventually { metric("viewportd_sessions", in: try client.get("/metrics").text) == 0 })
            // Unused layouts expire after the idle timeout too: post it again (same id) as a client
            // that got 422 for an unknown layout would.
            #expect(try client.postLayout(layoutJSON(listItems(10))) == layout)
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            let metrics = try client.get("/metrics").text
            #expect(metrics.contains("viewportd_sessions 1"))
        }
    }

    @Test func stopLetsAnInFlightStreamFinishAnswersNewRequests503AndClosesThePort() throws {
        let service = try TestService { $0.http.drainTimeout = .seconds(10) }
        let client = try service.connect(timeout: 10)
        let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(1000))),"viewport":[375,667]}"#).id
        // A large stream, uploaded slowly.
        try client.raw.write(
            HTTPTestClient.request(
                method: "POST", path: "/v1/sessions/\(session)/viewport",
                headers: [("Content-Type", "application/x-ndjson"), ("Transfer-Encoding", "chunked")]))
        var sent = 0
        func sendLines(_ n: Int) throws {
            var chunk: [UInt8] = []
            for _ in 0..<n {
                sent += 1
                chunk += Array((#"{"offset":[0,\#(sent * 13 % 90_000)]}"# + "\n").utf8)
            }
            try client.raw.write(Array(HTTPTestClient.chunked([chunk]).dropLast(5)))
        }
        try sendLines(500)
        // Only stop once the request is in flight (its lines are being applied).
        let observer = try service.connect()
        #expect(try eventually { try observer.state(session).int("seq") == 500 })
        let stopped = Locked(false)
        let port = service.port
        let stopper = Thread {
            service.stop()
            stopped.withLock { $0 = true }
        }
        stopper.start()
        // New requests during the drain: 503 (polled for until the drain has begun).
        #expect(try eventually {
            let late = try HTTPTestClient.connect(port: port, timeout: 5)
            defer { late.close() }
            return try late.send(method: "GET", path: "/v1/sessions/\(session)").status == 503
        })
        for _ in 0..<3 {
            let late = try HTTPTestClient.connect(port: port, timeout: 5)
            let response = try late.send(method: "GET", path: "/v1/sessions/\(session)")
            #expect(response.status == 503)
            #expect(response.header("Content-Type") == "application/problem+json")
            late.close()
        }
        #expect(!stopped.get)
        for _ in 0..<10 {
            try sendLines(200)
            Thread.sleep(forTimeInterval: 0.02)
        }
        try client.raw.write(Array("0\r\n\r\n".utf8))
        let response = try client.raw.readResponse()
        #expect(response.status == 200)
        let lines = response.bodyString.split(separator: "\n")
        #expect(lines.count == sent)
        #expect(lines.last?.contains("\"seq\":\(sent),") == true)
        #expect(eventually { stopped.get })
        #expect(HTTPTestClient.isRefused(port: port))
    }

    @Test func theListeningLineIsLoggedWhateverTheLogLevel() throws {
        // API.md: "On start it logs one line containing `listening on http://HOST:PORT`"; scripts
        // and supervisors wait for it, also when they ask for quieter logs.
        for level in ["info", "warning", "critical"] {
            let instance = try ViewportdProcess(environment: ["LOG_LEVEL": level])
            let lines = instance.process.output.split(separator: "\n").filter { $0.contains("listening on http://127.0.0.1:\(instance.port)") }
            #expect(lines.count == 1, "\(level): \(instance.process.output)")
            instance.process.signal(SIGTERM)
            #expect(instance.process.waitForExit(timeout: 15) == 0)
        }
    }

    @Test func debugLogsEveryErrorAnswerTheLayerSendsAndAnEmptyTokenWarns() throws {
        // docs/operations/metrics.md "Logs": `LOG_LEVEL=debug` logs every 4xx and 5xx with its path, also those the
        // HTTP layer answers for the handler (a body too large, shutting down).
        let instance = try ViewportdProcess(environment: ["LOG_LEVEL": "debug", "HTTP_MAX_BODY_BYTES": "100", "AUTH_TOKEN": ""])
        #expect(instance.process.output.contains("configuration: auth.token (AUTH_TOKEN / --auth-token) is empty: bearer auth is off"))
        let client = try instance.connect()
        _ = try client.send("POST", "/v1/layouts", body: Array(repeating: UInt8(ascii: " "), count: 200)).problem(413)
        _ = try client.get("/nope").problem(404)
        // A request in flight holds the drain open; a request meanwhile answers 503.
        // In flight once its head is read, which the server's `100 Continue` shows.
        let partial = try instance.connect()
        try partial.raw.write(
            Array("POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n{".utf8))
        #expect(String(decoding: try partial.raw.read(through: Array("\r\n\r\n".utf8), timeout: 10), as: UTF8.self).hasPrefix("HTTP/1.1 100 "))
        instance.process.signal(SIGTERM)
        #expect(instance.process.waitForOutput("stopping", timeout: 10))
        #expect(try instance.connect().get("/healthz").status == 503)
        try partial.raw.close()
        #expect(instance.process.waitForExit(timeout: 15) == 0)
        let output = instance.process.output
        for line in ["POST /v1/layouts → 413", "GET /nope → 404", "GET /healthz → 503"] {
            #expect(output.contains(line), "\(line): \(output)")
        }
    }

    @Test func stopWithNothingInFlightIsQuickAndIdempotent() throws {
        let service = try TestService()
        let port = service.port
        #expect(try service.connect().get("/healthz").status == 200)
        let start = Date()
        service.stop()
        service.stop()
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(HTTPTestClient.isRefused(port: port))
    }
}
