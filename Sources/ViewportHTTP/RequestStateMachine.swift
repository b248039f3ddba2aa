/// The lifecycle of one request, from its complete head to its completion, as a state machine
/// without I/O (after hummingbird's `HTTP2ServerConnectionManager.StateMachine` and swift-nio's
/// `NIOTypedHTTPServerUpgraderStateMachine`): each event (head, body chunk, budget answer, sink
/// readiness, end of body, bytes sent, completion) updates the state and returns the ``Action``
/// that ``RequestDriver`` performs. The machine calls nothing: the handler's answers, the body
/// budget's and the sinks' come in as events, and the driver calls them when an action says so.
/// So every transition is tested by feeding events and reading actions (`RequestStateMachineTests`).
///
/// Each state holds its own data. A state whose data changes is taken out of ``state`` and
/// ``State/modifying`` is left behind while it changes, so its buffers are never shared and an
/// append never copies them (swift-nio's pattern).
///
/// ```
/// awaitingHead ─head─▶ respond ─────────────────────────────────────────end─▶ done (queue)
///      │               collect ─(reserve)─body…──────────────────────────end─▶ answering (answer onBody)
///      │               stream  ─body…─(live: poll, take, sendLive…)──────end─▶ done (finish) / endingLive
///      │               webSocket ────────────────────────────────────────end─▶ upgrading (queueUpgrade)
///      ├─ too large, busy, draining + huge body ─▶ done (refuse or queue before the body, then close)
///      └─ body past a limit or budget ─▶ answeredMidBody (written on the socket; rest dropped, close)
/// answering ─response─▶ done (queue)
///     └─ deferred work ─▶ deferred (suspended; the work runs on the pool) ─resumed─▶ done (queue its response)
///                              └─ pool full or stopping ─▶ done (refuse, close)
/// endingLive ─sink's last words─▶ finishingLive ─sent all─▶ done (shut down, close)
///                                      │ ─socket full─▶ closeOnResume (drain thread)
/// ```
///
/// Responses are queued on the final call (after the body), except:
/// - a `Content-Length` above the limit (413), or above ``discardLimit`` for `.respond`, is answered
///   on the first call, before any body is read, with `Connection: close`;
/// - a body that grows past its limit while arriving (chunked uploads) is answered at once,
///   mid-body, with `Connection: close`: libmicrohttpd 0.9.75 refuses to queue a response while a
///   body arrives, so the driver writes it to the socket itself.
struct RequestStateMachine {
    /// A `.respond` request's body is read and dropped up to this size (so keep-alive
    /// survives); larger bodies are not read: the answer goes out at once and the
    /// connection closes.
    static let discardLimit = 1 << 20

    enum State {
        /// Before the head is complete.
        case awaitingHead
        /// Send this response at the end of the body; a body is read and dropped meanwhile.
        case respond(Respond)
        /// Buffer the body within the body budget, then answer `onBody(body)`.
        case collect(Collect)
        /// The body is collected; `onBody` is being called (``answered(_:)`` says what it answered).
        case answering(HTTPRequestHead)
        /// A deferred answer's work runs on the pool while MHD holds the connection suspended;
        /// when the work resumes it, its response is queued (``deferredAnswered(_:)``).
        case deferred(HTTPRequestHead)
        /// Feed the body to the sink, whose answer may start before the body ends (live).
        case stream(Stream)
        /// Answer 101 and hand the connection to a WebSocket at the end (of an empty body).
        case webSocket(WebSocketAcceptance)
        /// The 101 is queued; MHD's upgrade callback takes the WebSocket (``takeWebSocket()``).
        case upgrading(WebSocketAcceptance)
        /// A live answer waits for the sink's last words (``liveAnswerEnded(withBody:)``);
        /// `truncated` when the body passed its limit (the answer then goes out mid-body).
        case endingLive(LiveAnswer, truncated: Bool)
        /// The body has ended; the rest of this live answer is being sent.
        case finishingLive(LiveAnswer)
        /// A response was written straight to the socket mid-body: drop the rest of the body (up
        /// to ``discardLimit``), then close.
        case answeredMidBody(Dropping)
        /// A drain thread writes the rest of a live answer while MHD holds the connection
        /// suspended; when it resumes it, close.
        case closeOnResume
        /// A response is queued or the request is over; nothing more happens until completion.
        /// `admitted`: whether the server counts the request in flight.
        case done(admitted: Bool)
        /// Left in ``state`` while a state's data changes (never seen by an event).
        case modifying
    }

