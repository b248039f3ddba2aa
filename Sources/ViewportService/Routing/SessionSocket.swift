import ViewportHTTP

/// One WebSocket on `GET /v1/sessions/{id}/socket`: every message (text or binary) is one viewport
/// update, exactly the body of `POST /v1/sessions/{id}/viewport` with `application/json`, or
/// `{"patch": {…}}`, exactly the body of `PATCH /v1/sessions/{id}/layout`, and is answered by one
/// text message: the plan, byte for byte what that POST or PATCH would answer.
///
/// A message that fails is answered with its problem object (the HTTP problem+json body plus
/// `"message": n`, counting from 1) and nothing of it is applied; the socket stays open, except
/// when the session is gone (404): then it closes with 1000 "session ended" after the problem.
/// Updates go through ``SessionService/apply(_:sessionID:hint:into:)``, under the session's
/// lock, so a socket and concurrent POSTs on one session serialise and share one `seq`.
///
/// Thread confinement: the HTTP layer calls it only from the connection's own thread, one message
/// at a time, so `messages` needs no lock (hence `@unchecked Sendable`).
final class SessionSocket: WebSocketMessageHandler, @unchecked Sendable {
    /// The subprotocol confirmed when offered.
    static let subprotocol = "viewportd.v1"
    /// Prefix of the subprotocol carrying the bearer token.
    static let bearerPrefix = "bearer."
    /// The metrics' method label of one message.
    static let messageMethod = "MESSAGE"

    private let sessionID: String
    /// The session's handle here, kept between messages (it changes if the session moves).
    private var hint: SessionHandle?
    private let service: SessionMessages
    private let metrics: ServiceMetrics
    private let route: String
    private var messages = 0

    init(sessionID: String, hint: SessionHandle?, messages: SessionMessages, metrics: ServiceMetrics, route: String) {
        self.sessionID = sessionID
        self.hint = hint
        self.service = messages
        self.metrics = metrics
        self.route = route
    }

    func message(_ bytes: UnsafeRawBufferPointer) -> WebSocketReply {
        let started = Monotonic.nanoseconds()
        messages += 1
        // Most plans fit in 1 KiB: one allocation, no regrowth (as for the POST).
        var w = JSONWriter(capacity: 1024)
        do {
            // Found again, as each POST does: an expired session answers 404 at once.
            let message = try StreamMessage.decode(bytes)
            try service.apply(message, sessionID: sessionID, hint: &hint, into: &w)
            record(200, started: started)
            return .text(w.bytes)
        } catch {
            var problem = error.problem
            problem.message = messages
            w = JSONWriter(capacity: 256)
            problem.encode(into: &w)
            record(problem.status, started: started)
            if problem.status == 404 {
                return WebSocketReply(text: w.bytes, close: (WebSocketCloseCode.normal, "session ended"))
            }
            return .text(w.bytes)
        }
    }

    func closed() {}

    private func record(_ status: Int, started: Int64) {
        metrics.recordRequest(route: route, method: Self.messageMethod, status: status, nanoseconds: Monotonic.nanoseconds() - started)
    }
}
