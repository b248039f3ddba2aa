/// The application behind an ``HTTPServer``. Every method is called on an MHD worker thread;
/// many requests run at once on different threads, so implementations must be thread-safe.
/// A call blocks its worker and every connection that worker serves: keep calls short, and
/// never call ``HTTPServer/stop()`` from one.
public protocol HTTPHandler: Sendable {
    /// Called once per request, when its head is complete (first MHD access-handler call).
    func begin(_ head: HTTPRequestHead) -> HTTPRequestAction
    /// 413 response the layer sends when Content-Length > maxBytes (sent at once, before any body is read) or, for `.collect`, when the body grows past maxBytes.
    func payloadTooLarge(_ head: HTTPRequestHead, limit: Int) -> HTTPResponse
    /// Response for requests that arrive while the server is draining (503).
    func unavailable(_ head: HTTPRequestHead) -> HTTPResponse
    /// Response for a `.collect` request whose body would pass the server's shared body budget
    /// (``HTTPServerConfiguration/maxBufferedBodyBytes``): sent at once, connection closed.
    func busy(_ head: HTTPRequestHead) -> HTTPResponse
    /// Response for a request whose deferred work (``HTTPAnswer/deferred(_:)``) the server cannot
    /// take: its pool's queue is full, or the server stops (503).
    func deferredWorkRefused(_ head: HTTPRequestHead) -> HTTPResponse
}

extension HTTPHandler {
    /// A plain-text 503 with `Retry-After: 1`.
    public func busy(_ head: HTTPRequestHead) -> HTTPResponse {
        HTTPResponse(
            status: 503, contentType: "text/plain", body: "too many request bodies are being received at once; retry",
            headers: [("Retry-After", "1")])
    }

    /// A plain-text 503 with `Retry-After: 1`.
    public func deferredWorkRefused(_ head: HTTPRequestHead) -> HTTPResponse {
        HTTPResponse(
            status: 503, contentType: "text/plain", body: "too many requests are waiting for slow work; retry",
            headers: [("Retry-After", "1")])
    }
}
