import Foundation
import Synchronization
import Testing
import ViewportService
import ViewportTestSupport

/// `GET /v1/sessions/{id}/socket`: viewport updates and their plans over a WebSocket.
@Suite(.tags(.live)) struct WebSocketTests {
    static let open = StreamTests.open

    /// A WebSocket on a session; adds the bearer header when the service has a token (unless `auth` is false).
    func socket(
        _ service: TestService, _ session: String, protocols: [String] = [], headers: [(name: String, value: String)] = [], auth: Bool = true
    ) throws -> WebSocketTestClient {
        var all = headers
        if auth, let token = service.token { all.append(("Authorization", "Bearer \(token)")) }
        return try WebSocketTestClient.connect(port: service.port, path: "/v1/sessions/\(session)/socket", protocols: protocols, headers: all)
    }

    func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aRandomTraceOverASocketGivesByteIdenticalPlansToPOSTs() throws {
        try withService { service in
            let client = try service.connect()
            let viaSocket = try client.openSession(Self.open).id
            let viaPOST = try client.openSession(Self.open).id
            let ws = try socket(service, viaSocket)
            #expect(ws.isOpen)
            let updates = StreamTests.updates(300)
            for (i, update) in updates.enumerated() {
                // Text and binary messages are the same update.
                if i % 3 == 2 { try ws.send(binary: Array(update.utf8)) } else { try ws.send(text: update) }
                let plan = try ws.readMessage()
                #expect(plan.opcode == WebSocketTestClient.text)
                let reply = try client.update(viaPOST, update)
                #expect(reply.status == 200)
                #expect(plan.payload == reply.body, "update \(i + 1): \(update)")
            }
            var a = try client.state(viaSocket), b = try client.state(viaPOST)
            a["session"] = nil
            b["session"] = nil
            #expect(NSDictionary(dictionary: a).isEqual(to: b))
            #expect(a.int("seq") == updates.count)
        }
    }

    @Test func aBadMessageAnswersItsProblemWithItsNumberAndTheSocketStaysOpen() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let ws = try socket(service, session)
            try ws.send(text: #"{"offset":[0,100]}"#)
            #expect(json(try ws.readText()).int("seq") == 1)
            try ws.send(text: "not json")
            let bad = json(try ws.readText())
            #expect(bad.int("status") == 400)
            #expect(bad.int("message") == 2)
            #expect(bad["type"] is String && bad["title"] is String && bad["detail"] is String)
            try ws.send(text: #"{"offset":[0,200],"phase":"flying"}"#)
            let enumeration = json(try ws.readText())
            #expect(enumeration.int("status") == 400 && enumeration.int("message") == 3)
            #expect(names(enumeration, "phase", value: "flying"), "\(enumeration)")
            try ws.send(text: #"{"offset":[0,200],"size":[-1,5]}"#)
            #expect(json(try ws.readText()).int("status") == 422)
            try ws.send(text: #"{"offset":[0,300]}"#)
            let good = json(try ws.readText())
            #expect(good.int("seq") == 2, "the bad messages applied nothing")
            #expect(good.doubles("offset") == [0, 300])
            #expect(try client.state(session).int("seq") == 2)
        }
    }

    @Test func seqRetriesOverASocketAnswerTheLastPlanAgainAndGapsAnswer409() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let ws = try socket(service, session)
            try ws.send(text: #"{"offset":[0,500],"seq":1}"#)
            let first = try ws.readText()
            try ws.send(text: #"{"offset":[0,900],"seq":1}"#)
            #expect(try ws.readText() == first, "a retry answers the same plan, byte for byte")
            try ws.send(text: #"{"offset":[0,900],"seq":5}"#)
            let conflict = json(try ws.readText())
            #expect(conflict.int("status") == 409)
            #expect(conflict.int("seq") == 1)
            #expect(conflict.int("message") == 3)
            try ws.send(text: #"{"offset":[0,900],"seq":2}"#)
            #expect(json(try ws.readText()).int("seq") == 2)
        }
    }

    @Test func handshakeStatusesFollowThePrecedence401_404_405ThenTheHandshake() throws {
        try withService({ $0.authToken = "sesame" }) { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let path = "/v1/sessions/\(session)/socket"
            // 401 first: even for an unknown session, a wrong method or no upgrade.
            _ = try client.send("GET", "/v1/sessions/nope/socket", auth: false).problem(401)
            _ = try client.send("POST", path, json: "{}", auth: false).problem(401)
            #expect(try socket(service, session, auth: false).handshake.status == 401)
            // 404 before 405 and before the handshake.
            _ = try client.send("POST", "/v1/sessions/nope/socket", json: "{}").problem(404)
            #expect(try socket(service, "nope").handshake.status == 404)
            // 405 before the handshake.
            let post = try client.send("POST", path, json: "{}")
            _ = post.problem(405)
            #expect(post.header("Allow") == "GET")
            // Not an upgrade: 426 naming what is missing.
            let plain = try client.get(path)
            let p = plain.problem(426)
            #expect(plain.header("Upgrade") == "websocket")
            #expect((p["detail"] as? String ?? "").contains("Upgrade: websocket"))
            let noConnection = try client.send("GET", path, headers: [("Upgrade", "websocket")])
            #expect((noConnection.problem(426)["detail"] as? String ?? "").contains("Connection: Upgrade"))
            // Wrong version: 426 with the version we speak.
            let version = try socket(service, session, headers: [("Sec-WebSocket-Version", "8")])
            #expect(version.handshake.status == 426)
            #expect(version.handshake.header("Sec-WebSocket-Version") == "13")
            #expect(version.handshake.header("Content-Type") == "application/problem+json")
            // Bad key: 400.
            let key = try socket(service, session, headers: [("Sec-WebSocket-Key", "dG9vIHNob3J0")])
            #expect(key.handshake.status == 400)
            #expect(key.handshake.header("Content-Type") == "application/problem+json")
            // And a good one opens.
            #expect(try socket(service, session).handshake.status == 101)
        }
    }

    @Test func theBearerSubprotocolAuthenticatesAndViewportdV1IsConfirmed() throws {
        try withService({ $0.authToken = "sesame" }) { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let ws = try socket(service, session, protocols: ["viewportd.v1", "bearer.sesame"], auth: false)
            #expect(ws.handshake.status == 101)
            #expect(ws.handshake.header("Sec-WebSocket-Protocol") == "viewportd.v1", "never the bearer one")
            try ws.send(text: #"{"offset":[0,10]}"#)
            #expect(json(try ws.readText()).int("seq") == 1)
            // Only the bearer offered: authenticated, and no protocol confirmed.
            let bare = try socket(service, session, protocols: ["bearer.sesame"], auth: false)
            #expect(bare.handshake.status == 101)
            #expect(bare.handshake.header("Sec-WebSocket-Protocol") == nil)
            // A wrong token, or one near it, is 401.
            for wrong in ["bearer.sesam", "bearer.sesame2", "bearer.", "Bearer.sesame", "sesame"] {
                let refused = try socket(service, session, protocols: ["viewportd.v1", wrong], auth: false)
                #expect(refused.handshake.status == 401, "\(wrong)")
                #expect(refused.handshake.header("WWW-Authenticate") == "Bearer")
            }
            // The subprotocol is no token for other paths.
            #expect(try client.send("GET", "/v1/sessions/\(session)", headers: [("Sec-WebSocket-Protocol", "bearer.sesame")], auth: false).status == 401)
        }
    }

    @Test func viewportdV1IsConfirmedWithoutAuthToo() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            #expect(try socket(service, session, protocols: ["viewportd.v1"]).handshake.header("Sec-WebSocket-Protocol") == "viewportd.v1")
            #expect(try socket(service, session, protocols: ["chat"]).handshake.header("Sec-WebSocket-Protocol") == nil)
        }
    }

    @Test func aSessionDeletedWhileTheSocketIsOpenAnswers404ThenCloses1000() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let ws = try socket(service, session)
            try ws.send(text: #"{"offset":[0,10]}"#)
            #expect(json(try ws.readText()).int("seq") == 1)
            #expect(try client.delete("/v1/sessions/\(session)").status == 204)
            try ws.send(text: #"{"offset":[0,20]}"#)
            let gone = json(try ws.readText())
            #expect(gone.int("status") == 404)
            #expect(gone.int("message") == 2)
            let close = ws.waitForClose()
            #expect(close?.closeCode == 1000)
            #expect(close?.closeReason == "session ended")
        }
    }

    @Test func concurrentSocketAndPOSTUpdatesOnOneSessionAreAllApplied() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let port = service.port
            let failures = Atomic<Int>(0)
            let perWriter = 150
            let finished = onThreads(3) { index in
                do {
                    if index == 0 {
                        let ws = try WebSocketTestClient.connect(port: port, path: "/v1/sessions/\(session)/socket")
                        for i in 0..<perWriter {
                            try ws.send(text: #"{"offset":[0,\#(i * 7)]}"#)
                            if !(try ws.readText()).hasPrefix(#"{"seq":"#) { failures.add(1, ordering: .relaxed) }
                        }
                    } else {
                        let http = try HTTPTestClient.connect(port: port)
                        for i in 0..<perWriter {
                            let reply = try http.send(
                                method: "POST", path: "/v1/sessions/\(session)/viewport",
                                headers: [("Content-Type", "application/json")], body: Array(#"{"offset":[0,\#(i * 11)]}"#.utf8))
                            if reply.status != 200 { failures.add(1, ordering: .relaxed) }
                        }
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
            #expect(finished)
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(try client.state(session).int("seq") == 3 * perWriter, "no update lost")
        }
    }

    @Test func socketMessagesAreCountedInMetrics() throws {
        try withService { service in
            let client = try service.connect()
            let session = try client.openSession(Self.open).id
            let ws = try socket(service, session)
            for y in [10, 20, 30] {
                try ws.send(text: #"{"offset":[0,\#(y)]}"#)
                _ = try ws.readText()
            }
            try ws.send(text: "{")
            _ = try ws.readText()
            let metrics = try client.get("/metrics").text
            let route = #"route="/v1/sessions/{id}/socket""#
            let lines = metrics.split(separator: "\n").filter { $0.hasPrefix("viewportd_http_requests_total") && $0.contains(route) }
            #expect(lines.contains { $0.contains(#"method="GET""#) && $0.contains(#"status="101""#) && $0.hasSuffix(" 1") }, "\(lines)")
            #expect(lines.contains { $0.contains(#"method="MESSAGE""#) && $0.contains(#"status="200""#) && $0.hasSuffix(" 3") }, "\(lines)")
            #expect(lines.contains { $0.contains(#"method="MESSAGE""#) && $0.contains(#"status="400""#) && $0.hasSuffix(" 1") }, "\(lines)")
            // Plans are counted as for POSTs: the opening plan plus three updates.
            #expect(metrics.contains("viewportd_plans_total 4"))
        }
    }
}