    /// The data of ``State/respond(_:)``.
    struct Respond {
        let response: HTTPResponse
        /// Whether the server counts the request in flight (false while it drains).
        let admitted: Bool
        /// Body bytes read and dropped so far.
        var received = 0
    }

    /// The data of ``State/collect(_:)``.
    struct Collect {
        /// For the handler's refusals.
        let head: HTTPRequestHead
        let maxBytes: Int
        let onBody: ([UInt8]) -> HTTPAnswer
        var buffer: [UInt8] = []
        /// Body bytes seen so far.
        var received = 0
        /// Bytes of the server's shared body budget this request holds.
        var reserved = 0
    }

    /// The data of ``State/stream(_:)``.
    struct Stream {
        let maxBytes: Int
        /// The declared body length (a live answer starts early only while more may come).
        let contentLength: Int?
        let sink: any HTTPBodySink
        /// The sink, when its answer may start before the body ends (a live sink, HTTP/1.1).
        let liveSink: (any HTTPLiveBodySink)?
        /// When the head was complete (monotonic seconds), for starting a live answer.
        let startedAt: Double
        /// Body bytes delivered so far.
        var received = 0
        /// The answer being written straight to the socket while the body arrives, if any.
        var answer: LiveAnswer?
    }

    /// The data of ``State/answeredMidBody(_:)``.
    struct Dropping {
        let admitted: Bool
        /// Body bytes dropped since the answer.
        var received = 0
    }

    /// A response the handler makes on the layer's behalf: ``HTTPHandler/payloadTooLarge(_:limit:)``
    /// or ``HTTPHandler/busy(_:)``.
    struct Refusal {
        enum Reason: Equatable {
            case payloadTooLarge(limit: Int)
            case busy
            /// The pool that runs deferred answers is full, or the server stops.
            case deferredWorkRefused
        }

        let reason: Reason
        let head: HTTPRequestHead
    }

    /// What the driver does next. The actions that carry a sink, the handler's closure or a
    /// budget amount are the only calls out of the layer; the machine makes none itself.
    enum Action {
        /// Nothing now: the request goes on (`MHD_YES`).
        case proceed
        /// Queue this response with MHD. Before the body (the response then closes the connection)
        /// MHD sends it at once and reads no body; at the end of the body it keeps the connection.
        case queue(HTTPResponse)
        /// Before the body: queue the handler's refusal with `Connection: close`.
        indirect case refuse(Refusal)
        /// Before the body: the sink gets `finish(truncated: true)` (its answer is dropped), then
        /// the handler's refusal is queued with `Connection: close`.
        indirect case refuseStream(any HTTPBodySink, Refusal)
        /// Take `bytes` from the server's body budget, then report ``bodyReserved(_:appending:)``
        /// (with the chunk at hand, if any) or ``bodyBudgetSpent()``.
        case reserveBody(Int)
        /// Deliver the chunk at hand to the sink.
        case deliver(any HTTPBodySink)
        /// Deliver the chunk at hand to the live sink, then report its readiness
        /// (``liveSinkPolled(readyBytes:answersAreDue:now:)``).
        case deliverLive(any HTTPLiveBodySink)
        /// Report the live sink's readiness (``liveSinkPolled(readyBytes:answersAreDue:now:)``).
        case pollLive(any HTTPLiveBodySink)
        /// Start the live answer: report the sink's status, header fields and ready piece
        /// (``liveStarted(status:headers:first:)``).
        case startLive(any HTTPLiveBodySink)
        /// Take the sink's ready piece and report it (``readyTaken(_:)``).
        case takeReady(any HTTPLiveBodySink)
        /// Call `onBody` with the collected body, give `releasing` bytes back to the body budget,
        /// and report its answer (``answered(_:)``).
        case answer(onBody: ([UInt8]) -> HTTPAnswer, body: [UInt8], releasing: Int)
        /// Take a place on the deferred-work pool; if there is one, suspend the connection and
        /// run `work` there, which leaves its response and resumes the connection (the final call
        /// comes again: ``bodyEnded()``); if not, report ``deferralRefused()``.
        case runDeferred(@Sendable () -> HTTPResponse)
        /// The connection was resumed after its deferred work: report the response that work left
        /// (``deferredAnswered(_:)``).
        case takeDeferredResponse
        /// Queue the sink's `finish(truncated: false)`.
        case finishStream(any HTTPBodySink)
        /// Report the body of the sink's `finish(truncated: false)` (``liveAnswerEnded(withBody:)``).
        case finishLiveStream(any HTTPBodySink)
        /// Deliver the first `keeping` bytes of the chunk at hand, then write the sink's
        /// `finish(truncated: true)` mid-body (``writeClosing(_:)``).
        case truncateStream(any HTTPBodySink, keeping: Int)
        /// Deliver the first `keeping` bytes of the chunk at hand, then report the body of the
        /// sink's `finish(truncated: true)` (``liveAnswerEnded(withBody:)``).
        case truncateLiveStream(any HTTPBodySink, keeping: Int)
        /// Mid-body: write this response with `Content-Length` and `Connection: close` (a stream
        /// is read to its end) as in ``writeAndShutdown(_:)``.
        case writeClosing(HTTPResponse)
        /// Mid-body: give `releasing` bytes back to the body budget and write the handler's
        /// refusal as in ``writeClosing(_:)``.
        indirect case refuseMidBody(Refusal, releasing: Int)
        /// Tell the WebSocket's handler `closed()` (it will never open), then do `then`.
        indirect case closeWebSocket(WebSocketAcceptance, then: Action)
        /// Queue `101 Switching Protocols` for this WebSocket (its handler is told `closed()` after
        /// ``upgradeFailed()`` or ``completed()`` unless ``takeWebSocket()`` takes it first).
        case queueUpgrade(WebSocketAcceptance)
        /// Write these bytes (the end of a live answer) on the socket within a second, shut down
        /// its write side, and keep reading what the client still sends (`MHD_YES`); close when
        /// the write fails.
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

