import Foundation
import Synchronization
import ViewportHTTP

/// Routes of the handler the HTTP tests run against.
final class TestHandler: HTTPHandler {
    let limit: Int
    let slowDelay: Double
    /// Bytes each `/sink` request delivered, in order (checked by the sink test).
    let sinkResults = Mutex<[[UInt8]]>([])

    init(limit: Int = 1024, slowDelay: Double = 0.8) {
        self.limit = limit
        self.slowDelay = slowDelay
    }

    func begin(_ head: HTTPRequestHead) -> HTTPRequestAction {
        switch (head.method, head.path) {
        case ("GET", "/hello"):
            return .respond(HTTPResponse(status: 200, contentType: "application/json", body: #"{"ok":true}"#))
        case ("GET", "/head"):
            let text = "\(head.method) \(head.path) \(head.query ?? "-") \(head.header("x-test") ?? "-")"
            return .respond(HTTPResponse(status: 200, contentType: "text/plain", body: text))
        case ("POST", "/echo"):
            return .collect(maxBytes: limit) { body in
                HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: .bytes(body))
            }
        case ("POST", "/sink"):
            let sink = RecordingSink { bytes in self.sinkResults.withLock { $0.append(bytes) } }
            return .stream(maxBytes: limit, sink: sink)
        case ("GET", "/stream"):
            let count = Int(head.query ?? "") ?? 10
            return .respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .stream(CountingStream(lines: count))))
        case ("GET", "/slow"):
            Thread.sleep(forTimeInterval: slowDelay)
            return .respond(HTTPResponse(status: 200, contentType: "text/plain", body: "slow done"))
        case (_, "/ignore"):
            return .respond(HTTPResponse(status: 404, contentType: "text/plain", body: "nope"))
        default:
            return .respond(HTTPResponse(status: 404, contentType: "text/plain", body: "not found"))
        }
    }

    func payloadTooLarge(_ head: HTTPRequestHead, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, contentType: "text/plain", body: "too large (limit \(limit))")
    }

    func unavailable(_ head: HTTPRequestHead) -> HTTPResponse {
        HTTPResponse(status: 503, contentType: "text/plain", body: "shutting down")
    }
}

/// Keeps every byte it is given; answers them back with `X-Truncated`.
final class RecordingSink: HTTPBodySink {
    private var bytes: [UInt8] = []
    private let done: ([UInt8]) -> Void

    init(done: @escaping ([UInt8]) -> Void) {
        self.done = done
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: chunk)
    }

    func finish(truncated: Bool) -> HTTPResponse {
        done(bytes)
        return HTTPResponse(
            status: 200, headers: [("X-Truncated", truncated ? "yes" : "no"), ("X-Received", "\(bytes.count)")],
            body: .bytes(bytes))
    }
}

/// Streams `lines` numbered lines, one chunk each.
final class CountingStream: HTTPResponseStream {
    private let next = Mutex(0)
    private let lines: Int

    init(lines: Int) {
        self.lines = lines
    }

    func nextChunk() -> [UInt8]? {
        next.withLock { index in
            guard index < lines else { return nil }
            index += 1
            return Array("line \(index)\n".utf8)
        }
    }
}
