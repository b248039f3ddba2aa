import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Every status of the table in docs/api.md "Errors", and its order when several apply:
/// 401, 404, 405, 415, 413, 400, 422, 409, 429.
@Suite struct StatusPrecedenceTests {
    @Test func unknownPathsAnswer404() throws {
        try withService { service in
            let client = try service.connect()
            for path in ["/", "/v1", "/v2/layouts", "/v1/layouts/", "/v1/sessions/x/y", "/v1/sessions//viewport", "/healthz/", "/HEALTHZ", "/v1/layouts/a/b", "/metrics/x"] {
                let p = try client.get(path).problem(404)
                #expect(!(p["detail"] as? String ?? "").isEmpty, "\(path)")
            }
            _ = try client.post("/v1/nothing", "{}").problem(404)
        }
    }

    @Test func wrongMethodsAnswer405WithAllow() throws {
        try withService { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(3)))
            let session = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            let cases: [(String, String, String)] = [
                ("POST", "/healthz", "GET"), ("DELETE", "/metrics", "GET"),
                ("GET", "/v1/layouts", "POST"), ("PUT", "/v1/layouts", "POST"),
                ("POST", "/v1/layouts/\(layout)", "GET"), ("DELETE", "/v1/layouts/\(layout)", "GET"),
                ("GET", "/v1/sessions", "POST"), ("PATCH", "/v1/sessions/\(session)", "GET, DELETE"),
                ("POST", "/v1/sessions/\(session)", "GET, DELETE"), ("GET", "/v1/sessions/\(session)/viewport", "POST"),
            ]
            for (method, path, allow) in cases {
                let reply = try client.send(method, path, body: method == "GET" || method == "DELETE" ? nil : Array("{}".utf8))
                _ = reply.problem(405)
                #expect(reply.header("Allow") == allow, "\(method) \(path)")
            }
            // Nothing happened to the session.
            #expect(try client.state(session).int("seq") == 0)
        }
    }

    @Test func headAndOptionsAreWrongMethodsToo() throws {
        try withService { service in
            let client = try service.connect()
            let reply = try client.send("OPTIONS", "/v1/layouts")
            #expect(reply.status == 405)
            #expect(reply.header("Allow") == "POST")
        }
    }

    @Test func unsupportedContentTypesAnswer415AbsentIsJSON() throws {
        try withService { service in
            let client = try service.connect()
            let layout = layoutJSON(listItems(3))
            for type in ["text/plain", "application/xml", "application/x-www-form-urlencoded", "application/json; charset=latin-1", "json", ""] {
                let p = try client.send("POST", "/v1/layouts", json: layout, contentType: type).problem(415)
                #expect(!(p["detail"] as? String ?? "").isEmpty)
            }
            #expect(try client.send("POST", "/v1/layouts", json: layout, contentType: nil).status == 201)
            #expect(try client.send("POST", "/v1/layouts", json: layout, contentType: "application/json; charset=utf-8").status == 200)
            #expect(try client.send("POST", "/v1/layouts", json: layout, contentType: "Application/JSON").status == 200)
            let session = try client.openSession(#"{"layout":\#(layout),"viewport":[1,1]}"#).id
            _ = try client.send("POST", "/v1/sessions/\(session)/viewport", json: #"{"offset":[0,1]}"#, contentType: "text/plain").problem(415)
            #expect(try client.send("POST", "/v1/sessions/\(session)/viewport", json: #"{"offset":[0,1]}"#, contentType: nil).status == 200)
            #expect(try client.state(session).int("seq") == 1)
        }
    }

    @Test(.tags(.live)) func bodiesOverMaxBodyBytesAnswer413() throws {
        try withService({ $0.http.maxBodyBytes = 2000 }) { service in
            let client = try service.connect()
            // Content-Length over the limit: answered at once, before any body is sent.
            try client.raw.write(
                HTTPTestClient.request(method: "POST", path: "/v1/layouts", headers: [("Content-Type", "application/json"), ("Content-Length", "1000000")]))
            let early = try client.raw.readResponse()
            #expect(early.status == 413)
            #expect(early.header("Content-Type") == "application/problem+json")
            // A chunked body growing past it.
            let big = Array(layoutJSON(listItems(100)).utf8)
            #expect(big.count > 2000)
            let chunks = stride(from: 0, to: big.count, by: 100).map { Array(big[$0..<min(big.count, $0 + 100)]) }
            let chunked = try service.connect()
            let reply = try chunked.send(
                "POST", "/v1/layouts", body: HTTPTestClient.chunked(chunks), headers: [("Transfer-Encoding", "chunked")])
            _ = reply.problem(413)
            // Exactly at the limit is fine.
            let exact = #"{"items":[]}"# + String(repeating: " ", count: 2000 - 12)
            #expect(try service.connect().post("/v1/layouts", exact).status == 201)
            let over = exact + " "
            _ = try service.connect().post("/v1/layouts", over).problem(413)
        }
    }

    @Test func moreItemsThanMaxItemsIs413AlsoInline() throws {
        try withService({ $0.layouts.maxItems = 10 }) { service in
            let client = try service.connect()
            _ = try client.post("/v1/layouts", layoutJSON(listItems(11))).problem(413)
            _ = try client.post("/v1/sessions", #"{"layout":\#(layoutJSON(listItems(11))),"viewport":[1,1]}"#).problem(413)
            #expect(try client.post("/v1/layouts", layoutJSON(listItems(10))).status == 201)
        }
    }

    // MARK: Combinations

    @Test func unknownSessionWithWrongMethodIs404() throws {
        try withService { service in
            let client = try service.connect()
            _ = try client.send("PUT", "/v1/sessions/nope", body: Array("{}".utf8)).problem(404)
            _ = try client.get("/v1/sessions/nope/viewport").problem(404)
            _ = try client.send("POST", "/v1/layouts/nope", body: Array("{}".utf8)).problem(404)
        }
    }

    @Test func wrongMethodWithWrongContentTypeIs405() throws {
        try withService { service in
            let client = try service.connect()
            let reply = try client.send("PUT", "/v1/layouts", json: "x", contentType: "text/plain")
            _ = reply.problem(405)
        }
    }

    @Test func unknownSessionWithWrongContentTypeIs404() throws {
        try withService { service in
            let client = try service.connect()
            _ = try client.send("POST", "/v1/sessions/nope/viewport", json: "x", contentType: "text/plain").problem(404)
        }
    }

    @Test(.tags(.live)) func wrongContentTypeWithOversizedBodyIs415() throws {
        try withService({ $0.http.maxBodyBytes = 100 }) { service in
            let client = try service.connect()
            let reply = try client.send("POST", "/v1/layouts", body: Array(repeating: UInt8(ascii: "x"), count: 100_000), contentType: "text/plain")
            _ = reply.problem(415)
            // Chunked: the 415 is known from the head.
            let chunked = try service.connect()
            let chunkedReply = try chunked.send(
                "POST", "/v1/layouts", body: HTTPTestClient.chunked([Array(repeating: UInt8(ascii: "x"), count: 500)]), contentType: "text/plain",
                headers: [("Transfer-Encoding", "chunked")])
            _ = chunkedReply.problem(415)
        }
    }

    @Test(.tags(.live)) func oversizedInvalidJSONIs413() throws {
        try withService({ $0.http.maxBodyBytes = 100 }) { service in
            let client = try service.connect()
            _ = try client.post("/v1/layouts", String(repeating: "x", count: 101)).problem(413)
            // More items than allowed, with a syntax error after them: 413 comes first.
        }
        try withService({ $0.layouts.maxItems = 2 }) { service in
            let client = try service.connect()
            let items = #"[{"id":"a","rect":[0,0,1,1]},{"id":"b","rect":[0,0,1,1]},{"id":"c","rect":[0,0,1,1]}]"#
            _ = try client.post("/v1/layouts", #"{"items":\#(items),"typo":1}"#).problem(413)
            _ = try client.post("/v1/layouts", #"{"items":\#(items)} trailing"#).problem(413)
            // Whatever the order of the keys: a 400 met before the items is still a 413.
            let typoFirst = try client.post("/v1/layouts", #"{"typo":1,"items":\#(items)}"#).problem(413)
            #expect((typoFirst["detail"] as? String ?? "").contains("typo"))
            let badItems = #"[{"id":"a","rect":[0,0,1]},{"id":"b","rect":[0,0,1,1],"x":1},{"id":"c","rect":[0,0,1,1]}]"#
            _ = try client.post("/v1/layouts", #"{"items":\#(badItems)}"#).problem(413)
            _ = try client.post("/v1/layouts", #"{"sections":[{"id":"f","list":{"count":3,"size":[1,1]}}],"zz":1}"#).problem(413)
            _ = try client.post("/v1/layouts", #"{"zz":1,"sections":[{"id":"f","list":{"count":3,"size":[1,1]}}]}"#).problem(413)
            _ = try client.post("/v1/sessions", #"{"viewport":[1],"layout":{"items":\#(items)}}"#).problem(413)
            _ = try client.post("/v1/sessions", #"{"viewport":[1,1],"layout":{"items":\#(items)},"x":1}"#).problem(413)
            let session = try client.openSession(#"{"layout":{"items":[{"id":"a","rect":[0,0,1,1]}]},"viewport":[1,1]}"#).id
            _ = try client.send("PUT", "/v1/sessions/\(session)/layout", json: #"{"anchor":"bogus","layout":{"items":\#(items)}}"#).problem(413)
            // Within the limit, or with a syntax error before the limit is passed, the 400 stands.
            _ = try client.post("/v1/layouts", #"{"typo":1,"items":[{"id":"a","rect":[0,0,1,1]},{"id":"b","rect":[0,0,1,1]}]}"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"typo":1,"items":[{"id":"a","rect":[0,0,1,1]},{"id":"b","rect":[0,0,1,1]} x"#).problem(400)
            _ = try client.post("/v1/layouts", #"{"zz":1,"sections":[{"id":"f","list":{"count":2,"size":[1,1]}}]}"#).problem(400)
            #expect(try client.state(session).int("seq") == 0)
        }
    }

    @Test func invalidValueWithWrongSeqIs422AndTooManySessionsWithInvalidBodyIs422() throws {
        try withService({ $0.sessions.max = 1 }) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(3)))
            let session = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            _ = try client.update(session, #"{"offset":[0,1],"size":[-1,0],"seq":9}"#).problem(422)
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[-1,1]}"#).problem(422)
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1],"x":1}"#).problem(400)
            _ = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#).problem(429)
        }
    }

    @Test func aLayoutChangeAnswers404And409AndRetriesBeforeItStoresAnInlineLayout() throws {
        // One layout fits: the session's. Storing another would answer 429, which comes after
        // 404, 422 and 409 in the order, and a retry applies nothing (it needs no new layout).
        try withService({ $0.layouts.max = 1 }) { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(3))),"viewport":[1,1]}"#).id
            let answered = try client.update(session, #"{"offset":[0,5]}"#)
            #expect(answered.status == 200)
            let other = #"{"layout":\#(layoutJSON(listItems(4))),"seq":"#
            let conflict = try client.send("PUT", "/v1/sessions/\(session)/layout", json: other + "7}").problem(409)
            #expect(conflict["seq"] as? Int == 1)
            let retry = try client.send("PUT", "/v1/sessions/\(session)/layout", json: other + "1}")
            #expect(retry.status == 200)
            #expect(retry.body == answered.body)
            _ = try client.send("PUT", "/v1/sessions/nope/layout", json: other + "1}").problem(404)
            _ = try client.send("PUT", "/v1/sessions/nope/layout", json: #"{"layout":"no-such-layout"}"#).problem(404)
            // The next seq needs the layout stored: now the table's 429.
            _ = try client.send("PUT", "/v1/sessions/\(session)/layout", json: other + "2}").problem(429)
            #expect(try client.state(session).int("seq") == 1)
        }
    }

    @Test(.tags(.live)) func aRequestWhileStoppingAnswers503() throws {
        // Covered with an in-flight request in ShutdownTests; here the table's status and shape.
        let service = try TestService { $0.http.drainTimeout = .seconds(5) }
        let holder = try service.connect()
        let session = try holder.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,667]}"#).id
        // Keep one request in flight (a stream with its first line applied, the rest pending) so the drain lasts.
        let line = Array((#"{"offset":[0,10]}"# + "\n").utf8)
        try holder.raw.write(
            HTTPTestClient.request(
                method: "POST", path: "/v1/sessions/\(session)/viewport",
                headers: [("Content-Type", "application/x-ndjson"), ("Content-Length", "\(line.count * 2)")]) + line)
        let observer = try service.connect()
        #expect(try eventually { try observer.state(session).int("seq") == 1 })
        let stopped = Locked(false)
        let thread = Thread {
            service.stop()
            stopped.withLock { $0 = true }
        }
        thread.start()
        // Polled for until the drain has begun (a request before it is answered 200).
        var response = HTTPTestResponse(status: 0, reason: "", headers: [], body: [], wasChunked: false)
        #expect(try eventually {
            let late = try HTTPTestClient.connect(port: service.port)
            defer { late.close() }
            response = try late.send(method: "GET", path: "/healthz")
            return response.status == 503
        })
        #expect(response.status == 503)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.closesConnection)
        try holder.raw.write(line)
        let finished = try holder.raw.readResponse()
        #expect(finished.status == 200)
        #expect(finished.bodyString.split(separator: "\n").count == 2)
        #expect(eventually { stopped.get })
    }
}