    /// What is left to do when the request is over (``completed()``).
    enum Cleanup {
        case none
        /// A sink that never saw its end: `finish(truncated: true)`, its answer dropped.
        case finishSink(any HTTPBodySink)
        /// A WebSocket whose 101 was queued but never upgraded: its handler is told `closed()`.
        case closeWebSocket(WebSocketAcceptance)
        /// A body collected in part: these bytes go back to the body budget.
        case releaseBody(Int)
    }

    private(set) var state = State.awaitingHead

    var isAwaitingHead: Bool {
        if case .awaitingHead = state { return true }
        return false
    }

    // MARK: Head

    /// The head is complete and the server took the request: `action` is the handler's
    /// `begin(head)`. `isHTTP11` allows a live answer; `now` is read only when one may start.
    mutating func headReceived(
        _ head: HTTPRequestHead, action: HTTPRequestAction, isHTTP11: Bool, now: () -> Double
    ) -> Action {
        guard case .awaitingHead = state else { return .close }
        switch action {
        case .respond(let response):
            return respond(response, head: head, admitted: true)
        case .collect(let maxBytes, let onBody):
            return collect(head, maxBytes: maxBytes) { .response(onBody($0)) }
        case .deferrable(let maxBytes, let onBody):
            return collect(head, maxBytes: maxBytes, onBody: onBody)
        case .stream(let maxBytes, let sink):
            if let length = head.contentLength, length > maxBytes {
                state = .done(admitted: true)
                return .refuseStream(sink, Refusal(reason: .payloadTooLarge(limit: maxBytes), head: head))
            }
            // A live answer is chunked: HTTP/1.1 only (an HTTP/1.0 client gets its answer after the body).
            let liveSink = isHTTP11 ? sink as? any HTTPLiveBodySink : nil
            state = .stream(Stream(
                maxBytes: maxBytes, contentLength: head.contentLength, sink: sink, liveSink: liveSink,
                startedAt: liveSink == nil ? 0 : now()))
            return .proceed
        case .webSocket(let acceptance):
            guard !head.hasBody else {
                let refusal = HTTPResponse(status: 400, contentType: "text/plain", body: "a WebSocket handshake carries no body")
                return .closeWebSocket(acceptance, then: respond(refusal, head: head, admitted: true))
            }
            state = .webSocket(acceptance)
            return .proceed
        }
    }

    /// A `.collect` or `.deferrable` request: 413 before a declared body too large, else collect.
    private mutating func collect(_ head: HTTPRequestHead, maxBytes: Int, onBody: @escaping ([UInt8]) -> HTTPAnswer) -> Action {
        if let length = head.contentLength, length > maxBytes {
            state = .done(admitted: true)
            return .refuse(Refusal(reason: .payloadTooLarge(limit: maxBytes), head: head))
        }
        state = .collect(Collect(head: head, maxBytes: maxBytes, onBody: onBody))
        if let length = head.contentLength, length > 0 { return .reserveBody(length) }
        return .proceed
    }

