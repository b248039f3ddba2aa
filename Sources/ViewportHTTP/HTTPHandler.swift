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
}
