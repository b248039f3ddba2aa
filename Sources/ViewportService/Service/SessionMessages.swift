import ViewportJSON

/// What an NDJSON stream and a WebSocket hold of a ``SessionService``: its
/// ``SessionService/apply(_:sessionID:hint:into:)`` for stream messages, without the service's
/// repository type. Made where that type is known, so the call it wraps is specialized for it.
struct SessionMessages: Sendable {
    private let body: @Sendable (StreamMessage, String, inout SessionHandle?, inout JSONWriter) throws(Problem) -> Void
    private let holding: @Sendable (String, inout SessionHandle?) throws(Problem) -> Void

    init<Sessions>(_ service: SessionService<Sessions>) {
        body = { (message, id, hint, w) throws(Problem) in try service.apply(message, sessionID: id, hint: &hint, into: &w) }
        holding = { (id, hint) throws(Problem) in try service.hold(id, hint: &hint) }
    }

    /// Takes the session here before a stream starts; see ``SessionService/hold(_:hint:)``.
    func hold(_ sessionID: String, hint: inout SessionHandle?) throws(Problem) {
        try holding(sessionID, &hint)
    }

    /// Applies one update or edit to the session and writes its plan; see
    /// ``SessionService/apply(_:sessionID:hint:into:)``.
    func apply(_ message: StreamMessage, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        try body(message, sessionID, &hint, &w)
    }
}