    /// The head is complete but the server drains and did not take the request: `unavailable`
    /// (the handler's answer) goes out with `Connection: close`.
    mutating func headReceivedWhileDraining(_ head: HTTPRequestHead, unavailable: HTTPResponse) -> Action {
        guard case .awaitingHead = state else { return .close }
        return respond(unavailable.closingConnection(), head: head, admitted: false)
    }

    // MARK: Body

    /// A body chunk arrived (the driver keeps it at hand for the action's delivery).
    mutating func bodyReceived(_ chunk: UnsafeRawBufferPointer) -> Action {
        switch state.take() {
        case .respond(var respond):
            respond.received += chunk.count
            if respond.received > Self.discardLimit {
                state = .answeredMidBody(Dropping(admitted: respond.admitted))
                return .writeClosing(respond.response)
            }
            state = .respond(respond)
            return .proceed
        case .collect(var collect):
            collect.received += chunk.count
            if collect.received > collect.maxBytes {
                state = .answeredMidBody(Dropping(admitted: true))
                let refusal = Refusal(reason: .payloadTooLarge(limit: collect.maxBytes), head: collect.head)
                return .refuseMidBody(refusal, releasing: collect.reserved)
            }
            // A chunked body takes its budget as it arrives: the chunk waits for the answer.
            let extra = collect.received - collect.reserved
            if extra <= 0 { collect.buffer.append(contentsOf: chunk) }
            state = .collect(collect)
            return extra > 0 ? .reserveBody(extra) : .proceed
        case .stream(var stream):
            let before = stream.received
            stream.received += chunk.count
            if stream.received > stream.maxBytes {
                let keeping = max(0, stream.maxBytes - before)
                if let answer = stream.answer {
                    state = .endingLive(answer, truncated: true)
                    return .truncateLiveStream(stream.sink, keeping: keeping)
                }
                state = .answeredMidBody(Dropping(admitted: true))
                return .truncateStream(stream.sink, keeping: keeping)
            }
            state = .stream(stream)
            if let liveSink = stream.liveSink { return .deliverLive(liveSink) }
            return .deliver(stream.sink)
        case .answeredMidBody(var dropping):
            dropping.received += chunk.count
            state = .answeredMidBody(dropping)
            return dropping.received > Self.discardLimit ? .close : .proceed
        case .modifying:
            preconditionFailure("RequestStateMachine: an event arrived while a state was being modified")
        case let other:
            // .awaitingHead, .done, .webSocket, .upgrading, .endingLive, .finishingLive, .closeOnResume
            state = other
            return .proceed
        }
    }

    /// After ``Action/reserveBody(_:)``: the budget gave `bytes`. At the head the buffer is made
    /// room for the declared body; mid-body `chunk` (the one that asked) is buffered.
    mutating func bodyReserved(_ bytes: Int, appending chunk: UnsafeRawBufferPointer) -> Action {
        let current = state.take()
        guard case .collect(var collect) = current else {
            state = current
            return .proceed
        }
        collect.reserved += bytes
        if collect.received == 0 {
            collect.buffer.reserveCapacity(collect.reserved)
        } else {
            collect.buffer.append(contentsOf: chunk)
        }
        state = .collect(collect)
        return .proceed
    }

    /// After ``Action/reserveBody(_:)``: the budget is spent. A declared body is refused before
    /// it (503), a chunked one mid-body.
    mutating func bodyBudgetSpent() -> Action {
        guard case .collect(let collect) = state else { return .close }
        let refusal = Refusal(reason: .busy, head: collect.head)
        if collect.received == 0 {
            state = .done(admitted: true)
            return .refuse(refusal)
        }
        state = .answeredMidBody(Dropping(admitted: true))
        return .refuseMidBody(refusal, releasing: collect.reserved)
    }

    // MARK: Live answers

