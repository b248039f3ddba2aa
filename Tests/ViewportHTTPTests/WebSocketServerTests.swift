import Foundation
import Synchronization
import Testing
import ViewportHTTP
import ViewportTestSupport

/// WebSocket over a real server and real sockets, against ``TestHandler``'s echo socket at `/ws`.
@Suite struct WebSocketServerTests {
    typealias Client = WebSocketTestClient

    static func waitUntil(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return true
    }

    @Test func handshakeAnswers101AndMessagesEchoBothWays() throws {
        let handler = TestHandler(limit: 200_000)
        try withTestServer(handler: handler) { server in
            let key = Client.newKey()
            let http = try HTTPTestClient.connect(port: server.port)
            try http.write(Client.handshakeRequest(path: "/ws", key: key, protocols: ["other", "echo.v1"]))
            let response = try http.readResponse(acceptSwitchingProtocols: true)
            #expect(response.status == 101)
            #expect(response.header("Upgrade")?.lowercased() == "websocket")
            #expect(response.header("Connection")?.lowercased().contains("upgrade") == true)
            #expect(response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key))
            #expect(response.header("Sec-WebSocket-Protocol") == "echo.v1")

            let client = try Client.connect(port: server.port, path: "/ws")
            #expect(client.isOpen)
            #expect(client.handshake.header("Sec-WebSocket-Protocol") == nil, "nothing chosen when nothing matching was offered")
            try client.send(text: "hello")
            #expect(try client.readMessage() == .init(fin: true, opcode: Client.text, payload: Array("hello".utf8)))
            try client.send(binary: [0, 1, 2, 255])
            #expect(try client.readMessage().payload == [0, 1, 2, 255])
            let long = String(repeating: "0123456789", count: 7_000)
            try client.send(text: long, fragmentSize: 999)
            #expect(try client.readText() == long)
            // Replies of every length form.
            for size in [125, 126, 65_535, 65_536] {
                try client.send(text: "big:\(size)")
                #expect(try client.readMessage().payload.count == size)
            }
            try client.sendClose(code: 1000, reason: "done")
            let close = try client.readFrame()
            #expect(close.opcode == Client.close)
            #expect(close.closeCode == 1000)
            #expect(client.http.waitForClose(seconds: 3), "the server closes TCP after the close handshake")
            #expect(Self.waitUntil { handler.socketsClosed.load(ordering: .relaxed) == 1 })
            // The HTTP side is unaffected.
            #expect(try HTTPTestClient.connect(port: server.port).send(method: "GET", path: "/hello").status == 200)
            // The closed socket leaves the count after its handler hears of it: waited for.
            #expect(Self.waitUntil { server.openWebSockets == 1 }, "the first connection is still open")
            http.close()
            #expect(Self.waitUntil(15) { server.openWebSockets == 0 && handler.socketsClosed.load(ordering: .relaxed) == 2 })
        }
    }

    @Test func framesSentInTheSameWriteAsTheHandshakeAreNotLost() throws {
        try withTestServer { server in
            let first = Client.frame(opcode: Client.text, payload: Array("first".utf8))
                + Client.frame(opcode: Client.ping, payload: Array("p".utf8))
                + Client.frame(opcode: Client.text, payload: Array("second".utf8))
            let client = try Client.connect(port: server.port, path: "/ws", firstBytes: first)
            #expect(client.isOpen)
            #expect(try client.readFrame().text == "first")
            let pong = try client.readFrame()
            #expect(pong.opcode == Client.pong && pong.text == "p")
            #expect(try client.readFrame().text == "second")
        }
    }

    @Test func pingIsAnsweredWithAPongCarryingTheSamePayload() throws {
        try withTestServer { server in
            let client = try Client.connect(port: server.port, path: "/ws")
            try client.send(raw: Client.frame(opcode: Client.ping, payload: Array("are you there".utf8)))
            let pong = try client.readFrame()
            #expect(pong.opcode == Client.pong)
            #expect(pong.text == "are you there")
            // Unsolicited pongs are ignored.
            try client.send(raw: Client.frame(opcode: Client.pong, payload: [1]))
            try client.send(text: "still here")
            #expect(try client.readFrame().text == "still here")
        }
    }

