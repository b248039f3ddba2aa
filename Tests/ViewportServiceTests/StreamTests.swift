import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// NDJSON streams of updates on `POST /v1/sessions/{id}/viewport`.
@Suite(.tags(.live)) struct StreamTests {
    static let items = gridItems(rows: 80, columns: 4, cell: 93.75)
    static let open = #"{"layout":\#(layoutJSON(items)),"viewport":[375,667],"buffer":40,"pool":{"max":4}}"#

    func stream(_ client: Client, _ session: String, _ body: [UInt8]) throws -> Reply {
        try client.send("POST", "/v1/sessions/\(session)/viewport", body: body, contentType: "application/x-ndjson")
    }

    func stream(_ client: Client, _ session: String, _ text: String) throws -> Reply {
        try stream(client, session, Array(text.utf8))
    }

    static func updates(_ count: Int) -> [String] {
        var generator = TestRandom(seed: 2024)
        var y = 0.0
        return (0..<count).map { i in
            y = i % 17 == 16 ? Double(Int.random(in: 0...7000, using: &generator)) : max(0, y + Double(Int.random(in: -60...140, using: &generator)))
            let phase = ["drag-begin", "dragging", "dragging", "drag-end", "decelerating", "idle"][i % 6]
            return #"{"offset":[0,\#(number(y))],"velocity":[0,\#(i * 10)],"phase":"\#(phase)"\#(i % 4 == 0 ? #","seq":\#(i + 1)"# : "")}"#
        }
    }

    @Test func aStreamAnswersOnePlanLinePerUpdateIdenticalToOneRequestPerUpdate() throws {
        try withService { service in
            let client = try service.connect()
            let a = try client.openSession(Self.open).id
            let b = try client.openSession(Self.open).id
            let updates = Self.updates(300)
            let reply = try stream(client, a, updates.joined(separator: "\n") + "\n")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/x-ndjson")
            let lines = reply.lines
            #expect(lines.count == updates.count)
            #expect(reply.text.hasSuffix("\n"))
            for (i, update) in updates.enumerated() {
                let single = try client.update(b, update)
                #expect(single.status == 200)
                if i < lines.count {
                    #expect(NSDictionary(dictionary: lines[i]).isEqual(to: single.json), "line \(i + 1)")
                }
            }
            var stateA = try client.state(a), stateB = try client.state(b)
            stateA["session"] = nil
            stateB["session"] = nil
            #expect(NSDictionary(dictionary: stateA).isEqual(to: stateB))
            #expect(stateA.int("seq") == updates.count)
        }
    }

    /// A client that reads while it uploads gets its plans while the upload goes on (the layer
    /// answers before the body ends), and they are the plans one request per update would give.
    @Test func plansArriveWhileTheUploadIsStillGoing() throws {
        try withService { service in
            let client = try service.connect()
            let a = try client.openSession(Self.open).id
            let b = try client.openSession(Self.open).id
            let updates = Self.updates(400)
            let first = Array((updates[..<300].joined(separator: "\n") + "\n").utf8)
            let second = Array((updates[300...].joined(separator: "\n") + "\n").utf8)
            try client.raw.write(Self.chunkedStreamHead(a) + HTTPTestClient.chunk(first))
            Thread.sleep(forTimeInterval: 0.1)
            try client.raw.write(HTTPTestClient.chunk(Array("\n".utf8)))
            let head = String(decoding: try client.raw.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.contains("Content-Type: application/x-ndjson\r\n"))
            // The first plan line is here before the second half of the upload is sent.
            let early = try client.raw.read(through: Array("}\n".utf8))
            #expect(String(decoding: early, as: UTF8.self).contains(#""seq":1"#))
            try client.raw.write(HTTPTestClient.chunk(second) + Array("0\r\n\r\n".utf8))
            let rest = try client.raw.read(through: Array("\r\n0\r\n\r\n".utf8))
            try Self.expectOneRequestEach(answer: early + rest, to: updates, on: b, of: service)
        }
    }

    @Test func aClientThatWaitsForEachPlanBeforeItsNextLineGetsIt() throws {
        // One chunked stream used as a conversation: a line, then its plan, then the next line.
        // The layer hears of a stream only when bytes arrive, so the 50 ms rule alone left this
        // client waiting for ever (its plan went out with the next line, which never came).
        try withService { service in
            let client = try service.connect()
            let a = try client.openSession(Self.open).id
            let b = try client.openSession(Self.open).id
            let updates = Self.updates(5)
            try client.raw.write(Self.chunkedStreamHead(a))
            var answered: [UInt8] = []
            for (i, update) in updates.enumerated() {
                try client.raw.write(HTTPTestClient.chunk(Array((update + "\n").utf8)))
                if i == 0 {
                    let head = String(decoding: try client.raw.read(through: Array("\r\n\r\n".utf8), timeout: 5), as: UTF8.self)
                    #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
                }
                answered += try client.raw.read(through: Array("}\n".utf8), timeout: 5)
                #expect(String(decoding: answered, as: UTF8.self).contains(#""seq":\#(i + 1)"#), "line \(i + 1)")
            }
            try client.raw.write(Array("0\r\n\r\n".utf8))
            answered += try client.raw.read(through: Array("\r\n0\r\n\r\n".utf8), timeout: 5)
            try Self.expectOneRequestEach(answer: answered, to: updates, on: b, of: service)
        }
    }

    /// The head of a chunked NDJSON stream of updates to `session` (its lines follow as chunks).
    static func chunkedStreamHead(_ session: String) -> [UInt8] {
        HTTPTestClient.request(
            method: "POST", path: "/v1/sessions/\(session)/viewport",
            headers: [("Content-Type", "application/x-ndjson"), ("Transfer-Encoding", "chunked")])
    }

    /// A chunked stream's answer (its chunks, from the first size line to the last chunk) has one
    /// plan line per update, each what one request per update answers on `twin`, a session
    /// opened alike.
    static func expectOneRequestEach(answer: [UInt8], to updates: [String], on twin: String, of service: TestService) throws {
        let lines = String(decoding: try dechunk(answer), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == updates.count)
        let fresh = try service.connect()
        for (i, update) in updates.enumerated() where i < lines.count {
            let line = try JSONSerialization.jsonObject(with: Data(lines[i].utf8)) as? NSDictionary
            #expect(line?.isEqual(to: try fresh.update(twin, update).json) == true, "line \(i + 1)")
        }
    }

    /// The data of a chunked body (from its first size line to its last chunk).
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var data: [UInt8] = []
        var i = 0
        while true {
            let lineEnd = try #require((i..<(bytes.count - 1)).first { bytes[$0] == 13 && bytes[$0 + 1] == 10 })
            let size = try #require(Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self), radix: 16))
            if size == 0 { return data }
            data += bytes[(lineEnd + 2)..<(lineEnd + 2 + size)]
            i = lineEnd + 2 + size + 2
        }
    }

    @Test func aStreamSentInSmallChunksSplittingLinesGivesTheSamePlans() throws {
        try withService { service in
            let client = try service.connect()
            let a = try client.openSession(Self.open).id
            let b = try client.openSession(Self.open).id
            let updates = Self.updates(60)
            let body = Array((updates.joined(separator: "\r\n") + "\r\n").utf8)
            // Chunks of 1 … 37 bytes: lines split anywhere, even inside numbers and "\r\n".
            var chunks: [[UInt8]] = []
            var i = 0, size = 1
            while i < body.count {
                chunks.append(Array(body[i..<min(body.count, i + size)]))
                i += size
                size = size % 37 + 1
            }
            let reply = try client.send(
                "POST", "/v1/sessions/\(a)/viewport", body: HTTPTestClient.chunked(chunks), contentType: "application/x-ndjson",
                headers: [("Transfer-Encoding", "chunked")])
            #expect(reply.status == 200)
            let whole = try stream(client, b, body)
            #expect(reply.lines.count == updates.count)
            #expect(reply.text == whole.text)
        }
    }

    @Test func aBadLineAnswersAProblemWithItsLineNumberAndStopsEarlierUpdatesStay() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let body = [
                #"{"offset":[0,100]}"#,
                #"{"offset":[0,200],"seq":2}"#,
                #"{"offset":[0,300]}"#,
                #"{"offset":[0,400],"phase":"flying"}"#,
                #"{"offset":[0,500]}"#,
            ].joined(separator: "\n") + "\n"
            let reply = try stream(client, session, body)
            #expect(reply.status == 200)
            let lines = reply.lines
            try #require(lines.count == 4)
            #expect(lines[0..<3].map { $0.int("seq") } == [1, 2, 3])
            let problem = lines[3]
            #expect(problem.int("status") == 400)
            #expect(problem.int("line") == 4)
            #expect(names(problem, "line 4: phase", value: "flying"), "\(problem)")
            #expect(problem["type"] is String && problem["title"] is String)
            let state = try client.state(session)
            #expect(state.int("seq") == 3)
            #expect(state.doubles("offset") == [0, 300])
        }
    }

    @Test func problemLinesCarryTheStatusOfTheirError() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            // 409 with the current seq.
            var lines = try stream(client, session, #"{"offset":[0,10]}"# + "\n" + #"{"offset":[0,20],"seq":5}"# + "\n").lines
            #expect(lines.count == 2)
            #expect(lines.last?.int("status") == 409)
            #expect(lines.last?.int("seq") == 1)
            #expect(lines.last?.int("line") == 2)
            // 422.
            lines = try stream(client, session, #"{"offset":[0,10],"size":[-5,1]}"# + "\n" + #"{"offset":[0,30]}"#).lines
            #expect(lines.count == 1)
            #expect(lines.first?.int("status") == 422)
            #expect(lines.first?.int("line") == 1)
            // Not JSON.
            lines = try stream(client, session, "{\"offset\":[0,40]}\nnot json\n").lines
            #expect(lines.count == 2)
            #expect(lines.last?.int("status") == 400)
            #expect(lines.last?.int("line") == 2)
            // Two objects on one line.
            lines = try stream(client, session, #"{"offset":[0,50]} {"offset":[0,60]}"# + "\n").lines
            #expect(lines.first?.int("status") == 400)
            #expect(try client.state(session).int("seq") == 2)
        }
    }

    @Test func anEmptyStreamAnswersNoLines() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let reply = try stream(client, session, [])
            #expect(reply.status == 200)
            #expect(reply.body.isEmpty)
            let chunked = try client.send(
                "POST", "/v1/sessions/\(session)/viewport", body: HTTPTestClient.chunked([]), contentType: "application/x-ndjson",
                headers: [("Transfer-Encoding", "chunked")])
            #expect(chunked.status == 200)
            #expect(chunked.body.isEmpty)
            #expect(try client.state(session).int("seq") == 0)
        }
    }

    @Test func aTrailingLineWithoutNewlineIsProcessed() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let reply = try stream(client, session, #"{"offset":[0,100]}"# + "\n" + #"{"offset":[0,250]}"#)
            #expect(reply.lines.map { $0.int("seq") } == [1, 2])
            #expect(try client.state(session).doubles("offset") == [0, 250])
        }
    }

    @Test func blankLinesCarryNoUpdateButCountInLineNumbers() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let reply = try stream(client, session, "\n" + #"{"offset":[0,100]}"# + "\n\n  \r\n\t\n" + #"{"offset":[0,200]}"# + "\n\n" + #"{"bad":1}"# + "\n")
            let lines = reply.lines
            #expect(lines.map { $0.int("seq") }.prefix(2) == [1, 2])
            #expect(lines.count == 3)
            #expect(lines.last?.int("line") == 8)
            #expect(try client.state(session).int("seq") == 2)
        }
    }

    @Test func aStreamGrowingPastMaxBodyBytesStopsWithA413LineAndKeepsEarlierUpdates() throws {
        try withService({ $0.http.maxBodyBytes = 1000 }) { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,667]}"#).id
            let line = Array((#"{"offset":[0,1]}"# + "\n").utf8)  // 17 bytes
            let chunks = (0..<100).map { i in Array((#"{"offset":[0,\#(i % 10)]}"# + "\n").utf8) }
            #expect(line.count == chunks[1].count)
            let reply = try client.send(
                "POST", "/v1/sessions/\(session)/viewport", body: HTTPTestClient.chunked(chunks), contentType: "application/x-ndjson",
                headers: [("Transfer-Encoding", "chunked")])
            #expect(reply.status == 200)
            let lines = reply.lines
            // 1000 bytes hold 58 whole lines of 17 bytes.
            #expect(lines.count == 59)
            #expect(lines.dropLast().allSatisfy { $0["seq"] != nil })
            #expect(lines.last?.int("status") == 413)
            #expect(lines.last?.int("line") == 59)
            let fresh = try service.connect()
            #expect(try fresh.state(session).int("seq") == 58)
        }
    }

    /// Plans can be far larger than the updates behind them (here a 20-byte jump answers ~2 KB),
    /// and they are held until the upload ends: past twice `http.maxBodyBytes` of held plans, the next
    /// line is refused with 413 and the stream stops, so a small upload cannot pin unbounded memory.
    @Test func heldPlansPastMaxBodyBytesStopTheStreamWithA413LineOnTheNextUpdate() throws {
        try withService({ $0.http.maxBodyBytes = 4000 }) { service in
            let client = try service.connect()
            // 20 rows of 50 pt on screen and in the buffer: each jump recycles and reuses them all.
            let open = #"{"layout":{"sections":[{"id":"r","reuse":"row","list":{"count":1000,"size":[375,50]}}]},"viewport":[375,960]}"#
            let session = try client.openSession(open).id
            let updates = (0..<100).map { i in #"{"offset":[0,\#(i % 2 == 0 ? 30000 : 0)]}"# }
            let body = updates.joined(separator: "\n") + "\n"
            #expect(body.utf8.count < 4000)
            let reply = try stream(client, session, body)
            #expect(reply.status == 200)
            let lines = reply.text.split(separator: "\n").map(String.init)
            let parsed = reply.lines
            let applied = parsed.count - 1
            #expect(applied >= 1 && applied < 10)
            #expect(parsed.last?.int("status") == 413)
            #expect(parsed.last?.int("line") == applied + 1)
            #expect(parsed.dropLast().allSatisfy { $0["seq"] != nil })
            // The plans answered before the refusal passed the limit only with their last one.
            let planBytes = lines.dropLast().map { $0.utf8.count + 1 }
            #expect(planBytes.reduce(0, +) > 2 * 4000)
            #expect(planBytes.dropLast().reduce(0, +) <= 2 * 4000)
            #expect(try service.connect().state(session).int("seq") == applied)
        }
    }

    @Test func aStreamDeclaredLargerThanMaxBodyBytesIs413AtOnceAndAppliesNothing() throws {
        try withService({ $0.http.maxBodyBytes = 1000 }) { service in
            let client = try service.connect()
            let session = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[375,667]}"#).id
            try client.raw.write(
                HTTPTestClient.request(
                    method: "POST", path: "/v1/sessions/\(session)/viewport",
                    headers: [("Content-Type", "application/x-ndjson"), ("Content-Length", "5000")]))
            let response = try client.raw.readResponse()
            #expect(response.status == 413)
            #expect(try service.connect().state(session).int("seq") == 0)
        }
    }

    @Test func aSessionDeletedDuringItsStreamStopsTheStreamWithA404Line() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            try client.raw.write(
                HTTPTestClient.request(
                    method: "POST", path: "/v1/sessions/\(session)/viewport",
                    headers: [("Content-Type", "application/x-ndjson"), ("Transfer-Encoding", "chunked")]))
            let line: (Int) -> [UInt8] = { Array(HTTPTestClient.chunked([Array((#"{"offset":[0,\#($0 * 100)]}"# + "\n").utf8)]).dropLast(5)) }
            try client.raw.write(line(1) + line(2))
            // Lines 1 and 2 are applied as they arrive: wait until they are, then delete.
            let observer = try service.connect()
            #expect(try eventually { try observer.state(session).int("seq") == 2 })
            #expect(try observer.delete("/v1/sessions/\(session)").status == 204)
            try client.raw.write(line(3) + line(4) + Array("0\r\n\r\n".utf8))
            let response = try client.raw.readResponse()
            #expect(response.status == 200)
            let lines = Reply(status: response.status, headers: response.headers, body: response.body).lines
            #expect(lines.count == 3)
            #expect(lines.prefix(2).map { $0.int("seq") } == [1, 2])
            #expect(lines.last?.int("status") == 404)
            #expect(lines.last?.int("line") == 3)
        }
    }

    @Test func streamsAreOnlyAcceptedOnTheViewportEndpoint() throws {
        try withService { service in
            let client = try service.connect()
            _ = try client.send("POST", "/v1/layouts", json: layoutJSON(listItems(2)), contentType: "application/x-ndjson").problem(415)
            _ = try client.send("POST", "/v1/sessions", json: "{}", contentType: "application/x-ndjson").problem(415)
            _ = try stream(client, "nope", #"{"offset":[0,1]}"#).problem(404)
        }
    }
}
