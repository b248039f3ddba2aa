import Logging
import ViewportHTTP

/// Drives API v1 requests through the real ``APIHandler`` without sockets: `begin`, then the
/// body, then the answer, exactly as the HTTP layer calls them. For `viewport-bench`, which
/// measures the service's per-request cost apart from libmicrohttpd and the kernel.
package final class InProcessClient {
    private let handler: APIHandler

    package init(configuration: ServiceConfiguration) {
        handler = APIHandler(configuration: configuration, metrics: ServiceMetrics(), logger: Logger(label: "viewport-bench"))
    }

    /// One request with a JSON body (or none); the response as the handler built it.
    package func send(_ method: String, _ path: String, json body: [UInt8]? = nil) -> HTTPResponse {
        let head = HTTPRequestHead(
            method: method, path: path,
            headers: body == nil ? [] : [("Content-Type", "application/json"), ("Content-Length", String(body?.count ?? 0))],
            contentLength: body?.count)
        switch handler.begin(head) {
        case .respond(let response):
            return response
        case .collect(_, let onBody):
            return onBody(body ?? [])
        case .deferrable(_, let onBody):
            return onBody(body ?? []).responseRunningWorkHere()
        case .stream(_, let sink):
            body?.withUnsafeBytes { sink.consume($0) }
            return sink.finish(truncated: false)
        case .webSocket:
            // There is no socket to upgrade in process.
            return HTTPResponse(status: 501, contentType: "text/plain", body: "InProcessClient cannot open a WebSocket")
        }
    }
}
