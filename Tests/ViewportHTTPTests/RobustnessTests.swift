import Foundation
import Testing
import ViewportHTTP
import ViewportTestSupport

@Suite struct RobustnessTests {
    /// Sends `bytes` and requires the server to refuse them: an answer with one of `statuses`
    /// (client errors), or a close without an answer. A hang (neither within 3 s: the tests that
    /// send what MHD reads as an unfinished request set a 1 s connection timeout) fails, and so
    /// does any other status (a 5xx above all). Then a fresh connection must still be served.
    private func refuses(
        _ bytes: [UInt8], with statuses: Set<Int> = [400], server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let outcome = try HTTPTestClient.outcome(ofSending: bytes, port: server.port)
        if let status = outcome.status {
            #expect(statuses.contains(status), "answered \(status), expected one of \(statuses.sorted()) or a close", sourceLocation: sourceLocation)
        }
        try expectServing(server, sourceLocation: sourceLocation)
    }

    /// Sends part of a request and closes; then a fresh connection must still be served.
    private func survivesAClose(after bytes: [UInt8], server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let client = try HTTPTestClient.connect(port: server.port, timeout: 2)
        try client.sendRaw(bytes)
        client.close()
        try expectServing(server, sourceLocation: sourceLocation)
    }

    private func expectServing(_ server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let next = try HTTPTestClient.connect(port: server.port)
        #expect(try next.send(method: "GET", path: "/hello").status == 200, sourceLocation: sourceLocation)
    }

    /// Garbage is answered 400 or closed. MHD 0.9.75 reads a request line with a NUL byte as
    /// unfinished (it never answers it): the connection timeout (1 s here) closes it.
    @Test func garbageBytesAreRefusedAndDoNotHurtTheServer() throws {
        try withTestServer(configure: { $0.connectionTimeout = 1 }) { server in
            var generator = TestRandom(seed: 14)
            let garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try refuses(garbage + Array("\r\n\r\n".utf8), server: server)
            try refuses(Array("\u{0}\u{1}\u{2} / HTTP/9.9\r\n\r\n".utf8), server: server)
            try refuses(Array("GET /hello HTTP/1.1\r\nbad header line\r\n\r\n".utf8), server: server)
        }
    }

    /// MHD 0.9.75 (epoll) does not always notice at once that a client closed in the middle of
    /// a body; the connection timeout then ends the request, and it stops counting as in flight.
    @Test func truncatedRequestsDoNotCrashTheServerAndEndByTheConnectionTimeout() throws {
        try withTestServer(configure: { $0.connectionTimeout = 1 }) { server in
            try survivesAClose(after: Array("GET /hel".utf8), server: server)
            try survivesAClose(after: Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nonly part".utf8), server: server)
            try survivesAClose(after: Array("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab".utf8), server: server)
            let deadline = Date().addingTimeInterval(4)
            while server.inFlightRequests > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(server.inFlightRequests == 0)
        }
    }

    @Test func malformedChunkedEncodingIsRejected() throws {
        try withTestServer { server in
            try refuses(Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n".utf8), server: server)
        }
    }

    @Test func hugeHeadersAreRefusedByMHD() throws {
        try withTestServer { server in
            let big = String(repeating: "x", count: 200_000)
            try refuses(Array("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n".utf8), with: [431, 400, 414], server: server)
        }
    }

    @Test func idleConnectionsAreClosedAfterTheTimeout() throws {
        try withTestServer(configure: { $0.connectionTimeout = 1 }) { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(Array("GET /hello HTTP/1.1\r\n".utf8))
            #expect(client.waitForClose(seconds: 4))
        }
    }
}