    @Test func anIdleSocketIsPingedAtHalfTheTimeoutAndClosedWith1001IfSilent() throws {
        try withTestServer(configure: { $0.connectionTimeout = 2 }) { server in
            // The server counts from the handshake: not before `connecting`, not after `opened`
            // (the lower bound is timed from the one, the upper from the other).
            let connecting = Date()
            let client = try Client.connect(port: server.port, path: "/ws")
            let opened = Date()
            let ping = try client.readFrame(timeout: 3)
            #expect(ping.opcode == Client.ping)
            let (sinceConnecting, sinceOpened) = (Date().timeIntervalSince(connecting), Date().timeIntervalSince(opened))
            #expect(sinceConnecting > 0.8 && sinceOpened < 1.8, "pinged \(sinceConnecting) s after connecting, \(sinceOpened) s after the handshake")
            // Answering keeps it open past the timeout.
            try client.send(raw: Client.frame(opcode: Client.pong, payload: ping.payload))
            let answered = Date()
            // Without the pong the server would close at one timeout after the handshake
            // (~2 s); it pings again half a timeout after the pong instead (also ~2 s).
            let second = try client.readFrame(timeout: 3)
            #expect(second.opcode == Client.ping)
            let pingedAgain = Date().timeIntervalSince(answered)
            #expect(pingedAgain > 0.8 && pingedAgain < 1.8, "pinged again \(pingedAgain) s after the pong")
            // Not answering closes it with 1001 one timeout after the last bytes (the pong), so
            // well past one timeout after the handshake.
            let close = try client.readFrame(timeout: 3)
            #expect(close.opcode == Client.close)
            #expect(close.closeCode == 1001)
            let closedAfter = Date().timeIntervalSince(answered)
            #expect(closedAfter > 1.8 && closedAfter < 2.8, "closed \(closedAfter) s after the pong")
            #expect(Date().timeIntervalSince(opened) > 2.5, "still open after connectionTimeout")
            #expect(Self.waitUntil { server.openWebSockets == 0 })
        }
    }

