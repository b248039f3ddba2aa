import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Idle expiry of sessions and the graceful stop.
@Suite(.serialized) struct LifecycleTests {
    @Test func aSessionIdleLongerThanTheTimeoutIsGone() throws {
        try withService({ $0.sessions.idleTimeout = .milliseconds(300) }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(10)))
            let idle = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            let busy = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 2)
            // Keep one busy for 3 timeouts.
            let start = Date()
            var i = 0
            while Date().timeIntervalSince(start) < 0.9 {
                i += 1
                #expect(try client.update(busy, #"{"offset":[0,\#(i)]}"#).status == 200)
                Thread.sleep(forTimeInterval: 0.1)
            }
            _ = try client.get("/v1/sessions/\(idle)").problem(404)
            _ = try client.update(idle, #"{"offset":[0,1]}"#).problem(404)
            _ = try client.delete("/v1/sessions/\(idle)").problem(404)
            #expect(try client.state(busy).int("seq") == i)
            // GET keeps a session alive too.
            for _ in 0..<6 {
                #expect(try client.get("/v1/sessions/\(busy)").status == 200)
                Thread.sleep(forTimeInterval: 0.1)
            }
            #expect(try client.get("/v1/sessions/\(busy)").status == 200)
            // The expired session released its layout.
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 1)
        }
    }

    @Test func expiredSessionsFreeTheirSlots() throws {
        try withService({ c in
            c.sessions.idleTimeout = .milliseconds(200)
            c.sessions.max = 2
        }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(10)))
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#)
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#).problem(429)
            Thread.sleep(forTimeInterval: 0.35)
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
        for _ in 0..<250 where try observer.state(session).int("seq") != 500 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(try observer.state(session).int("seq") == 500)
        let stopped = Locked(false)
        let port = service.port
        let stopper = Thread {
            service.stop()
            stopped.withLock { $0 = true }
        }
        stopper.start()
        Thread.sleep(forTimeInterval: 0.1)
        // New requests during the drain: 503.
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
        for _ in 0..<250 where !stopped.get { Thread.sleep(forTimeInterval: 0.02) }
        #expect(stopped.get)
        #expect(HTTPTestClient.isRefused(port: port))
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
