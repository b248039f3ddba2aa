import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `HEAD` (RFC 9110 §9.3.2: what a `GET` would answer, without the body) on every path that
/// answers `GET` but the WebSocket; `Allow` keeps listing the contract's methods.
@Suite(.tags(.live)) struct HeadRequestTests {
    @Test func headAnswersWhatGetWouldWithoutTheBody() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(10)))
            let session = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,300]}"#).id
            for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/v1/layouts/\(layout)", "/v1/sessions/\(session)", "/v1/sessions/\(session)/layout"] {
                let get = try client.get(path)
                let head = try client.send("HEAD", path)
                #expect(head.status == get.status, "\(path)")
                #expect(head.body.isEmpty, "\(path)")
                #expect(head.header("Content-Type") == get.header("Content-Type"), "\(path)")
                if path != "/metrics" {  // the scrape counts itself: its length changes
                    #expect(head.header("Content-Length") == String(get.body.count), "\(path)")
                }
            }
            // A HEAD is a GET, never the path's other methods: the session is still there.
            #expect(try client.state(session).int("seq") == 0)
            #expect(try client.send("HEAD", "/v1/sessions/nope").status == 404)
            #expect(try client.send("HEAD", "/nowhere").status == 404)
            // Paths without GET, and the WebSocket (its GET is a handshake), answer 405.
            for (path, allow) in [("/v1/layouts", "POST"), ("/v1/sessions/\(session)/viewport", "POST"), ("/v1/sessions/\(session)/socket", "GET")] {
                let reply = try client.send("HEAD", path)
                #expect(reply.status == 405, "\(path)")
                #expect(reply.header("Allow") == allow, "\(path)")
            }
            // Allow on a GET path still lists the contract's methods only.
            #expect(try client.send("PUT", "/healthz").header("Allow") == "GET")
            #expect(try client.send("POST", "/v1/sessions/\(session)").header("Allow") == "GET, DELETE")
            // The connection is still in step after the bodiless answers.
            #expect(try client.get("/healthz").status == 200)
        }
    }

    @Test func headNeedsTheTokenLikeGet() throws {
        try withService({ $0.authToken = "t0ken" }) { service in
            let client = try service.connect()
            #expect(try client.send("HEAD", "/metrics", auth: false).status == 401)
            #expect(try client.send("HEAD", "/metrics", headers: [("Authorization", "Bearer t0ken")], auth: false).status == 200)
            #expect(try client.send("HEAD", "/healthz", auth: false).status == 200)
        }
    }

    @Test func methodsOutsideTheKnownSetShareOneMetricsSeries() throws {
        // A client may send any token as its method: each must not add a series (memory and
        // scrape size without bound).
        try withService { service in
            let client = try service.connect()
            for i in 0..<20 {
                #expect(try client.send("ZZ\(i)", "/healthz").status == 405)
            }
            _ = try client.send("HEAD", "/healthz")
            let text = try client.get("/metrics").text
            #expect(!text.contains("ZZ"))
            #expect(MetricsTests.sample(text, "viewportd_http_requests_total", ["route": "/healthz", "method": "OTHER", "status": "405"]) == 20)
            #expect(MetricsTests.sample(text, "viewportd_http_requests_total", ["route": "/healthz", "method": "HEAD", "status": "200"]) == 1)
        }
    }
}