    /// The live sink's readiness after a chunk or a sent piece: starts the live answer once there
    /// is enough to say (at least ``LiveAnswer/thresholdBytes``, or anything once the body has
    /// arrived for ``LiveAnswer/afterSeconds``, or anything when the sink's answers are due and
    /// the body may go on), and takes the next piece once the last one went out.
    mutating func liveSinkPolled(readyBytes: Int, answersAreDue: Bool, now: () -> Double) -> Action {
        guard case .stream(let stream) = state, let sink = stream.liveSink else { return .proceed }
        if let answer = stream.answer {
            // A piece at a time, and the next only once the socket has taken the last: what the
            // client does not read waits in the sink, where its bound is kept.
            return answer.isFlushed && readyBytes > 0 ? .takeReady(sink) : .proceed
        }
        let mayGoOn = stream.contentLength.map { stream.received < $0 } ?? true
        guard readyBytes >= LiveAnswer.thresholdBytes
            || (readyBytes > 0 && ((answersAreDue && mayGoOn) || now() - stream.startedAt >= LiveAnswer.afterSeconds))
        else { return .proceed }
        return .startLive(sink)
    }

    /// After ``Action/startLive(_:)``: the answer starts with this head and piece.
    mutating func liveStarted(status: Int, headers: [(name: String, value: String)], first piece: [UInt8]) -> Action {
        guard case .stream(var stream) = state else { return .close }
        state = .modifying
        var answer = LiveAnswer(status: status, headers: headers)
        answer.append(chunk: piece)
        stream.answer = answer
        state = .stream(stream)
        return .sendLive
    }

    /// After ``Action/takeReady(_:)``: the sink's next piece.
    mutating func readyTaken(_ piece: [UInt8]) -> Action {
        guard case .stream(var stream) = state else { return .close }
        state = .modifying
        stream.answer?.append(chunk: piece)
        state = .stream(stream)
        return .sendLive
    }

    /// The bytes of the live answer not sent yet (for ``Action/sendLive``).
    func withLiveUnsent<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch state {
        case .stream(let stream):
            if let answer = stream.answer { return try answer.withUnsent(body) }
        case .finishingLive(let answer):
            return try answer.withUnsent(body)
        default:
            break
        }
        return try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// After ``Action/sendLive``: `written` bytes went out; `broken` when the socket failed (not
    /// merely full).
    mutating func liveSent(_ written: Int, broken: Bool) -> Action {
        switch state {
        case .stream(var stream):
            guard stream.answer != nil else { return .close }
            state = .modifying
            if broken {
                // The sink finishes truncated on completion.
                stream.answer = nil
                state = .stream(stream)
                return .close
            }
            stream.answer?.advance(by: written)
            let flushed = stream.answer?.isFlushed ?? false
            state = .stream(stream)
            guard flushed, let sink = stream.liveSink else { return .proceed }
            return .pollLive(sink)
        case .finishingLive(var answer):
            state = .modifying
            guard !broken else {
                state = .done(admitted: true)
                return .close
            }
            answer.advance(by: written)
            if answer.isFlushed {
                state = .done(admitted: true)
                return .shutdownAndClose
            }
            state = .closeOnResume
            return .drainLive(answer.unwrittenPieces)
        case .modifying:
            preconditionFailure("RequestStateMachine: an event arrived while a state was being modified")
        default:
            return .close
        }
    }

    /// After ``Action/finishLiveStream(_:)`` or ``Action/truncateLiveStream(_:keeping:)``: the
    /// body of the sink's last answer (its chunks in order) ends the live answer.
    mutating func liveAnswerEnded(withBody chunks: [[UInt8]]) -> Action {
        guard case .endingLive(var answer, let truncated) = state else { return .close }
        state = .modifying
        for chunk in chunks { answer.appendToEnd(chunk: chunk) }
        answer.appendEnd()
        if truncated {
            // Written like any mid-body answer; the rest of the body is dropped.
            state = .answeredMidBody(Dropping(admitted: true))
            return .writeAndShutdown(answer.unwritten)
        }
        state = .finishingLive(answer)
        return .sendLive
    }

    // MARK: End

    /// The final call: the body (if any) is complete.
    mutating func bodyEnded() -> Action {
        let current = state.take()
        switch current {
        case .respond(let respond):
            state = .done(admitted: respond.admitted)
            return .queue(respond.response)
        case .collect(let collect):
            state = .answering(collect.head)
            return .answer(onBody: collect.onBody, body: collect.buffer, releasing: collect.reserved)
        case .deferred:
            // Resumed by the deferred work: its response is ready.
            state = .done(admitted: true)
            return .takeDeferredResponse
        case .stream(let stream):
            if let answer = stream.answer {
                state = .endingLive(answer, truncated: false)
                return .finishLiveStream(stream.sink)
            }
            state = .done(admitted: true)
            return .finishStream(stream.sink)
        case .webSocket(let acceptance):
            state = .upgrading(acceptance)
            return .queueUpgrade(acceptance)
        case .answeredMidBody(let dropping):
            // Nothing to queue: close rather than leave the client waiting for a response.
            state = .done(admitted: dropping.admitted)
            return .close
        case .finishingLive, .closeOnResume:
            state = .done(admitted: true)
            return .close
        case .modifying:
            preconditionFailure("RequestStateMachine: an event arrived while a state was being modified")
        case .awaitingHead, .done, .upgrading, .endingLive, .answering:
            state = current
            return .close
        }
    }

