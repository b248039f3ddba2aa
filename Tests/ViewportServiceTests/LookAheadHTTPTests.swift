import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// The round trip (`rtt`) and the `lookAhead` option over HTTP, NDJSON and the WebSocket
/// (docs/api.md "Round trips"): the region reaches ahead by what the viewport covers in a round
/// trip, capped; bad values are refused naming the field, and change nothing.
@Suite struct LookAheadHTTPTests {
    /// 2,000 rows of 50 pt: the item under a y is `y / 50`.
    static let layout = layoutJSON(listItems(2000, height: 50))
    static func open(_ options: String = "") -> String {
        #"{"layout":\#(layout),"viewport":[375,600],"offset":[0,1000],"buffer":0\#(options)}"#
    }

    /// The items that entered with a plan (reused or created views), as item numbers.
    static func entered(_ plan: [String: Any]) -> [Int] {
        ["reuse", "create"].flatMap { plan[$0] as? [[String: Any]] ?? [] }
            .compactMap { ($0["id"] as? String).flatMap { Int($0.dropFirst("item-".count)) } }.sorted()
    }

    /// The materialized items of a session, as item numbers.
    static func visible(_ state: [String: Any]) -> [Int] {
        (state["visible"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String).flatMap { Int($0.dropFirst("item-".count)) } }
    }

    @Test func anUpdateWithARoundTripMaterializesAheadAndTheSessionKeepsIt() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open(#","lookAhead":{"max":2000}"#)).id
            let plain = try client.openSession(Self.open()).id
            // 3,000 pt/s for 100 ms and a frame: 350 pt below the viewport's end at 1,700.
            let update = #"{"offset":[0,1100],"velocity":[0,3000],"phase":"dragging","rtt":0.1}"#
            let reply = try client.update(session, update)
            #expect(reply.status == 200, "\(reply.text)")
            #expect(Self.visible(try client.state(session)) == Array(22..<41), "rows 22 … 40 reach 1,100 … 2,050")
            #expect(Self.entered(reply.json) == Array(32..<41))
            // Without a round trip: the region as before.
            #expect(try client.update(plain, update.replacingOccurrences(of: #","rtt":0.1"#, with: "")).status == 200)
            #expect(Self.visible(try client.state(plain)) == Array(22..<34))
            // The session keeps the round trip: upward without `rtt`, 350 pt above.
            let up = try client.update(session, #"{"offset":[0,1000],"velocity":[0,-3000],"phase":"dragging"}"#)
            #expect(up.status == 200)
            #expect(Self.visible(try client.state(session)) == Array(13..<32), "rows 13 … 31 reach 650 … 1,600")
            // No velocity: the still region.
            #expect(try client.update(session, #"{"offset":[0,1000]}"#).status == 200)
            #expect(Self.visible(try client.state(session)) == Array(20..<32))
        }
    }

