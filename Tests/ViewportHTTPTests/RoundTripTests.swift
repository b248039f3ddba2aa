import Foundation
import Synchronization
import Testing
@testable import ViewportHTTP
import ViewportTestSupport

@Suite struct RoundTripTests {
    @Test func getIsAnsweredWithTheHandlersResponse() throws {
        try withTestServer { server in
            #expect(server.port > 0)
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "GET", path: "/hello")
            #expect(response.status == 200)
            #expect(response.bodyString == #"{"ok":true}"#)
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("Content-Length") == "11")
        }
    }

    @Test func headCarriesPathQueryAndCaseInsensitiveHeaders() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "GET", path: "/head?a=1&b=%20", headers: [("X-TEST", "value")])
            #expect(response.bodyString == "GET /head a=1&b=%20 value")
        }
    }

    /// The head's fields are copied on the stack while they fit (`HeaderCollector.stackBytes`), by
    /// a second pass when they do not: both ways every field arrives whole and in order.
    @Test func headersLargerThanTheFirstPassBufferArriveWhole() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            for size in [HeaderCollector.stackBytes - 200, HeaderCollector.stackBytes, 3 * HeaderCollector.stackBytes] {
                let big = String(repeating: "b", count: size)
                // The big field before the one the handler reads: the stack buffer overflows first.
                let before = try client.send(method: "GET", path: "/head", headers: [("X-Big", big), ("X-Test", "after-\(size)")])
                #expect(before.bodyString == "GET /head - after-\(size)")
                let after = try client.send(method: "GET", path: "/head", headers: [("X-Test", String(repeating: "v", count: size))])
                #expect(after.bodyString == "GET /head - " + String(repeating: "v", count: size))
            }
        }
    }

    @Test func postBodyIsCollectedAndEchoed() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let body = Array((0..<1000).map { UInt8($0 % 251) })
            let response = try client.send(method: "POST", path: "/echo", body: body)
            #expect(response.status == 200)
            #expect(response.body == body)
        }
    }

    @Test func emptyPostBodyIsCollectedAsEmpty() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "POST", path: "/echo", body: [])
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
        }
    }

    @Test func keepAliveServesTwoRequestsOnOneConnection() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let first = try client.send(method: "GET", path: "/hello")
            let second = try client.send(method: "POST", path: "/echo", body: "again")
            let third = try client.send(method: "GET", path: "/missing")
            #expect(first.status == 200)
            #expect(second.bodyString == "again")
            #expect(third.status == 404)
            #expect(!first.closesConnection && !second.closesConnection)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            try client.sendRaw(
                HTTPTestClient.request(method: "POST", path: "/echo", body: Array("one".utf8))
                    + HTTPTestClient.request(method: "POST", path: "/echo", body: Array("two".utf8)))
            #expect(try client.readResponse().bodyString == "one")
            #expect(try client.readResponse().bodyString == "two")
        }
    }

    @Test func bodyOfARespondRequestIsDiscardedAndKeepAliveSurvives() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "POST", path: "/ignore", body: [UInt8](repeating: 65, count: 5000))
            #expect(response.status == 404)
            #expect(try client.send(method: "GET", path: "/hello").status == 200)
        }
    }

    @Test func streamedResponseIsSentChunkedAndReadInFull() throws {
        try withTestServer { server in
            let client = try HTTPTestClient.connect(port: server.port)
            let response = try client.send(method: "GET", path: "/stream?2000")
            #expect(response.status == 200)
            #expect(response.wasChunked)
            let expected = (1...2000).map { "line \($0)\n" }.joined()
            #expect(response.bodyString == expected)
            // The connection is still usable after a chunked response.
            #expect(try client.send(method: "GET", path: "/hello").status == 200)
        }
    }

    @Test func manyConcurrentConnectionsAreAllAnswered() throws {
        try withTestServer(configure: { $0.threads = 2 }) { server in
            let port = server.port
            let ok = Atomic<Int>(0)
            let finished = onThreads(32) { _ in
                guard let client = try? HTTPTestClient.connect(port: port) else { return }
                for _ in 0..<50 {
                    if let response = try? client.send(method: "GET", path: "/hello"), response.status == 200 {
                        ok.add(1, ordering: .relaxed)
                    }
                }
            }
            let answered = ok.load(ordering: .relaxed)
            #expect(finished)
            #expect(answered == 32 * 50)
        }
    }
}
