import Foundation
import Synchronization
import Testing
import ViewportHTTP
import ViewportTestSupport

@Suite struct BodyLimitTests {
    @Test func contentLengthOverTheLimitIsRefusedWith413AtOnce() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            // Only the head is sent: the 413 must come without waiting for the body.
            try client.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n".utf8))
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.bodyString == "too large (limit 100)")
            #expect(client.waitForClose(seconds: 2))
        }
    }

    @Test func contentLengthOverTheLimitWithExpectContinueGets413WithoutContinue() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n".utf8))
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test func streamRequestWithContentLengthOverTheLimitIsRefusedWith413() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("POST /sink HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n".utf8))
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test func chunkedBodyOverTheLimitIsRefusedWith413() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let chunks = (0..<10).map { _ in [UInt8](repeating: 66, count: 30) }
            let response = try client.send(
                method: "POST", path: "/echo", headers: [("Transfer-Encoding", "chunked")],
                body: HTTPTestClient.chunked(chunks))
            #expect(response.status == 413)
            #expect(response.closesConnection)
        }
    }

    @Test func chunkedBodyOverTheLimitGets413EvenIfTheClientStopsSending() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            // 150 bytes of a body that never ends: the answer must not wait for its end.
            try client.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n96\r\n".utf8)
                + [UInt8](repeating: 67, count: 150) + Array("\r\n".utf8))
            let response = try client.readResponse()
            #expect(response.status == 413)
        }
    }

    /// Bodies are buffered whole, so the server bounds what all of them hold at once: a body that
    /// would pass `maxBufferedBodyBytes` gets 503 at once (declared length) or as it grows
    /// (chunked), and the budget comes back when a body is done or its client goes away.
    @Test func bodiesPastTheSharedBudgetAnswer503UntilEarlierOnesEnd() throws {
        try withTestServer(handler: TestHandler(limit: 800), configure: { $0.maxBufferedBodyBytes = 1000 }) { server in
            // A holds 800 bytes of budget while its body trickles in.
            let a = try HTTPTestClient.connect(port: server.port)
            try a.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n".utf8) + [UInt8](repeating: 65, count: 100))
            #expect(eventually { server.bufferedBodyBytes == 800 })
            // B declares 400: 800 + 400 > 1000.
            let b = try HTTPTestClient.connect(port: server.port)
            let refused = try b.send(method: "POST", path: "/echo", body: [UInt8](repeating: 66, count: 400))
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.closesConnection)
            // C, chunked, gets 200 bytes in, then passes the budget mid-body.
            let c = try HTTPTestClient.connect(port: server.port)
            let chunks = (0..<4).map { _ in [UInt8](repeating: 67, count: 100) }
            let grown = try c.send(method: "POST", path: "/echo", headers: [("Transfer-Encoding", "chunked")], body: HTTPTestClient.chunked(chunks))
            #expect(grown.status == 503)
            // A finishes: its 800 bytes come back, so 400 fits again, twice in a row.
            try a.sendRaw([UInt8](repeating: 65, count: 700))
            let done = try a.readResponse()
            #expect(done.status == 200 && done.body.count == 800)
            for _ in 0..<2 {
                let d = try HTTPTestClient.connect(port: server.port)
                #expect(try d.send(method: "POST", path: "/echo", body: [UInt8](repeating: 68, count: 400)).status == 200)
            }
            // A client that vanishes mid-body gives its share back too.
            let e = try HTTPTestClient.connect(port: server.port)
            try e.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\n".utf8) + [UInt8](repeating: 69, count: 10))
            #expect(eventually { server.bufferedBodyBytes == 800 })
            e.close()
            #expect(eventually { server.bufferedBodyBytes == 0 })
            let f = try HTTPTestClient.connect(port: server.port)
            #expect(try f.send(method: "POST", path: "/echo", body: [UInt8](repeating: 70, count: 800)).status == 200)
        }
    }

    @Test func chunkedBodyWithinTheLimitIsCollected() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let chunks = [Array("hello ".utf8), Array("chunked ".utf8), Array("world".utf8)]
            let response = try client.send(
                method: "POST", path: "/echo", headers: [("Transfer-Encoding", "chunked")],
                body: HTTPTestClient.chunked(chunks))
            #expect(response.status == 200)
            #expect(response.bodyString == "hello chunked world")
            #expect(try client.send(method: "GET", path: "/hello").status == 200)
        }
    }

    @Test func slowlyTrickledBodyIsStillAnswered() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let body = Array("a body that arrives one small piece at a time".utf8)
            try client.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8))
            var index = 0
            while index < body.count {
                try client.sendRaw(Array(body[index..<min(index + 4, body.count)]))
                index += 4
                Thread.sleep(forTimeInterval: 0.02)
            }
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.body == body)
        }
    }

    @Test func streamingSinkReceivesAllBytesInOrder() throws {
        let handler = TestHandler(limit: 1 << 20)
        try withTestServer(handler: handler) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let lines = (0..<2000).map { #"{"offset":[0,\#($0)]}"# + "\n" }
            let body = Array(lines.joined().utf8)
            // Chunked, in uneven pieces, with a few pauses so it arrives over many calls.
            try client.sendRaw(Array("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            var index = 0
            var piece = 1
            while index < body.count {
                let end = min(index + piece * 97, body.count)
                try client.sendRaw(HTTPTestClient.chunked([Array(body[index..<end])]).dropLast(5))
                index = end
                piece = piece % 7 + 1
                if piece == 1 { Thread.sleep(forTimeInterval: 0.005) }
            }
            try client.sendRaw(Array("0\r\n\r\n".utf8))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("X-Truncated") == "no")
            #expect(response.body == body)
            let delivered = handler.sinkResults.withLock { $0 }
            #expect(delivered == [body])
        }
    }

    @Test func streamingSinkOverTheLimitIsTruncated() throws {
        try withTestServer(handler: TestHandler(limit: 100)) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let chunks = (0..<10).map { index in [UInt8](repeating: UInt8(65 + index), count: 30) }
            let response = try client.send(
                method: "POST", path: "/sink", headers: [("Transfer-Encoding", "chunked")],
                body: HTTPTestClient.chunked(chunks))
            #expect(response.status == 200)
            #expect(response.header("X-Truncated") == "yes")
            #expect(response.body == Array(chunks.joined().prefix(100)))
        }
    }
}

@Suite struct BodyEdgeCaseTests {
    @Test func expectContinueWithinTheLimitGets100ThenTheAnswer() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n".utf8))
            // The body goes once it was asked for.
            let interim = String(decoding: try client.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
            try client.sendRaw(Array("hello".utf8))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyString == "hello")
        }
    }

    @Test func hugeChunkedBodyOfARespondRequestIsCutOffWithTheResponse() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("POST /ignore HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            let piece = HTTPTestClient.chunked([[UInt8](repeating: 68, count: 64 * 1024)]).dropLast(5)
            var sent = 0
            while sent <= RequestLimits.discardLimit + 64 * 1024 {
                guard (try? client.sendRaw(Array(piece))) != nil else { break }
                sent += 64 * 1024
            }
            let response = try client.readResponse()
            #expect(response.status == 404)
            #expect(response.closesConnection)
        }
    }

    @Test func contentLengthOfARespondRequestOverTheDiscardLimitIsAnsweredAtOnce() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n".utf8))
            let response = try client.readResponse()
            #expect(response.status == 404)
            #expect(client.waitForClose(seconds: 2))
        }
    }
}

/// Mirrors the layer's internal discard limit (1 MiB) for the tests.
enum RequestLimits {
    static let discardLimit = 1 << 20
}
