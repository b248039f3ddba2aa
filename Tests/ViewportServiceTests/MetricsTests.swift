import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `GET /healthz` and `GET /metrics`.
@Suite struct MetricsTests {
    @Test func healthzAnswersOk() throws {
        try withService { service in
            let reply = try service.connect().get("/healthz")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/json")
            #expect(reply.json["status"] as? String == "ok")
        }
    }

    /// The value of the sample `name{labels}` (labels in any order), or nil.
    static func sample(_ text: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2 else { continue }
            let key = String(parts[0])
            let metric = key.split(separator: "{").first.map(String.init) ?? key
            guard metric == name else { continue }
            var found: [String: String] = [:]
            if let open = key.firstIndex(of: "{"), key.hasSuffix("}") {
                for pair in key[key.index(after: open)..<key.index(before: key.endIndex)].split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    if kv.count == 2 { found[String(kv[0])] = String(kv[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                }
            }
            if labels.allSatisfy({ found[$0.key] == $0.value }) && found.count >= labels.count { return Double(parts[1]) }
        }
        return nil
    }

    @Test func metricsCountRequestsByRouteAndStatusLatencySessionsLayoutsPlansAndViews() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(100, height: 100, reuses: ["a"])))
            let s1 = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,300],"buffer":0}"#).id  // creates 3
            _ = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,300],"buffer":0}"#)  // creates 3
            _ = try client.update(s1, #"{"offset":[0,1000]}"#)  // reuses 3
            _ = try client.update(s1, #"{"offset":[0,1000],"seq":1}"#)  // a retry: no new plan
            _ = try client.update(s1, #"{"offset":[0,1000],"seq":7}"#)  // 409
            _ = try client.get("/v1/sessions/nope")  // 404
            _ = try client.get("/nowhere")  // 404 unmatched
            _ = try client.send("PUT", "/v1/layouts")  // 405
            let reply = try client.get("/metrics")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true)
            let text = reply.text
            #expect(text.contains("# TYPE"))
            let requests = "viewportd_http_requests_total"
            #expect(Self.sample(text, requests, ["route": "/v1/layouts", "status": "201"]) == 1)
            #expect(Self.sample(text, requests, ["route": "/v1/sessions", "status": "201"]) == 2)
            #expect(Self.sample(text, requests, ["route": "/v1/sessions/{id}/viewport", "status": "200"]) == 2)
            #expect(Self.sample(text, requests, ["route": "/v1/sessions/{id}/viewport", "status": "409"]) == 1)
            #expect(Self.sample(text, requests, ["route": "/v1/sessions/{id}", "status": "404"]) == 1)
            #expect(Self.sample(text, requests, ["status": "405"]) == 1)
            #expect(text.contains("status=\"404\""))
            // Latency histogram with buckets, sum and count.
            #expect(text.contains("viewportd_http_request_duration_seconds_bucket"))
            #expect(Self.sample(text, "viewportd_http_request_duration_seconds_count", ["route": "/v1/sessions"]) == 2)
            #expect(text.contains("viewportd_http_request_duration_seconds_sum"))
            #expect(Self.sample(text, "viewportd_sessions") == 2)
            #expect(Self.sample(text, "viewportd_layouts") == 1)
            #expect(Self.sample(text, "viewportd_plans_total") == 3)
            #expect(Self.sample(text, "viewportd_views_created_total") == 6)
            #expect(Self.sample(text, "viewportd_views_reused_total") == 3)
            // The next scrape counts this one.
            let again = try client.get("/metrics").text
            #expect(Self.sample(again, requests, ["route": "/metrics", "status": "200"]) == 1)
        }
    }

    @Test func streamedPlansAndErrorsAreCounted() throws {
        try withService({ $0.http.maxBodyBytes = 10_000 }) { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100, reuses: ["a"]))),"viewport":[375,300],"buffer":0}"#).id
            let body = (1...5).map { #"{"offset":[0,\#($0 * 1000)]}"# }.joined(separator: "\n")
            #expect(try client.send("POST", "/v1/sessions/\(session)/viewport", json: body, contentType: "application/x-ndjson").lines.count == 5)
            _ = try client.post("/v1/layouts", String(repeating: " ", count: 20_000))  // 413
            let text = try service.connect().get("/metrics").text
            #expect(Self.sample(text, "viewportd_plans_total") == 6)
            #expect(Self.sample(text, "viewportd_http_requests_total", ["route": "/v1/sessions/{id}/viewport", "status": "200"]) == 1)
            #expect(Self.sample(text, "viewportd_http_requests_total", ["route": "/v1/layouts", "status": "413"]) == 1)
        }
    }
}
