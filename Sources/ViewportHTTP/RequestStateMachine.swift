/// The lifecycle of one request, from its complete head to its completion, as a state machine
/// without I/O (after hummingbird's `HTTP2ServerConnectionManager.StateMachine`): each event
/// (head, body chunk, end of body, bytes sent, completion) updates the state and returns the
/// ``Action`` that ``RequestDriver`` performs with libmicrohttpd and the socket. It calls the
/// application (the handler, body sinks, the body budget) but never MHD or a socket, so every
/// transition is tested without sockets (`RequestStateMachineTests`).
///
/// ```
/// awaitingHead ─head─▶ respond ─────────────────────────────────────end─▶ done (queue)
///      │               collect ─body…──────────────────────────────────end─▶ done (queue onBody)
///      │               stream  ─body…─(live sink: sendLive…)───────────end─▶ done (queue / finishingLive)
///      │               webSocket ──────────────────────────────────────end─▶ done (queueUpgrade)
///      ├─ too large, busy, draining + huge body ─▶ done (queue before the body, then close)
///      └─ body past a limit or budget ─▶ answeredMidBody (written on the socket; rest dropped, close)
/// finishingLive ─sent all─▶ done (shut down, close) │ ─socket full─▶ closeOnResume (drain thread)
/// ```
///
/// Responses are queued on the final call (after the body), except:
/// - a `Content-Length` above the limit (413), or above ``discardLimit`` for `.respond`, is answered
///   on the first call, before any body is read, with `Connection: close`;
/// - a body that grows past its limit while arriving (chunked uploads) is answered at once,
///   mid-body, with `Connection: close`: libmicrohttpd 0.9.75 refuses to queue a response while a
///   body arrives, so the driver writes it to the socket itself (``Action/writeAndShutdown(_:)``).
struct RequestStateMachine {
    /// A `.respond` request's body is read and dropped up to this size (so keep-alive
    /// survives); larger bodies are not read: the answer goes out at once and the
    /// connection closes.
    static let discardLimit = 1 << 20

    enum State {
        /// Before the head is complete.
        case awaitingHead
        /// Send this response at the end of the body; a body is read and dropped meanwhile.
        case respond(HTTPResponse)
        /// Buffer the body (in `buffer`), then answer `onBody(body)`.
        case collect(maxBytes: Int, onBody: ([UInt8]) -> HTTPResponse)
        /// Feed the body to the sink; `live` when its answer may start before the body ends.
        case stream(maxBytes: Int, sink: any HTTPBodySink, live: Bool)
        /// Answer 101 and hand the connection to a WebSocket at the end (of an empty body).
        case webSocket(WebSocketAcceptance)
        /// A response was written straight to the socket mid-body: drop the rest of the body (up
        /// to ``discardLimit``), then close.
        case answeredMidBody
        /// The body has ended; the rest of a live answer is being sent.
        case finishingLive
        /// A drain thread writes the rest of a live answer while MHD holds the connection
        /// suspended; when it resumes it, close.
        case closeOnResume
        /// A response is queued; nothing more happens until completion.
        case done
    }

    /// What the driver does next.
    enum Action {
        /// Nothing now: the request goes on (`MHD_YES`).
        case proceed
        /// Queue this response with MHD. Before the body (the response then closes the connection)
        /// MHD sends it at once and reads no body; at the end of the body it keeps the connection.
        case queue(HTTPResponse)
        /// Queue `101 Switching Protocols` for this WebSocket (its handler is told `closed()` by
        /// ``upgradeFailed()`` or ``completed()`` unless ``takeWebSocket()`` takes it first).
        case queueUpgrade(WebSocketAcceptance)
        /// Write these bytes (a whole response, or the end of a live answer) on the socket within
        /// a second, shut down its write side, and keep reading what the client still sends
        /// (`MHD_YES`); close when the write fails.
        case writeAndShutdown([UInt8])
        /// Send what the socket takes of the live answer (``withLiveUnsent(_:)``) without
        /// waiting, then report it with ``liveSent(_:broken:)``.
        case sendLive
        /// The live answer was sent whole: shut down the socket's write side and close.
        case shutdownAndClose
        /// Suspend the connection while a thread writes these pieces in order (the rest of a live
        /// answer), shuts the write side down and resumes it; the final call then closes.
        case drainLive([[UInt8]])
        /// Close the connection (`MHD_NO`).
        case close
    }

