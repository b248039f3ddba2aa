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
            // readResponse skips the interim 100; send the body once it was asked for.
            Thread.sleep(forTimeInterval: 0.05)
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
