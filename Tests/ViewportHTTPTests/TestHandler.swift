import Foundation
import Synchronization
import ViewportHTTP

/// Routes of the handler the HTTP tests run against.
final class TestHandler: HTTPHandler {
    let limit: Int
    let slowDelay: Double
    /// Bytes each `/sink` request delivered, in order (checked by the sink test).
    let sinkResults = Mutex<[[UInt8]]>([])

    /// WebSocket handlers told `closed()` so far.
    let socketsClosed = Atomic<Int>(0)

    /// When set, `/slow` answers once the test opens it (or after 60 s) instead of after
    /// `slowDelay`: a request that stays in flight exactly as long as the test needs.
    let gatedSlow: Bool
    private let slowGateOpen = Atomic<Bool>(false)

    init(limit: Int = 1024, slowDelay: Double = 0.8, gatedSlow: Bool = false) {
        self.limit = limit
        self.slowDelay = slowDelay
        self.gatedSlow = gatedSlow
    }

    /// Lets a gated `/slow` answer.
    func openSlowGate() { slowGateOpen.store(true, ordering: .sequentiallyConsistent) }

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
        case ("POST", "/live"):
            // `?N`: each line of the body answers `N` copies of itself (default 1).
            return .stream(maxBytes: limit, sink: LineEchoSink(copies: Int(head.query ?? "") ?? 1))
        case ("POST", "/sink"):
            let sink = RecordingSink { bytes in self.sinkResults.withLock { $0.append(bytes) } }
            return .stream(maxBytes: limit, sink: sink)
        case ("GET", "/stream"):
            let count = Int(head.query ?? "") ?? 10
            return .respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .stream(CountingStream(lines: count))))
        case ("GET", "/slow"):
            if gatedSlow {
                let deadline = Date().addingTimeInterval(60)
                while !slowGateOpen.load(ordering: .sequentiallyConsistent) && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            } else {
                Thread.sleep(forTimeInterval: slowDelay)
            }
            return .respond(HTTPResponse(status: 200, contentType: "text/plain", body: "slow done"))
        case (_, "/ws"):
            switch WebSocketHandshake.validate(head) {
            case .success(let handshake):
                let chosen = handshake.offeredProtocols.first { $0 == "echo.v1" }
                return .webSocket(WebSocketAcceptance(handshake: handshake, subprotocol: chosen, maxMessageBytes: limit, handler: EchoSocket(handler: self)))
            case .failure(let error):
                return .respond(HTTPResponse(status: error.status, contentType: "text/plain", body: error.message, headers: error.headers))
            }
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

/// A live sink: answers each complete line of the body with `copies` copies of it as it arrives;
/// a truncated body ends with the line `truncated`.
final class LineEchoSink: HTTPLiveBodySink {
    private let copies: Int
    private var partial: [UInt8] = []
    private var ready: [UInt8] = []

    init(copies: Int) {
        self.copies = copies
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        for byte in chunk {
            partial.append(byte)
            if byte == UInt8(ascii: "\n") {
                for _ in 0..<copies { ready += partial }
                partial.removeAll(keepingCapacity: true)
            }
        }
    }

    func finish(truncated: Bool) -> HTTPResponse {
        if truncated { ready += Array("truncated\n".utf8) }
        let rest = ready
        ready = []
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .bytes(rest))
    }

    var liveStatus: Int { 200 }
    var liveHeaders: [(name: String, value: String)] { [("Content-Type", "text/plain")] }
    var readyBytes: Int { ready.count }

    func takeReady() -> [UInt8] {
        defer { ready = [] }
        return ready
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

/// Echoes every WebSocket message; `close:<code>` closes with that code after echoing, `big:<n>`
/// answers n bytes of "x".
final class EchoSocket: WebSocketMessageHandler, @unchecked Sendable {
    // Confined to its connection's thread; `handler` is Sendable.
    private let handler: TestHandler
    private var isClosed = false

    init(handler: TestHandler) {
        self.handler = handler
    }

    func message(_ bytes: UnsafeRawBufferPointer) -> WebSocketReply {
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("big:"), let count = Int(text.dropFirst(4)) {
            return .text([UInt8](repeating: UInt8(ascii: "x"), count: count))
        }
        if text.hasPrefix("close:"), let code = UInt16(text.dropFirst(6)) {
            return WebSocketReply(text: Array(bytes), close: (code, "asked to"))
        }
        return .text(Array(bytes))
    }

    func closed() {
        precondition(!isClosed, "closed() called twice")
        isClosed = true
        handler.socketsClosed.add(1, ordering: .relaxed)
    }
}