    let handler: any HTTPHandler
    let budget: BodyBudget
    private(set) var state = State.awaitingHead
    /// The head, once complete.
    private(set) var head: HTTPRequestHead?
    /// Body bytes buffered (`.collect`) — kept outside `state` so appends do not copy.
    private var buffer: [UInt8] = []
    /// Body bytes seen so far (delivered, buffered or discarded).
    private(set) var received = 0
    /// Bytes of the server's shared body budget this request holds (`.collect` only).
    private(set) var reservedBody = 0
    /// Whether the server counts this request in flight (``completed()`` says so once more).
    private(set) var admitted = false
    /// When the head was complete (monotonic seconds), for starting a live answer.
    private var startedAt = 0.0
    /// The answer being written straight to the socket while the body arrives, if any.
    private(set) var live: LiveAnswer?
    /// The accepted WebSocket between queueing the 101 and MHD's upgrade callback.
    private var pendingWebSocket: WebSocketAcceptance?

    init(handler: any HTTPHandler, budget: BodyBudget) {
        self.handler = handler
        self.budget = budget
    }

    var isAwaitingHead: Bool {
        if case .awaitingHead = state { return true }
        return false
    }

    // MARK: Events

    /// The head is complete. `admitted` is whether the server takes the request (false while it
    /// drains: the handler's `unavailable` answer goes out instead); `isHTTP11` allows a live
    /// answer; `now` is read only when one may start.
    mutating func headReceived(
        _ head: HTTPRequestHead, admitted: Bool, isHTTP11: Bool, now: () -> Double
    ) -> Action {
        guard case .awaitingHead = state else { return .close }
        self.head = head
        guard admitted else {
            return respond(handler.unavailable(head).closingConnection(), head: head)
        }
        self.admitted = true
        switch handler.begin(head) {
        case .respond(let response):
            return respond(response, head: head)
        case .collect(let maxBytes, let onBody):
            if let length = head.contentLength, length > maxBytes {
                return answerBeforeBody(handler.payloadTooLarge(head, limit: maxBytes))
            }
            if let length = head.contentLength, length > 0 {
                guard reserveBody(upTo: length) else { return answerBeforeBody(handler.busy(head)) }
                buffer.reserveCapacity(length)
            }
            state = .collect(maxBytes: maxBytes, onBody: onBody)
        case .stream(let maxBytes, let sink):
            if let length = head.contentLength, length > maxBytes {
                _ = sink.finish(truncated: true)
                return answerBeforeBody(handler.payloadTooLarge(head, limit: maxBytes))
            }
            // A live answer is chunked: HTTP/1.1 only (an HTTP/1.0 client gets its answer after the body).
            let live = isHTTP11 && sink is any HTTPLiveBodySink
            if live { startedAt = now() }
            state = .stream(maxBytes: maxBytes, sink: sink, live: live)
        case .webSocket(let acceptance):
            guard !head.hasBody else {
                acceptance.handler.closed()
                return respond(HTTPResponse(status: 400, contentType: "text/plain", body: "a WebSocket handshake carries no body"), head: head)
            }
            state = .webSocket(acceptance)
        }
        return .proceed
    }

    /// A body chunk arrived. `now` is read only while a live answer may start.
    mutating func bodyReceived(_ chunk: UnsafeRawBufferPointer, now: () -> Double) -> Action {
        let before = received
        received += chunk.count
        switch state {
        case .respond(let response):
            if received > Self.discardLimit { return answerMidBody(response) }
        case .collect(let maxBytes, _):
            if received > maxBytes {
                return answerMidBody(handler.payloadTooLarge(requestHead, limit: maxBytes))
            }
            guard reserveBody(upTo: received) else { return answerMidBody(handler.busy(requestHead)) }
            buffer.append(contentsOf: chunk)
        case .stream(let maxBytes, let sink, let isLive):
            if received > maxBytes {
                let allowed = maxBytes - before
                if allowed > 0 { sink.consume(UnsafeRawBufferPointer(rebasing: chunk[..<allowed])) }
                state = .done
                let last = sink.finish(truncated: true)
                return live == nil ? answerMidBody(last) : endLiveMidBody(last)
            }
            sink.consume(chunk)
            if isLive, let liveSink = sink as? any HTTPLiveBodySink { return advanceLive(liveSink, now: now) }
        case .answeredMidBody:
            if received > Self.discardLimit { return .close }
        case .awaitingHead, .done, .webSocket, .finishingLive, .closeOnResume:
            break
        }
        return .proceed
    }

