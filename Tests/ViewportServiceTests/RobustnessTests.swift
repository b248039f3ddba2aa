import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Hostile and broken input: the server answers (or closes) and keeps serving.
@Suite(.tags(.live)) struct RobustnessTests {
    /// The service still answers normal requests on a new connection.
    func expectServing(_ service: TestService, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let client = try service.connect()
        #expect(try client.get("/healthz").status == 200, sourceLocation: sourceLocation)
        #expect(try client.post("/v1/layouts", layoutJSON(listItems(2))).status != 500, sourceLocation: sourceLocation)
    }

    /// Sends `bytes` and requires a refusal: an answer with one of `statuses`, or a close
    /// without an answer. A hang (neither within 3 s; these tests set a 1 s connection timeout,
    /// which ends what MHD reads as an unfinished request) fails, and so does any other status.
    func expectRefusal(
        _ bytes: [UInt8], with statuses: Set<Int> = [400], _ service: TestService, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = try HTTPTestClient.outcome(ofSending: bytes, port: service.port)
        if let status = outcome.status {
            #expect(statuses.contains(status), "\(String(decoding: bytes.prefix(60), as: UTF8.self).debugDescription) → \(status)", sourceLocation: sourceLocation)
        }
    }

    /// Garbage is answered 400 or closed; MHD 0.9.75 reads a request line with a NUL byte as
    /// unfinished, and the connection timeout (1 s here) closes it.
    @Test func garbageBytesOnTheSocketAreRefusedAndDoNotHurtTheServer() throws {
        try withService({ $0.http.connectionTimeout = .seconds(1) }) { service in
            var generator = TestRandom(seed: 1414)
            for round in 0..<20 {
                var bytes = (0..<Int.random(in: 1...4000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if round % 4 == 0 { bytes += Array("\r\n\r\n".utf8) }
                if bytes.contains(UInt8(ascii: "\n")) {
                    // A line ended: the server has something to refuse.
                    try expectRefusal(bytes, service)
                } else {
                    // No line yet: the request is still arriving; the server waits for more.
                    let client = try HTTPTestClient.connect(port: service.port, timeout: 2)
                    try client.sendRaw(bytes)
                    client.close()
                }
            }
            try expectServing(service)
        }
    }

    @Test func malformedRequestLinesAndHeadersAreRejected() throws {
        try withService { service in
            for raw in [
                "GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
                "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
                "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                "POST /v1/layouts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nxx\r\n",
            ] {
                // 505 is HTTP's own answer to an unsupported major version (RFC 9110 §15.6.6).
                try expectRefusal(Array(raw.utf8), with: raw.contains("HTTP/9.9") ? [505] : [400], service)
            }
            try expectServing(service)
        }
    }

    @Test func truncatedRequestsThenCloseDoNotHurtTheServer() throws {
        try withService { service in
            let layout = Array(layoutJSON(listItems(50)).utf8)
            let full = HTTPTestClient.request(method: "POST", path: "/v1/layouts", headers: [("Content-Type", "application/json")], body: layout)
            for cut in [5, 20, full.count - layout.count - 2, full.count - layout.count + 10, full.count - 1] {
                let client = try HTTPTestClient.connect(port: service.port, timeout: 2)
                try client.sendRaw(Array(full[..<cut]))
                client.close()
            }
            // A truncated NDJSON stream: the lines that arrived stay applied.
            let api = try service.connect()
            let session = try api.openSession(#"{"layout":\#(layoutJSON(listItems(50))),"viewport":[375,667]}"#).id
            let lines = Array((#"{"offset":[0,100]}"# + "\n" + #"{"offset":[0,200]}"# + "\n" + #"{"offset":[0,3"#).utf8)
            let cutStream = try HTTPTestClient.connect(port: service.port, timeout: 2)
            try cutStream.sendRaw(
                HTTPTestClient.request(
                    method: "POST", path: "/v1/sessions/\(session)/viewport",
                    headers: [("Content-Type", "application/x-ndjson"), ("Content-Length", "1000")], body: lines))
            // The two whole lines are applied as they arrive; then the client goes away.
            #expect(try eventually { try api.state(session).int("seq") == 2 })
            cutStream.close()
            // The cut third line is never applied.
            #expect(try api.state(session).int("seq") == 2)
            #expect(try api.state(session).doubles("offset") == [0, 200])
            try expectServing(service)
        }
    }

    @Test func bodiesPastHttpMaxBufferedBodyBytesAnswer503ProblemsWithRetryAfter() throws {
        try withService({ $0.http.maxBodyBytes = 1000; $0.http.maxBufferedBodyBytes = 1000; $0.http.connectionTimeout = .seconds(60) }) { service in
            let slow = try service.connect()
            try slow.raw.write(
                HTTPTestClient.request(method: "POST", path: "/v1/layouts", headers: [("Content-Type", "application/json"), ("Content-Length", "900")])
                    + Array("{\"items\":[".utf8))
            // The slow body holds its declared 900 bytes as soon as its head is read (waited for on
            // the gauge: a loaded machine may take a while to get there).
            #expect(eventually(within: 30) { service.server.bufferedBodyBytes == 900 })
            let client = try service.connect()
            let reply = try client.post("/v1/layouts", layoutJSON(listItems(3)))
            let problem = reply.problem(503)
            #expect((problem["detail"] as? String)?.contains("http.maxBufferedBodyBytes") == true)
            #expect(reply.header("Retry-After") == "1")
            #expect(problem["retryAfter"] as? Int == 1)
            try slow.raw.close()
            #expect(eventually(within: 30) { service.server.bufferedBodyBytes == 0 })
            // Once the slow body is gone, the same post goes through.
            #expect(try service.connect().post("/v1/layouts", layoutJSON(listItems(3))).status == 201)
        }
    }

    /// A problem quotes what the client sent, but not megabytes of it: an unknown 1 MB id in
    /// `select` or in a PATCH's `remove` answers its 422 with a detail of about a kilobyte that
    /// names the field and says how long it was.
    @Test func aHugeUnknownIDIsNotEchoedWhole() throws {
        let huge = String(repeating: "a", count: 1_000_000)
        try withService { service in
            let client = try service.connect()
            let (id, _) = try client.openSession(#"{"layout":\#(layoutJSON(listItems(20))),"viewport":[375,300]}"#)
            let select = try client.update(id, #"{"offset":[0,10],"select":"\#(huge)"}"#)
            let detail = select.json["detail"] as? String ?? ""
            #expect(select.status == 422 && detail.hasPrefix("select: ") && detail.utf8.count < 3_000, "\(select.status) \(detail.prefix(200))")
            #expect(detail.hasSuffix("bytes of detail, cut)"), "\(detail.suffix(80))")
            let chat = #"{"sections":[{"id":"chat","stack":{"items":[{"id":"m1","size":[375,50]}]}}]}"#
            let (stack, _) = try client.openSession(#"{"layout":\#(chat),"viewport":[375,300]}"#)
            let remove = try client.send("PATCH", "/v1/sessions/\(stack)/layout", json: #"{"remove":["\#(huge)"]}"#)
            let removeDetail = remove.json["detail"] as? String ?? ""
            #expect(remove.status == 422 && removeDetail.hasPrefix("remove[0]: ") && removeDetail.utf8.count < 3_000, "\(remove.status) \(removeDetail.prefix(200))")
            // A short detail is whole.
            let short = try client.update(id, #"{"offset":[0,10],"select":"nope"}"#)
            #expect((short.json["detail"] as? String)?.contains("\"nope\"") == true, "\(short.text)")
        }
    }

    @Test func aSlowlyTrickledBodyIsStillAnswered() throws {
        try withService { service in
            let client = try service.connect()
            let body = Array(layoutJSON(listItems(8)).utf8)
            try client.raw.write(
                HTTPTestClient.request(method: "POST", path: "/v1/layouts", headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]))
            for i in stride(from: 0, to: body.count, by: 40) {
                try client.raw.write(Array(body[i..<min(body.count, i + 40)]))
                Thread.sleep(forTimeInterval: 0.01)
            }
            let response = try client.raw.readResponse()
            #expect(response.status == 201)
            #expect(response.bodyString.contains("\"items\":8"))
        }
    }

    @Test func aSlowlyTrickledStreamIsAnsweredLineByLine() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#).id
            try client.raw.write(
                HTTPTestClient.request(
                    method: "POST", path: "/v1/sessions/\(session)/viewport",
                    headers: [("Content-Type", "application/x-ndjson"), ("Transfer-Encoding", "chunked")]))
            for i in 0..<20 {
                try client.raw.write(Array(HTTPTestClient.chunked([Array((#"{"offset":[0,\#(i * 50)]}"# + "\n").utf8)]).dropLast(5)))
                Thread.sleep(forTimeInterval: 0.01)
            }
            try client.raw.write(Array("0\r\n\r\n".utf8))
            let response = try client.raw.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyString.split(separator: "\n").count == 20)
        }
    }

    @Test func invalidUTF8InAJSONStringIs400() throws {
        try withService { service in
            let client = try service.connect()
            for bad in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF8, 0x88, 0x80, 0x80, 0x80]] as [[UInt8]] {
                let body = Array(#"{"items":[{"id":""#.utf8) + bad + Array(#"","rect":[0,0,1,1]}]}"#.utf8)
                _ = try client.send("POST", "/v1/layouts", body: body).problem(400)
            }
            // An unpaired surrogate escape.
            _ = try client.post("/v1/layouts", #"{"items":[{"id":"\ud800","rect":[0,0,1,1]}]}"#).problem(400)
            // Valid multi-byte ids work and round-trip.
            let reply = try client.post("/v1/sessions", #"{"layout":{"items":[{"id":"日本\u00e9😀","rect":[0,0,10,10]}]},"viewport":[10,10]}"#)
            #expect(reply.status == 201)
            #expect(reply.json.object("plan").ids("create") == ["日本é😀"])
            try expectServing(service)
        }
    }

    @Test func deeplyNestedJSONIs400() throws {
        try withService { service in
            let client = try service.connect()
            for depth in [100, 10_000, 100_000] {
                let body = #"{"items":[{"id":"a","rect":[0,0,1,1],"reuse":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}]}"
                _ = try client.post("/v1/layouts", body).problem(400)
                let nested = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
                _ = try client.post("/v1/sessions", nested).problem(400)
            }
            try expectServing(service)
        }
    }

    @Test func hugeAndOddNumbersAreHandled() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,667]}"#).id
            // Finite extremes are fine.
            var reply = try client.update(session, #"{"offset":[0,1.7976931348623157e308]}"#)
            #expect(reply.status == 200)
            #expect(reply.json.doubles("offset") == [0, 1.7976931348623157e308])
            reply = try client.update(session, #"{"offset":[-1e300,5e-324]}"#)
            #expect(reply.status == 200)
            // Non-finite after parsing, or not numbers at all.
            for bad in ["1e309", "-1e400", "Infinity", "-Infinity", "NaN", "1" + String(repeating: "0", count: 400), "0x10", "+1", "01", "1.", ".5", "1e"] {
                _ = try client.update(session, #"{"offset":[0,\#(bad)]}"#).problem(400)
            }
            // A long but finite number.
            reply = try client.update(session, #"{"offset":[0,0.\#(String(repeating: "1", count: 1000))]}"#)
            #expect(reply.status == 200)
            #expect(try client.state(session).int("seq") == 3)
            // Viewports so large the region overflows to infinity must not crash.
            reply = try client.update(session, #"{"offset":[-1.7976931348623157e308,-1.7976931348623157e308],"size":[1.7976931348623157e308,1.7976931348623157e308]}"#)
            #expect([200, 422].contains(reply.status))
            try expectServing(service)
        }
    }

    @Test func manyRequestsOnOneKeepAliveConnection() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(1000))),"viewport":[375,667]}"#).id
            for i in 1...500 {
                let reply = try client.update(session, #"{"offset":[0,\#(i * 7)],"seq":\#(i)}"#)
                #expect(reply.status == 200)
                if reply.status != 200 { break }
            }
            // Errors keep the connection alive too.
            for _ in 0..<20 {
                #expect(try client.post("/v1/layouts", "nope").status == 400)
                #expect(try client.get("/nope").status == 404)
            }
            #expect(try client.state(session).int("seq") == 500)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#).id
            var bytes: [UInt8] = []
            for i in 1...10 {
                bytes += HTTPTestClient.request(
                    method: "POST", path: "/v1/sessions/\(session)/viewport", headers: [("Content-Type", "application/json")],
                    body: Array(#"{"offset":[0,\#(i * 100)]}"#.utf8))
            }
            try client.raw.write(bytes)
            for i in 1...10 {
                let response = try client.raw.readResponse()
                #expect(response.status == 200)
                #expect(response.bodyString.contains("\"seq\":\(i),"))
            }
        }
    }
}

/// Values that must come back exactly as sent.
@Suite struct RoundTripTests {
    /// The numbers of the first `"key":[…]` array in `text`, parsed with Swift's exact `Double(_:)`
    /// (Foundation's JSONSerialization on Linux rounds some doubles).
    static func exactNumbers(_ text: String, key: String) -> [Double] {
        guard let start = text.range(of: "\"\(key)\":[") else { return [] }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "]") else { return [] }
        return rest[..<end].split(separator: ",").compactMap { Double(String($0)) }
    }

    @Test func itemIdsNeedingEscapesRoundTripThroughPlansAndState() throws {
        try withService { service in
            let client = try service.connect()
            let ids = ["quote\"d", "back\\slash", "new\nline", "tab\t", "ctl\u{01}\u{1F}", "del\u{7F}", "sep\u{2028}\u{2029}", "slash/</script>", "é日本😀", " "]
            let items = ids.enumerated().map { i, id in ["id": id, "rect": [0, i * 10, 10, 10], "reuse": i % 2 == 0 ? "r\"\\\n" : "plain"] as [String: Any] }
            let body = try JSONSerialization.data(withJSONObject: ["layout": ["items": items], "viewport": [100, 1000]])
            let reply = try client.send("POST", "/v1/sessions", body: Array(body))
            #expect(reply.status == 201, "\(reply.text)")
            let plan = reply.json.object("plan")
            #expect(plan.ids("create") == ids)
            #expect(plan.entries("create").map { $0["reuse"] as? String } == ids.indices.map { $0 % 2 == 0 ? "r\"\\\n" : "plain" })
            let session = try #require(reply.json["session"] as? String)
            let state = try client.state(session)
            #expect(state.ids("visible") == ids)
            _ = try client.update(session, #"{"offset":[0,5000]}"#)
            let pool = try client.state(session).object("pool")
            #expect(Set(pool.keys) == ["r\"\\\n", "plain"])
        }
    }

    @Test func offsetsAndRectsRoundTripExactly() throws {
        try withService { service in
            let client = try service.connect()
            var generator = TestRandom(seed: 2024)
            var values: [Double] = [0.1, 0.30000000000000004, 1e-7, 123456789.123, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e22, 123e-20, 9007199254740993, 0.000001, 1e-6, 100, 1.5]
            for _ in 0..<100 { values.append(Double.random(in: -1e6...1e6, using: &generator)) }
            for _ in 0..<50 { values.append(Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &generator))) }
            let items = values.enumerated().map { i, v in TestItem(id: "i\(i)", rect: [abs(v), 0, 1, 1]) }
            // Rects as Swift prints them (shortest round-trip form).
            let list = items.map { #"{"id":"\#($0.id)","rect":[\#($0.rect.map { "\($0)" }.joined(separator: ","))]}"# }.joined(separator: ",")
            let layoutReply = try client.post("/v1/layouts", #"{"items":[\#(list)],"contentSize":[1,1]}"#)
            #expect(layoutReply.status == 201, "\(layoutReply.text)")
            let opened = try client.openSession(#"{"layout":"\#(layoutReply.json["layout"] as! String)","viewport":[1,1],"buffer":0}"#)
            for v in values {
                let reply = try client.update(opened.id, #"{"offset":[\#(v),\#(-v)]}"#)
                #expect(reply.status == 200)
                #expect(Self.exactNumbers(reply.text, key: "offset") == [v, -v], "\(v): \(reply.text)")
            }
            // Each item entering at offset x = its own x comes with its rect exactly as sent.
            // (Where x + 1 == x the item is empty on x and only touches the region: not materialized.)
            for (i, v) in values.enumerated().prefix(60) where abs(v) + 1 != abs(v) {
                #expect(try client.update(opened.id, #"{"offset":[-10,-10]}"#).status == 200)
                let reply = try client.update(opened.id, #"{"offset":[\#(abs(v)),0]}"#)
                guard let at = reply.text.range(of: #""id":"i\#(i)","#) else {
                    Issue.record("i\(i) (x = \(abs(v))) did not enter: \(reply.text)")
                    continue
                }
                #expect(Self.exactNumbers(String(reply.text[at.lowerBound...]), key: "rect") == [abs(v), 0, 1, 1])
            }
        }
    }
}

@Suite struct AmplificationTests {
    @Test func aTinyGeneratedLayoutOfZeroSizeItemsCannotForceAHugePlan() throws {
        try withService({ $0.sessions.maxViews = 1000 }) { service in
            let client = try service.connect(timeout: 5 * sanitizerSlowdown)
            // ~100 bytes that would materialize 100,000 items at once.
            let body = #"{"layout":{"sections":[{"id":"z","list":{"count":100000,"size":[0,0]}}]},"viewport":[10,10]}"#
            let problem = try client.post("/v1/sessions", body).problem(422)
            #expect((problem["detail"] as? String)?.contains("sessions.maxViews") == true)
            #expect(try client.get("/metrics").text.contains("viewportd_sessions 0"))
            // The server keeps serving.
            #expect(try client.get("/healthz").status == 200)
        }
    }
}