    @Test func stopClosesEveryOpenSocketWith1001Promptly() throws {
        let handler = TestHandler()
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 30, drainTimeout: 10), handler: handler)
        try server.start()
        let clients = try (0..<4).map { _ in try Client.connect(port: server.port, path: "/ws") }
        for client in clients {
            try client.send(text: "hi")
            #expect(try client.readText() == "hi")
        }
        #expect(server.openWebSockets == 4)
        let stopped = Atomic<Bool>(false)
        let started = Date()
        let stopper = Thread {
            server.stop()
            stopped.store(true, ordering: .relaxed)
        }
        stopper.start()
        for client in clients {
            let close = client.waitForClose(seconds: 3)
            #expect(close?.closeCode == 1001)
            #expect(close?.closeReason == "server shutting down")
            client.disconnect()
        }
        #expect(Self.waitUntil(5) { stopped.load(ordering: .relaxed) })
        #expect(Date().timeIntervalSince(started) < 2, "stop took \(Date().timeIntervalSince(started)) s")
        #expect(server.openWebSockets == 0)
        #expect(handler.socketsClosed.load(ordering: .relaxed) == 4)
        #expect(HTTPTestClient.isRefused(port: server.port))
    }

    @Test func stopDoesNotWaitForAClientThatNeverAnswersTheClose() throws {
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 30, drainTimeout: 10), handler: TestHandler())
        try server.start()
        let client = try Client.connect(port: server.port, path: "/ws")
        #expect(client.isOpen)
        let started = Date()
        server.stop()  // The client reads nothing and sends nothing.
        #expect(Date().timeIntervalSince(started) < 2.5, "stop took \(Date().timeIntervalSince(started)) s")
        #expect(client.waitForClose(seconds: 1, echo: false)?.closeCode == 1001)
    }

    @Test func manyConcurrentSocketsEachGetTheirOwnReplies() throws {
        let handler = TestHandler()
        try withTestServer(handler: handler) { server in
            let failures = Atomic<Int>(0)
            let port = server.port
            let finished = onThreads(40) { index in
                do {
                    let client = try Client.connect(port: port, path: "/ws")
                    for i in 0..<25 {
                        try client.send(text: "\(index)-\(i)")
                        if try client.readText() != "\(index)-\(i)" { failures.add(1, ordering: .relaxed) }
                    }
                    try client.sendClose()
                    if client.waitForClose()?.closeCode != 1000 { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
            #expect(finished)
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(Self.waitUntil(15) { server.openWebSockets == 0 && handler.socketsClosed.load(ordering: .relaxed) == 40 })
        }
    }

    @Test func protocolErrorsOverTheWireCloseWithTheirCode() throws {
        try withTestServer { server in
            let cases: [([UInt8], UInt16)] = [
                (Client.frame(opcode: Client.text, payload: Array("x".utf8), masked: false), 1002),
                (Client.frame(opcode: Client.text, payload: [0xFF]), 1007),
                // Header of a 1 MiB message (limit 1024): refused before any payload is sent.
                (Array(Client.frame(opcode: Client.binary, payload: [], declaredLength: 1 << 20).prefix(14)), 1009),
                (Client.frame(opcode: Client.close, payload: [1]), 1002),
                (Client.frame(opcode: 5, payload: []), 1002),
            ]
            for (bytes, code) in cases {
                let client = try Client.connect(port: server.port, path: "/ws")
                try client.send(raw: bytes)
                let close = client.waitForClose(seconds: 3)
                #expect(close?.closeCode == code)
                #expect(client.http.waitForClose(seconds: 3))
            }
            // A close code from the handler.
            let client = try Client.connect(port: server.port, path: "/ws")
            try client.send(text: "close:4000")
            #expect(try client.readText() == "close:4000")
            #expect(client.waitForClose()?.closeCode == 4000)
        }
    }

    @Test func garbageAfterTheHandshakeDoesNotHurtTheServer() throws {
        let handler = TestHandler()
        try withTestServer(handler: handler) { server in
            var generator = TestRandom(seed: 2024)
            for round in 0..<30 {
                let garbage = (0..<Int.random(in: 1...3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let client = try Client.connect(port: server.port, path: "/ws")
                try? client.send(raw: garbage)
                if round % 2 == 0 { _ = client.waitForClose(seconds: 2) }
                client.disconnect()
            }
            // The count of open sockets drops before the handler hears `closed()`: wait for both.
            #expect(Self.waitUntil(15) { server.openWebSockets == 0 && handler.socketsClosed.load(ordering: .relaxed) == 30 },
                "open \(server.openWebSockets), closed \(handler.socketsClosed.load(ordering: .relaxed)) of 30")
            #expect(try HTTPTestClient.connect(port: server.port).send(method: "GET", path: "/hello").status == 200)
        }
    }

    @Test func aClientVanishingMidFrameEndsItsThread() throws {
        let handler = TestHandler()
        try withTestServer(handler: handler) { server in
            let client = try Client.connect(port: server.port, path: "/ws")
            let frame = Client.frame(opcode: Client.text, payload: Array(String(repeating: "a", count: 500).utf8))
            try client.send(raw: Array(frame.prefix(100)))
            #expect(Self.waitUntil { server.openWebSockets == 1 })
            client.disconnect()
            #expect(Self.waitUntil { server.openWebSockets == 0 })
            #expect(handler.socketsClosed.load(ordering: .relaxed) == 1)
        }
    }

    /// MHD 0.9.75 calls the request-completed callback of an upgraded connection only when the
    /// application hands the socket back (MHD_UPGRADE_ACTION_CLOSE): the handshake stays in flight
    /// for the socket's whole life.
    @Test func anOpenSocketCountsAsInFlightUntilItCloses() throws {
        try withTestServer { server in
            let client = try Client.connect(port: server.port, path: "/ws")
            #expect(Self.waitUntil { server.openWebSockets == 1 })
            #expect(server.inFlightRequests == 1)
            try client.sendClose()
            _ = client.waitForClose()
            #expect(Self.waitUntil { server.inFlightRequests == 0 && server.openWebSockets == 0 })
        }
    }

    /// MHD keeps an upgraded connection in its books: open sockets use up `connectionLimit`.
    @Test func openSocketsCountAgainstTheConnectionLimit() throws {
        try withTestServer(configure: { $0.connectionLimit = 2; $0.threads = 1 }) { server in
            let first = try Client.connect(port: server.port, path: "/ws")
            let second = try Client.connect(port: server.port, path: "/ws")
            #expect(first.isOpen && second.isOpen)
            let third = try? HTTPTestClient.connect(port: server.port, timeout: 2).send(method: "GET", path: "/hello")
            #expect(third == nil, "a third connection is refused while two sockets are open")
            try first.sendClose()
            _ = first.waitForClose()
            first.disconnect()
            #expect(Self.waitUntil { server.openWebSockets == 1 })
            // MHD frees the slot once it has cleaned the closed connection up.
            #expect(Self.waitUntil {
                (try? HTTPTestClient.connect(port: server.port, timeout: 1).send(method: "GET", path: "/hello").status) == 200
            })
            try second.send(text: "still")
            #expect(try second.readText() == "still")
        }
    }

    @Test func badHandshakesGetHTTPErrors() throws {
        try withTestServer { server in
            let http = try HTTPTestClient.connect(port: server.port)
            let plain = try http.send(method: "GET", path: "/ws")
            #expect(plain.status == 426)
            #expect(plain.header("Upgrade") == "websocket")
            let version = try Client.connect(port: server.port, path: "/ws", headers: [("Sec-WebSocket-Version", "8")])
            #expect(version.handshake.status == 426)
            #expect(version.handshake.header("Sec-WebSocket-Version") == "13")
            let key = try Client.connect(port: server.port, path: "/ws", headers: [("Sec-WebSocket-Key", "short")])
            #expect(key.handshake.status == 400)
            let withBody = try Client.connect(port: server.port, path: "/ws", headers: [("Content-Length", "3")], firstBytes: Array("abc".utf8))
            #expect(withBody.handshake.status == 400)
            #expect(Self.waitUntil { server.inFlightRequests == 0 })
            #expect(server.openWebSockets == 0)
        }
    }

    /// Unparsed frames and half-assembled messages count against the server's shared budget for
    /// bytes being received, like bodies being read: past it a socket closes with 1013.
    @Test func halfSentMessagesShareTheServersReceiveBudget() throws {
        try withTestServer(handler: TestHandler(limit: 1024), configure: { $0.maxBufferedBodyBytes = 2000 }) { server in
            let part = [UInt8](repeating: UInt8(ascii: "a"), count: 900)
            let a = try Client.connect(port: server.port, path: "/ws")
            let b = try Client.connect(port: server.port, path: "/ws")
            try a.send(raw: Client.frame(opcode: Client.text, payload: part, fin: false))
            try b.send(raw: Client.frame(opcode: Client.text, payload: part, fin: false))
            // 900 + 900 are held (once both frames are read); 900 more would pass 2000.
            #expect(eventually { server.bufferedBodyBytes >= 1800 })
            let c = try Client.connect(port: server.port, path: "/ws")
            try c.send(raw: Client.frame(opcode: Client.text, payload: part, fin: false))
            let refused = try c.readFrame()
            #expect(refused.opcode == Client.close)
            #expect(refused.closeCode == WebSocketCloseCode.tryAgainLater)
            // A's message completes: its share comes back, and another socket fits again.
            try a.send(raw: Client.frame(opcode: 0, payload: Array("!".utf8), fin: true))
            #expect(try a.readMessage().payload.count == 901)
            let d = try Client.connect(port: server.port, path: "/ws")
            try d.send(raw: Client.frame(opcode: Client.text, payload: part, fin: false))
            try d.send(raw: Client.frame(opcode: 0, payload: Array("?".utf8), fin: true))
            #expect(try d.readMessage().payload.count == 901)
        }
    }
}