    /// The final call: the body (if any) is complete.
    mutating func bodyEnded() -> Action {
        // Moved out (swap), not copied: a copy retained the payload and destroyed it twice.
        var current = State.done
        swap(&current, &state)
        switch consume current {
        case .respond(let response):
            return .queue(response)
        case .collect(_, let onBody):
            var body: [UInt8] = []
            swap(&body, &buffer)
            let response = onBody(body)
            releaseBody()
            return .queue(response)
        case .stream(_, let sink, _):
            let response = sink.finish(truncated: false)
            guard var answer = takeLive() else { return .queue(response) }
            Self.appendBody(of: response, to: &answer)
            answer.appendEnd()
            live = answer
            state = .finishingLive
            return .sendLive
        case .webSocket(let acceptance):
            pendingWebSocket = acceptance
            return .queueUpgrade(acceptance)
        case .closeOnResume, .answeredMidBody, .awaitingHead, .done, .finishingLive:
            // Nothing to queue: close rather than leave the client waiting for a response.
            return .close
        }
    }

    /// The bytes of the live answer not sent yet (for ``Action/sendLive``).
    func withLiveUnsent<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let live else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try live.withUnsent(body)
    }

    /// After ``Action/sendLive``: `written` bytes went out; `broken` when the socket failed (not
    /// merely full). Once everything went out, the sink's next ready piece follows.
    mutating func liveSent(_ written: Int, broken: Bool) -> Action {
        guard !broken, var answer = takeLive() else {
            if case .finishingLive = state { state = .done }
            return .close
        }
        answer.advance(by: written)
        switch state {
        case .finishingLive:
            if answer.isFlushed {
                state = .done
                return .shutdownAndClose
            }
            state = .closeOnResume
            return .drainLive(answer.unwrittenPieces)
        case .stream(_, let sink, _):
            // A piece at a time, and the next only once the socket has taken the last: what the
            // client does not read waits in the sink, where its bound is kept.
            guard answer.isFlushed, let liveSink = sink as? any HTTPLiveBodySink, liveSink.readyBytes > 0 else {
                live = answer
                return .proceed
            }
            answer.append(chunk: liveSink.takeReady())
            live = answer
            return .sendLive
        default:
            live = answer
            return .proceed
        }
    }

    /// MHD did not take the 101 (or could not make it): the WebSocket will never open.
    mutating func upgradeFailed() {
        if let acceptance = pendingWebSocket {
            pendingWebSocket = nil
            acceptance.handler.closed()
        }
    }

    /// MHD upgraded the connection: the WebSocket that was accepted, to serve it.
    mutating func takeWebSocket() -> WebSocketAcceptance? {
        defer { pendingWebSocket = nil }
        return pendingWebSocket
    }

    /// The request is over (answered, or the connection died): a sink that never saw its end gets
    /// `finish(truncated: true)`, a WebSocket that was never upgraded `closed()`, and the body
    /// budget goes back. Returns whether the request was counted in flight.
    mutating func completed() -> Bool {
        var current = State.done
        swap(&current, &state)
        if case .stream(_, let sink, _) = current {
            _ = sink.finish(truncated: true)
        }
        live = nil
        if let acceptance = pendingWebSocket {
            // The 101 was queued but the connection ended before MHD upgraded it.
            pendingWebSocket = nil
            acceptance.handler.closed()
        }
        // A request that ended mid-body (client gone) still holds its share of the body budget.
        releaseBody()
        buffer = []
        defer { admitted = false }
        return admitted
    }

    // MARK: Helpers

    /// The head (always set once the body arrives).
    private var requestHead: HTTPRequestHead { head ?? HTTPRequestHead(method: "", path: "") }

    private mutating func respond(_ response: HTTPResponse, head: HTTPRequestHead) -> Action {
        if let length = head.contentLength, length > Self.discardLimit {
            return answerBeforeBody(response)
        }
        state = .respond(response)
        return .proceed
    }

    /// Answers on the first call, before any body is read, and closes the connection after.
    /// MHD 0.9.75 accepts a response queued then (state "headers processed"): it sends it at once
    /// (no `100 Continue`), does not read the body, and closes the connection.
    private mutating func answerBeforeBody(_ response: HTTPResponse) -> Action {
        state = .done
        return .queue(response.closingConnection())
    }

    /// Answers while the body is still arriving: the whole response, serialized with
    /// `Content-Length` and `Connection: close` (a stream is drained first), goes straight to the
    /// socket; the rest of the body is read and dropped (so the close does not reset the
    /// connection while the client still sends) up to ``discardLimit`` more bytes, then the
    /// connection closes.
    private mutating func answerMidBody(_ response: HTTPResponse) -> Action {
        state = .answeredMidBody
        received = 0
        buffer = []
        releaseBody()
        return .writeAndShutdown(response.serializedClosing())
    }

    /// The body grew past its limit during a live answer: the sink's last lines (its 413 problem)
    /// end the answer, written like any mid-body answer; the rest of the body is dropped.
    private mutating func endLiveMidBody(_ response: HTTPResponse) -> Action {
        guard var answer = takeLive() else { return answerMidBody(response) }
        state = .answeredMidBody
        received = 0
        Self.appendBody(of: response, to: &answer)
        answer.appendEnd()
        return .writeAndShutdown(answer.unwritten)
    }

    /// After a body chunk: starts the live answer once there is enough to say (at least
    /// ``LiveAnswer/thresholdBytes``, or anything once the body has arrived for
    /// ``LiveAnswer/afterSeconds``, or anything when the sink's answers are due and the body may
    /// go on), then sends what is ready.
    private mutating func advanceLive(_ sink: any HTTPLiveBodySink, now: () -> Double) -> Action {
        if var answer = takeLive() {
            guard answer.isFlushed, sink.readyBytes > 0 else {
                live = answer
                return .proceed
            }
            answer.append(chunk: sink.takeReady())
            live = answer
            return .sendLive
        }
        let ready = sink.readyBytes
        let mayGoOn = requestHead.contentLength.map { received < $0 } ?? true
        guard ready >= LiveAnswer.thresholdBytes || (ready > 0 && ((sink.answersAreDue && mayGoOn) || now() - startedAt >= LiveAnswer.afterSeconds)) else {
            return .proceed
        }
        var answer = LiveAnswer(status: sink.liveStatus, headers: sink.liveHeaders)
        answer.append(chunk: sink.takeReady())
        live = answer
        return .sendLive
    }

    /// Grows this request's share of the server's body budget to `total` bytes (a declared
    /// `Content-Length` at once; a chunked body as it arrives); false when the budget is spent.
    private mutating func reserveBody(upTo total: Int) -> Bool {
        let extra = total - reservedBody
        guard extra > 0 else { return true }
        guard budget.reserve(extra) else { return false }
        reservedBody = total
        return true
    }

    /// Gives this request's share of the body budget back (its buffer is gone).
    private mutating func releaseBody() {
        budget.release(reservedBody)
        reservedBody = 0
    }

    /// The live answer, moved out (nil left behind), so that changing it copies no buffer: a
    /// copy made while `live` still held it was copied again on every append (CoW).
    private mutating func takeLive() -> LiveAnswer? {
        var answer: LiveAnswer?
        swap(&answer, &live)
        return answer
    }

    /// Appends a response's body to the end of a live answer as chunks (a stream is read to its
    /// end).
    private static func appendBody(of response: HTTPResponse, to live: inout LiveAnswer) {
        switch response.body {
        case .bytes(let bytes):
            live.appendToEnd(chunk: bytes)
        case .buffer(let buffer):
            live.appendToEnd(chunk: buffer.bytes)
        case .stream(let stream):
            while let chunk = stream.nextChunk() { live.appendToEnd(chunk: chunk) }
        }
    }
}
