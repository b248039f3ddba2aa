import Foundation
import Testing
import ViewportHTTP
import ViewportTestSupport

/// Answers of ``HTTPLiveBodySink``s: written by the layer while the body still arrives
/// (libmicrohttpd cannot), finished after it, then the connection closes.
@Suite struct LiveAnswerTests {
    static func head(path: String) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    }

    @Test func theAnswerStartsWhileTheBodyIsStillArriving() throws {
        try withTestServer(handler: TestHandler(limit: 1 << 20)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Self.head(path: "/live") + HTTPTestClient.chunk(Array("one\ntwo\n".utf8)))
            // Ten times the 50 ms after which a body's answer goes live: the server may read the
            // head and first chunk late on a loaded machine, and its clock starts then.
            Thread.sleep(forTimeInterval: 0.5)
            // A later chunk finds the body arriving for longer than 50 ms: the answer goes live.
            try client.sendRaw(HTTPTestClient.chunk(Array("three\n".utf8)))
            let head = String(decoding: try client.read(through: Array("\r\n\r\n".utf8), timeout: 3), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.contains("Transfer-Encoding: chunked\r\n"))
            #expect(head.contains("Connection: close\r\n"))
            #expect(head.contains("Content-Type: text/plain\r\n"))
            let early = String(decoding: try client.read(through: Array("three\n".utf8), timeout: 3), as: UTF8.self)
            #expect(early.hasSuffix("one\ntwo\nthree\n"))
            // The body is still open; its end brings the rest and the last chunk.
            try client.sendRaw(HTTPTestClient.chunk(Array("four\n".utf8)) + Array("0\r\n\r\n".utf8))
            let rest = String(decoding: try client.read(through: Array("0\r\n\r\n".utf8), timeout: 3), as: UTF8.self)
            #expect(rest.contains("four\n") && !rest.contains("three"))
            #expect(client.waitForClose(seconds: 3))
        }
    }

    @Test func aSmallQuickBodyIsAnsweredAfterItAndKeepsTheConnection() throws {
        try withTestServer(handler: TestHandler(limit: 1 << 20)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "POST", path: "/live", body: Array("a\nb\n".utf8))
            #expect(response.status == 200)
            #expect(response.bodyString == "a\nb\n")
            #expect(!response.closesConnection)
            #expect(try client.send(method: "GET", path: "/hello").status == 200)
        }
    }

    /// 32 MB of answer for 40 KB of body, from a client that reads nothing until it has sent all:
    /// the socket buffers fill, the rest waits, and a drain thread writes it once the body has ended.
    @Test func aClientThatReadsOnlyAfterSendingGetsTheWholeAnswer() throws {
        try withTestServer(handler: TestHandler(limit: 1 << 20)) { server in
            let client = try HTTPTestClient.connect(port: server.port, timeout: 20)
            let lines = (0..<4000).map { String(format: "line %05d\n", $0) }
            let body = Array(lines.joined().utf8)
            try client.sendRaw(HTTPTestClient.request(method: "POST", path: "/live?800", body: body))
            // Not reading for a while: the whole body is in before the answer could be written.
            Thread.sleep(forTimeInterval: 0.5)
            let response = try client.readResponse()
            let (status, chunked, closes, count) = (response.status, response.wasChunked, response.closesConnection, response.body.count)
            #expect(status == 200)
            #expect(chunked)
            #expect(closes)
            #expect(count == body.count * 800)
            let first = response.body.starts(with: Array(String(repeating: lines[0], count: 800).utf8))
            let last = response.body.suffix(lines[3999].utf8.count * 800).elementsEqual(Array(String(repeating: lines[3999], count: 800).utf8))
            #expect(first && last)
            // The server is fine afterwards.
            #expect(try HTTPTestClient.connect(port: server.port).send(method: "GET", path: "/hello").status == 200)
        }
    }

    @Test func anHTTP10ClientGetsItsAnswerAfterTheBodyUnchunked() throws {
        try withTestServer(handler: TestHandler(limit: 1 << 20)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let body = Array(String(repeating: "0123456789\n", count: 2000).utf8)
            try client.sendRaw(Array("POST /live?10 HTTP/1.0\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
            let response = try client.readResponse()
            // (Plain values in the expectations: a failure then prints no megabytes of body.)
            let (status, chunked, count) = (response.status, response.wasChunked, response.body.count)
            #expect(status == 200)
            #expect(!chunked)
            #expect(count == body.count * 10)
        }
    }

    @Test func aBodyPastItsLimitEndsALiveAnswerWithTheSinksLastWords() throws {
        try withTestServer(handler: TestHandler(limit: 100_000)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            // 70 KB answered in the first chunk: live at once.
            try client.sendRaw(Self.head(path: "/live?7") + HTTPTestClient.chunk(Array(String(repeating: "0123456789\n", count: 1000).utf8)))
            _ = try client.read(through: Array("\r\n\r\n".utf8), timeout: 3)
            try client.sendRaw(HTTPTestClient.chunk([UInt8](repeating: 65, count: 100_000)))
            let rest = String(decoding: try client.read(through: Array("0\r\n\r\n".utf8), timeout: 3), as: UTF8.self)
            #expect(rest.contains("truncated\n"))
            #expect(client.waitForClose(seconds: 3))
        }
    }

    @Test func stopDoesNotWaitLongForAClientThatNeverReadsItsAnswer() throws {
        let handler = TestHandler(limit: 1 << 20)
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 30, drainTimeout: 0.5)
        configuration.maxBufferedBodyBytes = 1 << 30
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        let client = try HTTPTestClient.connect(port: server.port, timeout: 20)
        try client.sendRaw(HTTPTestClient.request(
            method: "POST", path: "/live?500", headers: [("Content-Length", "40000")],
            body: Array((0..<4000).map { String(format: "line %04d\n", $0 % 10_000) }.joined().utf8)))
        // The answer is being produced (the request is in flight) before the stop.
        #expect(eventually { server.inFlightRequests == 1 })
        let started = Date()
        server.stop()
        #expect(Date().timeIntervalSince(started) < 5)
        client.close()
    }
}
