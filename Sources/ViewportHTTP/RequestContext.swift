/// Per-request state, created by the URI callback, stored in MHD's `*con_cls`, released in
/// the request-completed callback. Only the connection's MHD thread touches it.
final class RequestContext {
    /// What happens with the rest of the request.
    enum Phase {
        /// Head not complete yet (before the first access-handler call).
        case awaitingHead
        /// Send this response on the final call; a body, if any, is discarded meanwhile.
        case respond(HTTPResponse)
        /// Buffer the body into `buffer`.
        case collect(maxBytes: Int, onBody: ([UInt8]) -> HTTPResponse)
        /// Feed the body to the sink.
        case stream(maxBytes: Int, sink: any HTTPBodySink)
        /// A response is queued; ignore anything else.
        case done
        /// A response was written straight to the socket mid-body: drop the rest of the body
        /// (up to ``RequestDriver/discardLimit``), then close.
        case answeredMidBody
        /// Answer 101 and hand the connection to a WebSocket thread on the final call.
        case webSocket(WebSocketAcceptance)
        /// A live answer's drain thread holds the connection suspended; when it resumes it,
        /// close (the answer is complete, or the client is gone).
        case closeOnResume
    }

    let path: String
    let query: String?
    var head: HTTPRequestHead?
    var phase: Phase = .awaitingHead
    /// Body bytes buffered (`.collect`) — kept outside `phase` so appends do not copy.
    var buffer: [UInt8] = []
    /// Body bytes seen so far (delivered, buffered or discarded).
    var received = 0
    /// Bytes of the server's shared body budget this request holds (`.collect` only).
    var reservedBody = 0
    /// Whether the answer may start before the body ends (an HTTP/1.1 request to a live sink).
    var allowsLive = false
    /// When the head was complete (monotonic seconds), for starting a live answer.
    var startedAt = 0.0
    /// The answer being written straight to the socket while the body arrives, if any.
    var live: LiveAnswer?
    /// The accepted WebSocket between queueing the 101 and MHD's upgrade callback (which takes
    /// it). Still set when the request completes means the upgrade never happened: the
    /// completion callback then tells its handler `closed()`.
    var webSocket: WebSocketAcceptance?
    /// Whether ``ServerCore/inFlight`` counts this request.
    var admitted = false

    init(path: String, query: String?) {
        self.path = path
        self.query = query
    }
}
