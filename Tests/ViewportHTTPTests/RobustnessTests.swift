import Foundation
import Testing
import ViewportHTTP
import ViewportTestSupport

@Suite struct RobustnessTests {
    /// Sends `bytes`, reads whatever comes back (a 4xx or a close), and checks the server
    /// still answers a fresh connection.
    private func survives(_ bytes: [UInt8], server: HTTPServer, closeEarly: Bool = false) throws {
        let client = try HTTPTestClient.connect(port: server.port, timeout: 1)
        try? client.sendRaw(bytes)
        if closeEarly {
            client.close()
        } else if let response = try? client.readResponse() {
            #expect((400..<600).contains(response.status))
        }
        client.close()
        let next = try HTTPTestClient.connect(port: server.port)
        #expect(try next.send(method: "GET", path: "/hello").status == 200)
    }

    @Test func garbageBytesDoNotCrashTheServer() throws {
        try withTestServer { server in
            var generator = SystemRandomNumberGenerator()
            let garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try survives(garbage + Array("\r\n\r\n".utf8), server: server)
            try survives(Array("\u{0}\u{1}\u{2} / HTTP/9.9\r\n\r\n".utf8), server: server)
            try survives(Array("GET /hello HTTP/1.1\r\nbad header line\r\n\r\n".utf8), server: server)
        }
    }

    /// MHD 0.9.75 (epoll) does not always notice at once that a client closed in the middle of
    /// a body; the connection timeout then ends the request, and it stops counting as in flight.
    @Test func truncatedRequestsDoNotCrashTheServerAndEndByTheConnectionTimeout() throws {
        try withTestServer(configure: { $0.connectionTimeout = 1 }) { server in
            try survives(Array("GET /hel".utf8), server: server, closeEarly: true)
            try survives(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nonly part".utf8), server: server, closeEarly: true)
            try survives(Array("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab".utf8), server: server, closeEarly: true)
            let deadline = Date().addingTimeInterval(4)
            while server.inFlightRequests > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(server.inFlightRequests == 0)
        }
    }

    @Test func malformedChunkedEncodingIsRejected() throws {
        try withTestServer { server in
            try survives(Array("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n".utf8), server: server)
        }
    }

    @Test func hugeHeadersAreRefusedByMHD() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let big = String(repeating: "x", count: 200_000)
            try? client.sendRaw(Array("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n".utf8))
            if let response = try? client.readResponse() {
                #expect(response.status == 431 || response.status == 400 || response.status == 414)
            }
            try survives([], server: server, closeEarly: true)
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
