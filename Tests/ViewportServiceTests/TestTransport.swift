import Foundation
import Testing
import ViewportHTTP

extension Tag {
    /// Tests about the wire or the process (sockets, streaming answers, WebSockets, body limits,
    /// start and stop, several processes): they always go over real sockets.
    @Tag static var live: Self
}

/// How a test's ``Client`` reaches the service.
///
/// By default requests go to the server's handler in process, through ``HTTPHandler`` as the
/// HTTP layer calls it (the way hummingbird's router tests drive a router): the same routes,
/// decoders, stores and answers, without sockets. Tests tagged ``Tag/live`` go over loopback
/// sockets through libmicrohttpd; `VIEWPORTD_TEST_TRANSPORT=live` sends every test that way.
enum TestTransport {
    case inProcess
    case live

    /// The transport of the running test.
    static var current: TestTransport {
        if ProcessInfo.processInfo.environment["VIEWPORTD_TEST_TRANSPORT"] == "live" { return .live }
        return Test.current?.tags.contains(.live) == true ? .live : .inProcess
    }
}

/// One request through an ``HTTPHandler``, performed as the HTTP layer performs the action
/// `begin` returns: a declared body past the action's limit gets the handler's 413, a body is
/// collected or fed to the sink whole, a streamed answer is read to its end, and a `HEAD`
/// answer has no body. Framing headers (`Content-Length`, `Date`, `Connection`) are the wire's
/// and are not made up here.
struct HandlerRequest {
    let handler: any HTTPHandler

    func send(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]?) throws -> Reply {
        var fields = headers
        let names = Set(headers.map { $0.name.lowercased() })
        if !names.contains("host") { fields.insert(("Host", "localhost"), at: 0) }
        if let body, !names.contains("content-length"), !names.contains("transfer-encoding") {
            fields.append(("Content-Length", String(body.count)))
        }
        let contentLength = fields.last { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
        let question = target.firstIndex(of: "?")
        let head = HTTPRequestHead(
            method: method, path: String(target[..<(question ?? target.endIndex)]),
            query: question.map { String(target[target.index(after: $0)...]) },
            headers: fields, contentLength: contentLength)
        let bytes = body ?? []
        let response: HTTPResponse
        switch handler.begin(head) {
        case .respond(let answer):
            response = answer
        case .collect(let maxBytes, let onBody):
            response = bytes.count > maxBytes ? handler.payloadTooLarge(head, limit: maxBytes) : onBody(bytes)
        case .deferrable(let maxBytes, let onBody):
            // Deferred work runs on the calling thread here (the HTTP layer runs it on its pool).
            response = bytes.count > maxBytes ? handler.payloadTooLarge(head, limit: maxBytes) : onBody(bytes).responseRunningWorkHere()
        case .stream(let maxBytes, let sink):
            if bytes.count > maxBytes {
                _ = sink.finish(truncated: true)
                response = handler.payloadTooLarge(head, limit: maxBytes)
            } else {
                bytes.withUnsafeBytes { sink.consume($0) }
                response = sink.finish(truncated: false)
            }
        case .webSocket:
            throw HandlerRequestError.needsSocket("\(method) \(target) upgrades to a WebSocket")
        }
        return Reply(status: response.status, headers: response.headers, body: method == "HEAD" ? [] : Self.bytes(of: response.body))
    }

    private static func bytes(of body: HTTPResponseBody) -> [UInt8] {
        if let bytes = body.inMemoryBytes { return bytes }
        guard case .stream(let stream) = body else { return [] }
        var bytes: [UInt8] = []
        while let chunk = stream.nextChunk() { bytes += chunk }
        return bytes
    }
}

/// A request that only a socket can carry, sent in process: the test must be tagged ``Tag/live``.
enum HandlerRequestError: Error, CustomStringConvertible {
    case needsSocket(String)

    var description: String {
        switch self {
        case .needsSocket(let what): "\(what): tag the test .live to send it over a socket"
        }
    }
}