    // MARK: Answers after the body

    /// After ``Action/answer(onBody:body:releasing:)``: what `onBody` answered. A response is
    /// queued; deferred work goes to the pool (``Action/runDeferred(_:)``).
    mutating func answered(_ answer: HTTPAnswer) -> Action {
        guard case .answering(let head) = state else { return .close }
        switch answer {
        case .response(let response):
            state = .done(admitted: true)
            return .queue(response)
        case .deferred(let work):
            state = .deferred(head)
            return .runDeferred(work)
        }
    }

    /// After ``Action/runDeferred(_:)``: the pool took no more work (full, or the server stops);
    /// the handler's refusal goes out and the connection closes.
    mutating func deferralRefused() -> Action {
        guard case .deferred(let head) = state else { return .close }
        state = .done(admitted: true)
        return .refuse(Refusal(reason: .deferredWorkRefused, head: head))
    }

    /// After ``Action/takeDeferredResponse``: the response the deferred work left (nil: none,
    /// which does not happen; the connection closes).
    mutating func deferredAnswered(_ response: HTTPResponse?) -> Action {
        guard let response else { return .close }
        return .queue(response)
    }

    /// MHD did not take the 101 (or could not make it): the WebSocket that will never open, whose
    /// handler is to be told `closed()`.
    mutating func upgradeFailed() -> WebSocketAcceptance? {
        guard case .upgrading(let acceptance) = state else { return nil }
        state = .done(admitted: true)
        return acceptance
    }

    /// MHD upgraded the connection: the WebSocket that was accepted, to serve it.
    mutating func takeWebSocket() -> WebSocketAcceptance? {
        guard case .upgrading(let acceptance) = state else { return nil }
        state = .done(admitted: true)
        return acceptance
    }

    /// The request is over (answered, or the connection died): whether the server counted it in
    /// flight, and what is left to clean up.
    mutating func completed() -> (admitted: Bool, cleanup: Cleanup) {
        let result: (admitted: Bool, cleanup: Cleanup)
        switch state {
        case .awaitingHead:
            result = (false, .none)
        case .respond(let respond):
            result = (respond.admitted, .none)
        case .collect(let collect):
            // A request that ended mid-body (client gone) still holds its share of the body budget.
            result = (true, .releaseBody(collect.reserved))
        case .stream(let stream):
            result = (true, .finishSink(stream.sink))
        case .upgrading(let acceptance):
            // The 101 was queued but the connection ended before MHD upgraded it.
            result = (true, .closeWebSocket(acceptance))
        case .answeredMidBody(let dropping):
            result = (dropping.admitted, .none)
        case .done(let admitted):
            result = (admitted, .none)
        case .webSocket, .endingLive, .finishingLive, .closeOnResume, .answering, .deferred:
            result = (true, .none)
        case .modifying:
            preconditionFailure("RequestStateMachine: an event arrived while a state was being modified")
        }
        state = .done(admitted: false)
        return result
    }

    // MARK: Helpers

    private mutating func respond(_ response: HTTPResponse, head: HTTPRequestHead, admitted: Bool) -> Action {
        if let length = head.contentLength, length > Self.discardLimit {
            // Answered on the first call, before any body is read, and the connection closes
            // after. MHD 0.9.75 accepts a response queued then (state "headers processed"): it
            // sends it at once (no `100 Continue`), does not read the body, and closes.
            state = .done(admitted: admitted)
            return .queue(response.closingConnection())
        }
        state = .respond(Respond(response: response, admitted: admitted))
        return .proceed
    }
}

extension RequestStateMachine.State {
    /// The state, moved out (not copied: its payload's references are not retained again), with
    /// ``modifying`` left in its place until the caller stores the next state.
    mutating func take() -> Self {
        let current = consume self
        self = .modifying
        return current
    }
}