    @Test func theOpeningTakesTheRoundTripAndTheDefaultCapKeeps2Point5Viewports() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open(#","rtt":0.15"#)).id
            // 100,000 pt/s: the default cap, 1.5 viewports (900 pt) ahead.
            let reply = try client.update(session, #"{"offset":[0,1000],"velocity":[0,100000],"phase":"dragging"}"#)
            #expect(reply.status == 200)
            #expect(Self.visible(try client.state(session)) == Array(20..<50))
            // `lookAhead: 0` turns it off, `{"max": null}` is the default.
            let off = try client.openSession(Self.open(#","rtt":0.15,"lookAhead":0"#)).id
            #expect(try client.update(off, #"{"offset":[0,1000],"velocity":[0,100000]}"#).status == 200)
            #expect(Self.visible(try client.state(off)) == Array(20..<32))
            let standard = try client.openSession(Self.open(#","rtt":0.15,"lookAhead":{"max":null}"#)).id
            #expect(try client.update(standard, #"{"offset":[0,1000],"velocity":[0,100000]}"#).status == 200)
            #expect(Self.visible(try client.state(standard)) == Array(20..<50))
        }
    }

    /// A huge but valid velocity, with the largest round trip, in every phase: no more than the
    /// default cap, every number in every plan finite.
    @Test func hugeVelocitiesMaterializeNoMoreThanTheCapAndAnswerFiniteNumbers() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open(#","rtt":10"#)).id
            var seq = 0
            for velocity in ["1e308", "-1e308", "1.7976931348623157e308", "-1.7976931348623157e308"] {
                for phase in ["drag-begin", "dragging", "drag-end", "decelerating", "idle"] {
                    seq += 1
                    let reply = try client.update(
                        session, #"{"offset":[0,\#(20000 + seq)],"velocity":[\#(velocity),\#(velocity)],"phase":"\#(phase)","rtt":10,"seq":\#(seq)}"#)
                    ExtremeNumberHTTPTests.expectNumbers(reply, "\(phase) at \(velocity)")
                    let visible = Self.visible(try client.state(session))
                    #expect(visible.count <= 31, "\(phase) at \(velocity): \(visible.count) rows for 2.5 viewports of 600 pt")
                }
            }
        }
    }

    static let badRoundTrips: [(json: String, status: Int)] = [
        ("-0.001", 422), ("10.5", 422), ("1e308", 422), ("-1e308", 422), ("1e309", 400), ("\"0.1\"", 400), ("null", 400), ("[0.1]", 400),
    ]

    @Test func badRoundTripsAreRefusedOverHTTPNamingTheFieldAndChangeNothing() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open(#","lookAhead":500"#)).id
            #expect(try client.update(session, #"{"offset":[0,1100],"velocity":[0,3000],"rtt":0.1}"#).status == 200)
            let before = try client.state(session)
            for (bad, status) in Self.badRoundTrips {
                let reply = try client.update(session, #"{"offset":[0,5000],"velocity":[0,3000],"phase":"dragging","rtt":\#(bad),"seq":2}"#)
                let problem = reply.problem(status)
                #expect(names(problem, "rtt"), "rtt \(bad): \(problem)")
                #expect(NSDictionary(dictionary: try client.state(session)).isEqual(to: before), "rtt \(bad) changed nothing")
            }
            // The kept round trip is still the good one: 3,000 pt/s at 0.1 s, 350 pt ahead.
            #expect(try client.update(session, #"{"offset":[0,1100],"velocity":[0,3000],"seq":2}"#).status == 200)
            #expect(Self.visible(try client.state(session)) == Array(22..<41))
        }
    }

    @Test func badOpeningsAreRefusedNamingTheField() throws {
        try withService { service in
            let client = try service.connect()
            for (bad, status) in Self.badRoundTrips {
                let problem = try client.post("/v1/sessions", Self.open(#","rtt":\#(bad)"#)).problem(status)
                #expect(names(problem, "rtt"), "rtt \(bad): \(problem)")
            }
            for (bad, status, field) in [
                ("-1", 422, "lookAhead.max"), (#"{"max":-5}"#, 422, "lookAhead.max"), ("1e309", 400, "lookAhead"),
                (#"{"max":"x"}"#, 400, "lookAhead.max"), (#""big""#, 400, "lookAhead"), ("true", 400, "lookAhead"),
            ] {
                let problem = try client.post("/v1/sessions", Self.open(#","lookAhead":\#(bad)"#)).problem(status)
                #expect(names(problem, field), "lookAhead \(bad): \(problem)")
            }
            let unknown = try client.post("/v1/sessions", Self.open(#","lookAhead":{"cap":5}"#)).problem(400)
            #expect(names(unknown, "cap"), "\(unknown)")
        }
    }

    @Test(.tags(.live)) func badRoundTripsInAStreamStopItAtTheirLine() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open()).id
            for (bad, status) in Self.badRoundTrips {
                let seq = try client.state(session).int("seq") ?? 0
                let body = [
                    #"{"offset":[0,\#(1000 + seq)],"velocity":[0,2000],"rtt":0.05}"#,
                    #"{"offset":[0,1200],"velocity":[0,2000],"rtt":\#(bad)}"#,
                    #"{"offset":[0,1300]}"#,
                ].joined(separator: "\n") + "\n"
                let lines = try client.send("POST", "/v1/sessions/\(session)/viewport", body: Array(body.utf8), contentType: "application/x-ndjson").lines
                try #require(lines.count == 2, "rtt \(bad)")
                #expect(lines[0].int("seq") == seq + 1)
                #expect(lines[1].int("status") == status && lines[1].int("line") == 2, "rtt \(bad): \(lines[1])")
                #expect(names(lines[1], "line 2: rtt"), "rtt \(bad): \(lines[1])")
                let state = try client.state(session)
                #expect(state.int("seq") == seq + 1 && state.doubles("offset") == [0, Double(1000 + seq)], "rtt \(bad): the bad line applied nothing")
            }
        }
    }

    @Test(.tags(.live)) func badRoundTripsOverASocketAnswerTheirProblemAndTheSocketGoesOn() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open(#","lookAhead":{"max":400}"#)).id
            let ws = try WebSocketTestClient.connect(port: service.port, path: "/v1/sessions/\(session)/socket")
            func json(_ text: String) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
            try ws.send(text: #"{"offset":[0,1100],"velocity":[0,3000],"phase":"dragging","rtt":0.1,"seq":1}"#)
            let first = json(try ws.readText())
            #expect(first.int("seq") == 1)
            #expect(Self.entered(first) == Array(32..<41), "350 pt ahead: rows 32 … 40")
            var message = 1
            for (bad, status) in Self.badRoundTrips {
                message += 1
                try ws.send(text: #"{"offset":[0,3000],"velocity":[0,3000],"rtt":\#(bad),"seq":2}"#)
                let problem = json(try ws.readText())
                #expect(problem.int("status") == status && problem.int("message") == message, "rtt \(bad): \(problem)")
                #expect(names(problem, "rtt"), "rtt \(bad): \(problem)")
            }
            // The socket goes on; a plan of the kept round trip, capped at 400 pt.
            try ws.send(text: #"{"offset":[0,1100],"velocity":[0,30000],"phase":"dragging","seq":2}"#)
            let next = json(try ws.readText())
            #expect(next.int("seq") == 2 && Self.entered(next) == [41], "\(next)")
            ws.disconnect()
        }
    }
}
