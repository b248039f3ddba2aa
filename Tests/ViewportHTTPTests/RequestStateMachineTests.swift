import Synchronization
import Testing

@testable import ViewportHTTP

/// Every transition of a request's lifecycle, without sockets or libmicrohttpd: events go into
/// ``RequestStateMachine`` and the actions it returns (what the driver would do) are checked.
@Suite struct RequestStateMachineTests {
    // MARK: Fakes

    /// A handler whose `begin` answers what the test says, and which records its calls.
    final class FakeHandler: HTTPHandler, @unchecked Sendable {
        var action: () -> HTTPRequestAction
        var begun = 0

        init(_ action: @escaping () -> HTTPRequestAction) {
            self.action = action
        }

        func begin(_ head: HTTPRequestHead) -> HTTPRequestAction {
            begun += 1
            return action()
        }

        func payloadTooLarge(_ head: HTTPRequestHead, limit: Int) -> HTTPResponse {
            HTTPResponse(status: 413, contentType: "text/plain", body: "over \(limit)")
        }

        func unavailable(_ head: HTTPRequestHead) -> HTTPResponse {
            HTTPResponse(status: 503, contentType: "text/plain", body: "draining")
        }
    }

    /// A sink that keeps what it receives and counts `finish` calls.
    final class Sink: HTTPBodySink {
        var received: [UInt8] = []
        var finishes: [Bool] = []

        func consume(_ chunk: UnsafeRawBufferPointer) { received += chunk }

        func finish(truncated: Bool) -> HTTPResponse {
            finishes.append(truncated)
            return HTTPResponse(status: truncated ? 413 : 200, contentType: "text/plain", body: truncated ? "cut" : "got \(received.count)")
        }
    }

    /// A live sink whose ready answer is set by the test.
    final class LiveSink: HTTPLiveBodySink {
        var received: [UInt8] = []
        var finishes: [Bool] = []
        /// Pieces of answer ready, oldest first (`takeReady` hands out one).
        var ready: [[UInt8]] = []

        func consume(_ chunk: UnsafeRawBufferPointer) { received += chunk }

        /// When set, the answer's end is these chunks (a stream) instead of "last\n".
        var end: [[UInt8]]?

        func finish(truncated: Bool) -> HTTPResponse {
            finishes.append(truncated)
            if let end, !truncated {
                return HTTPResponse(status: 200, headers: [], body: .stream(Chunks(end)))
            }
            return HTTPResponse(status: 200, contentType: "text/plain", body: truncated ? "problem\n" : "last\n")
        }

        var liveStatus: Int { 200 }
        var liveHeaders: [(name: String, value: String)] { [("Content-Type", "application/x-ndjson")] }
        var readyBytes: Int { ready.reduce(0) { $0 + $1.count } }

        func takeReady() -> [UInt8] { ready.isEmpty ? [] : ready.removeFirst() }

        /// Set by the test: the body so far ends where a message ends.
        var due = false
        var answersAreDue: Bool { due }
    }

    final class Chunks: HTTPResponseStream, @unchecked Sendable {
        var chunks: [[UInt8]]
        init(_ chunks: [[UInt8]]) { self.chunks = chunks }
        func nextChunk() -> [UInt8]? { chunks.isEmpty ? nil : chunks.removeFirst() }
    }

    final class Socket: WebSocketMessageHandler, @unchecked Sendable {
        var closed_ = 0
        func message(_ bytes: UnsafeRawBufferPointer) -> WebSocketReply { .none }
        func closed() { closed_ += 1 }
    }

    // MARK: Helpers

    static func head(
        method: String = "POST", contentLength: Int? = nil, chunked: Bool = false, headers: [(name: String, value: String)] = []
    ) -> HTTPRequestHead {
        var fields = headers
        if let contentLength { fields.append(("Content-Length", String(contentLength))) }
        if chunked { fields.append(("Transfer-Encoding", "chunked")) }
        return HTTPRequestHead(method: method, path: "/x", headers: fields, contentLength: chunked ? nil : contentLength)
    }

    /// Holds a machine so that `#expect` can take its events (a macro cannot take `inout`).
    final class Harness {
        var machine: RequestStateMachine

        init(_ machine: RequestStateMachine) {
            self.machine = machine
        }

        var isAwaitingHead: Bool { machine.isAwaitingHead }

        func headReceived(_ head: HTTPRequestHead, admitted: Bool, isHTTP11: Bool, now: () -> Double) -> RequestStateMachine.Action {
            machine.headReceived(head, admitted: admitted, isHTTP11: isHTTP11, now: now)
        }

        func chunk(_ bytes: [UInt8], now: Double = 0) -> RequestStateMachine.Action {
            bytes.withUnsafeBytes { machine.bodyReceived($0, now: { now }) }
        }

        func chunk(count: Int, now: Double = 0) -> RequestStateMachine.Action {
            chunk([UInt8](repeating: UInt8(ascii: "a"), count: count), now: now)
        }

        func bodyEnded() -> RequestStateMachine.Action { machine.bodyEnded() }
        func liveSent(_ written: Int, broken: Bool) -> RequestStateMachine.Action { machine.liveSent(written, broken: broken) }
        func completed() -> Bool { machine.completed() }
        func upgradeFailed() { machine.upgradeFailed() }
        func takeWebSocket() -> WebSocketAcceptance? { machine.takeWebSocket() }
        var liveUnsent: String { machine.withLiveUnsent { String(decoding: $0, as: UTF8.self) } }
    }

    static func machine(_ handler: FakeHandler, budget: Int = .max) -> Harness {
        Harness(RequestStateMachine(handler: handler, budget: BodyBudget(limit: budget)))
    }

    static func machine(_ handler: FakeHandler, budget: BodyBudget) -> Harness {
        Harness(RequestStateMachine(handler: handler, budget: budget))
    }

    /// The response of a `.queue` action (a failed expectation otherwise).
    static func queued(_ action: RequestStateMachine.Action, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPResponse? {
        guard case .queue(let response) = action else {
            Issue.record("expected .queue, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return response
    }

    /// The bytes of a `.writeAndShutdown` action as text.
    static func written(_ action: RequestStateMachine.Action, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard case .writeAndShutdown(let bytes) = action else {
            Issue.record("expected .writeAndShutdown, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isProceed(_ action: RequestStateMachine.Action) -> Bool {
        if case .proceed = action { return true }
        return false
    }

    static func isClose(_ action: RequestStateMachine.Action) -> Bool {
        if case .close = action { return true }
        return false
    }

    static func isSendLive(_ action: RequestStateMachine.Action) -> Bool {
        if case .sendLive = action { return true }
        return false
    }

    static func bodyText(_ response: HTTPResponse?) -> String? {
        guard case .bytes(let bytes)? = response?.body else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }


    // MARK: respond

    @Test func aResponseWithoutBodyIsQueuedAtTheEndAndKeepsTheConnection() {
        let handler = FakeHandler { .respond(HTTPResponse(status: 200, contentType: "text/plain", body: "hi")) }
        let machine = Self.machine(handler)
        #expect(machine.isAwaitingHead)
        #expect(Self.isProceed(machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })))
        let response = Self.queued(machine.bodyEnded())
        #expect(response?.status == 200)
        #expect(response?.closesConnection == false)
        #expect(machine.completed())
        #expect(handler.begun == 1)
    }

    @Test func aRespondBodyIsReadAndDroppedUpToTheDiscardLimit() {
        let machine = Self.machine(FakeHandler { .respond(HTTPResponse(status: 404)) })
        _ = machine.headReceived(Self.head(contentLength: 1000), admitted: true, isHTTP11: true, now: { 0 })
        #expect(Self.isProceed(machine.chunk(count: 1000)))
        #expect(Self.queued(machine.bodyEnded())?.status == 404)
    }

    @Test func aRespondBodyDeclaredAboveTheDiscardLimitIsAnsweredBeforeItAndCloses() {
        let machine = Self.machine(FakeHandler { .respond(HTTPResponse(status: 404)) })
        let action = machine.headReceived(Self.head(contentLength: RequestStateMachine.discardLimit + 1), admitted: true, isHTTP11: true, now: { 0 })
        let response = Self.queued(action)
        #expect(response?.status == 404)
        #expect(response?.closesConnection == true)
        // Nothing more is queued: the final call closes.
        #expect(Self.isClose(machine.bodyEnded()))
    }

    @Test func aChunkedRespondBodyPastTheDiscardLimitIsAnsweredMidBodyThenDroppedThenCloses() {
        let machine = Self.machine(FakeHandler { .respond(HTTPResponse(status: 404, contentType: "text/plain", body: "no")) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        #expect(Self.isProceed(machine.chunk(count: RequestStateMachine.discardLimit)))
        let text = Self.written(machine.chunk(count: 1))
        #expect(text?.hasPrefix("HTTP/1.1 404 Not Found\r\n") == true)
        #expect(text?.contains("Content-Length: 2\r\nConnection: close\r\n\r\nno") == true)
        // The rest is dropped up to the discard limit, then the connection closes.
        #expect(Self.isProceed(machine.chunk(count: RequestStateMachine.discardLimit)))
        #expect(Self.isClose(machine.chunk(count: 1)))
        #expect(Self.isClose(machine.bodyEnded()))
    }

    // MARK: draining

    @Test func aRequestArrivingWhileDrainingGetsUnavailableAndIsNotCountedInFlight() {
        let handler = FakeHandler { .respond(HTTPResponse(status: 200)) }
        let machine = Self.machine(handler)
        #expect(Self.isProceed(machine.headReceived(Self.head(method: "GET"), admitted: false, isHTTP11: true, now: { 0 })))
        let response = Self.queued(machine.bodyEnded())
        #expect(response?.status == 503)
        #expect(response?.closesConnection == true)
        #expect(handler.begun == 0)
        #expect(!machine.completed())
    }

    // MARK: collect

    @Test func aCollectedBodyIsHandedWholeAndItsBudgetComesBack() {
        let seen = Mutex<[UInt8]>([])
        let budget = BodyBudget(limit: 100)
        let machine = Self.machine(FakeHandler {
            .collect(maxBytes: 50) { body in
                seen.withLock { $0 = body }
                return HTTPResponse(status: 201)
            }
        }, budget: budget)
        _ = machine.headReceived(Self.head(contentLength: 10), admitted: true, isHTTP11: true, now: { 0 })
        #expect(budget.inUse == 10)
        #expect(Self.isProceed(machine.chunk(Array("01234".utf8))))
        #expect(Self.isProceed(machine.chunk(Array("56789".utf8))))
        #expect(Self.queued(machine.bodyEnded())?.status == 201)
        #expect(seen.withLock { $0 } == Array("0123456789".utf8))
        #expect(budget.inUse == 0)
        #expect(machine.completed())
    }

    @Test func aCollectBodyDeclaredTooLargeGets413BeforeTheBodyAndCloses() {
        let budget = BodyBudget(limit: 100)
        let machine = Self.machine(FakeHandler { .collect(maxBytes: 8) { _ in HTTPResponse(status: 200) } }, budget: budget)
        let response = Self.queued(machine.headReceived(Self.head(contentLength: 9), admitted: true, isHTTP11: true, now: { 0 }))
        #expect(response?.status == 413)
        #expect(Self.bodyText(response) == "over 8")
        #expect(response?.closesConnection == true)
        #expect(budget.inUse == 0)
    }

    @Test func aChunkedCollectBodyGrowingPastTheLimitGets413MidBodyAndOnBodyIsNeverCalled() {
        let called = Atomic<Bool>(false)
        let budget = BodyBudget(limit: 100)
        let machine = Self.machine(FakeHandler {
            .collect(maxBytes: 8) { _ in
                called.store(true, ordering: .relaxed)
                return HTTPResponse(status: 200)
            }
        }, budget: budget)
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        #expect(Self.isProceed(machine.chunk(count: 5)))
        #expect(budget.inUse == 5)
        let text = Self.written(machine.chunk(count: 5))
        #expect(text?.hasPrefix("HTTP/1.1 413 ") == true)
        #expect(text?.hasSuffix("Connection: close\r\n\r\nover 8") == true)
        #expect(budget.inUse == 0)
        #expect(Self.isClose(machine.bodyEnded()))
        let wasCalled = called.load(ordering: .relaxed)
        #expect(!wasCalled)
    }

    @Test func aDeclaredBodyPastTheSharedBudgetIsRefusedBeforeIt() {
        let budget = BodyBudget(limit: 100)
        #expect(budget.reserve(95))
        let machine = Self.machine(FakeHandler { .collect(maxBytes: 1000) { _ in HTTPResponse(status: 200) } }, budget: budget)
        let response = Self.queued(machine.headReceived(Self.head(contentLength: 10), admitted: true, isHTTP11: true, now: { 0 }))
        #expect(response?.status == 503)
        #expect(response?.closesConnection == true)
        #expect(budget.inUse == 95)
    }

    @Test func aChunkedBodyPastTheSharedBudgetIsRefusedMidBody() {
        let budget = BodyBudget(limit: 100)
        #expect(budget.reserve(90))
        let machine = Self.machine(FakeHandler { .collect(maxBytes: 1000) { _ in HTTPResponse(status: 200) } }, budget: budget)
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        #expect(Self.isProceed(machine.chunk(count: 6)))
        #expect(budget.inUse == 96)
        #expect(Self.written(machine.chunk(count: 6))?.hasPrefix("HTTP/1.1 503 ") == true)
        #expect(budget.inUse == 90)
    }

    @Test func aCollectThatEndsWithTheConnectionGivesItsBudgetBack() {
        let budget = BodyBudget(limit: 100)
        let machine = Self.machine(FakeHandler { .collect(maxBytes: 1000) { _ in HTTPResponse(status: 200) } }, budget: budget)
        _ = machine.headReceived(Self.head(contentLength: 40), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.chunk(count: 10)
        #expect(budget.inUse == 40)
        #expect(machine.completed())
        #expect(budget.inUse == 0)
    }

    // MARK: stream

    @Test func aStreamedBodyReachesTheSinkInOrderAndItsAnswerIsQueued() {
        let sink = Sink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 100, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.chunk(Array("abc".utf8))
        _ = machine.chunk(Array("def".utf8))
        #expect(Self.bodyText(Self.queued(machine.bodyEnded())) == "got 6")
        #expect(sink.received == Array("abcdef".utf8))
        #expect(sink.finishes == [false])
        #expect(machine.completed())
        #expect(sink.finishes == [false])
    }

    @Test func aStreamDeclaredTooLargeFinishesTruncatedAndGets413BeforeTheBody() {
        let sink = Sink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 10, sink: sink) })
        let response = Self.queued(machine.headReceived(Self.head(contentLength: 11), admitted: true, isHTTP11: true, now: { 0 }))
        #expect(response?.status == 413)
        #expect(response?.closesConnection == true)
        #expect(sink.finishes == [true])
        _ = machine.completed()
        #expect(sink.finishes == [true])
    }

    @Test func aStreamGrowingPastItsLimitGetsExactlyTheLimitThenItsTruncatedAnswerMidBody() {
        let sink = Sink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 10, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.chunk(count: 7)
        let text = Self.written(machine.chunk(count: 7))
        #expect(sink.received.count == 10)
        #expect(sink.finishes == [true])
        #expect(text?.hasSuffix("Content-Length: 3\r\nConnection: close\r\n\r\ncut") == true)
        #expect(Self.isClose(machine.bodyEnded()))
        _ = machine.completed()
        #expect(sink.finishes == [true])
    }

    @Test func aStreamWhoseClientVanishesFinishesTruncatedOnCompletion() {
        let sink = Sink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 100, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.chunk(count: 3)
        #expect(machine.completed())
        #expect(sink.finishes == [true])
    }

    // MARK: live answers

    @Test func aLiveAnswerStartsAtTheThresholdAndSendsOnePieceAtATime() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 100 })
        // Less than the threshold, soon after the head: nothing yet.
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isProceed(machine.chunk(count: 1, now: 100.01)))
        // The threshold reached: the head and the first piece go out.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: LiveAnswer.thresholdBytes)
        sink.ready = [Array("a\n".utf8), big]
        #expect(Self.isSendLive(machine.chunk(count: 1, now: 100.02)))
        let first = machine.liveUnsent
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\na\n\r\n"))
        // The socket takes only part: the next piece waits in the sink.
        #expect(Self.isProceed(machine.liveSent(10, broken: false)))
        #expect(sink.ready.count == 1)
        #expect(machine.liveUnsent == String(first.dropFirst(10)))
        // Another chunk while the socket is still full: nothing more is taken.
        #expect(Self.isSendLive(machine.chunk(count: 1)) == false)
        // The socket takes the rest: the next piece follows at once.
        #expect(Self.isSendLive(machine.liveSent(first.utf8.count - 10, broken: false)))
        #expect(sink.ready.isEmpty)
        #expect(machine.liveUnsent.hasPrefix("10000\r\nxxx"))
        #expect(Self.isProceed(machine.liveSent(LiveAnswer.thresholdBytes + 9, broken: false)))
        #expect(machine.liveUnsent.isEmpty)
        // The end of the body: the sink's last words and the last chunk, all sent: shut down.
        #expect(Self.isSendLive(machine.bodyEnded()))
        #expect(machine.liveUnsent == "5\r\nlast\n\r\n0\r\n\r\n")
        guard case .shutdownAndClose = machine.liveSent(15, broken: false) else {
            Issue.record("expected shutdownAndClose")
            return
        }
        #expect(sink.finishes == [false])
        #expect(machine.completed())
        #expect(sink.finishes == [false])
    }

    @Test func aLiveAnswerStartsWithLessOnceTheBodyHasArrivedForAWhile() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 100 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isSendLive(machine.chunk(count: 1, now: 100 + LiveAnswer.afterSeconds + 0.001)))
    }

    @Test func aLiveAnswerStartsAtOnceWhenItsAnswersAreDueAndTheBodyMayGoOn() {
        // A client that sent a line and waits: at once, not after 50 ms and the next bytes.
        for (head, due, expected) in [
            (Self.head(chunked: true), true, true),  // chunked: more may come
            (Self.head(contentLength: 10), true, true),  // 1 byte of 10 so far
            (Self.head(contentLength: 1), true, false),  // the whole body: answered after it, keep-alive
            (Self.head(chunked: true), false, false),  // mid-line: the plans wait for the threshold or the time
        ] {
            let sink = LiveSink()
            let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
            _ = machine.headReceived(head, admitted: true, isHTTP11: true, now: { 100 })
            sink.ready = [Array("a\n".utf8)]
            sink.due = due
            #expect(Self.isSendLive(machine.chunk(count: 1, now: 100.001)) == expected, "\(head.headers), due \(due)")
        }
    }

    @Test func whatTheSocketDidNotTakeAtTheEndGoesToADrainThread() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isSendLive(machine.chunk(count: 1, now: 1)))
        let all = machine.liveUnsent.utf8.count
        _ = machine.liveSent(all, broken: false)
        #expect(Self.isSendLive(machine.bodyEnded()))
        // "5\r\n" went out, the rest did not.
        guard case .drainLive(let rest) = machine.liveSent(3, broken: false) else {
            Issue.record("expected drainLive")
            return
        }
        #expect(String(decoding: rest.joined(), as: UTF8.self) == "last\n\r\n0\r\n\r\n")
        // When the drain thread resumes the connection, the final call closes it.
        #expect(Self.isClose(machine.bodyEnded()))
        _ = machine.completed()
        #expect(sink.finishes == [false])
    }

    /// A long end (a client that reads only after sending) reaches the drain thread as the
    /// sink's own pieces: a short first chunk in the buffer, the rest not copied into it.
    @Test func aLongEndGoesToTheDrainThreadAsTheSinksOwnPieces() {
        let sink = LiveSink()
        let end: [[UInt8]] = (0..<3).map { [UInt8](repeating: UInt8(ascii: "a") + UInt8($0), count: 40_000) }
        sink.end = end
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isSendLive(machine.chunk(count: 1, now: 1)))
        _ = machine.liveSent(machine.liveUnsent.utf8.count, broken: false)
        #expect(Self.isSendLive(machine.bodyEnded()))
        // The non-blocking send covers only the first chunk (it fits the buffer's threshold).
        #expect(machine.liveUnsent.utf8.count == 40_000 + 8)
        guard case .drainLive(let rest) = machine.liveSent(6, broken: false) else {
            Issue.record("expected drainLive")
            return
        }
        let expected = end.map { "9c40\r\n" + String(decoding: $0, as: UTF8.self) + "\r\n" }.joined() + "0\r\n\r\n"
        // (Counts and a flag in the expectations: a failure then prints no 120 KB of body.)
        let sent = Array(rest.joined())
        let same = sent == Array(expected.utf8.dropFirst(6))
        #expect(same)
        // The buffer's rest, then size line, bytes and CRLF for each later chunk, then the end.
        #expect(rest.map(\.count) == [40_002, 6, 40_000, 2, 6, 40_000, 2, 5])
        #expect(Self.isClose(machine.bodyEnded()))
        _ = machine.completed()
        #expect(sink.finishes == [false])
    }

    @Test func aBrokenSocketClosesALiveAnswerAndTheSinkFinishesTruncated() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isSendLive(machine.chunk(count: 1, now: 1)))
        #expect(Self.isClose(machine.liveSent(0, broken: true)))
        _ = machine.completed()
        #expect(sink.finishes == [true])
    }

    @Test func aTruncationDuringALiveAnswerEndsItWithTheSinksLastWords() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 10, sink: sink) })
        _ = machine.headReceived(Self.head(chunked: true), admitted: true, isHTTP11: true, now: { 0 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isSendLive(machine.chunk(count: 4, now: 1)))
        _ = machine.liveSent(machine.liveUnsent.utf8.count, broken: false)
        let text = Self.written(machine.chunk(count: 10))
        #expect(text == "8\r\nproblem\n\r\n0\r\n\r\n")
        #expect(sink.received.count == 10)
        #expect(sink.finishes == [true])
        // The rest of the body is dropped, then the final call closes.
        #expect(Self.isProceed(machine.chunk(count: 100)))
        #expect(Self.isClose(machine.bodyEnded()))
    }

    @Test func anHTTP10ClientNeverGetsALiveAnswer() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(contentLength: 1 << 20), admitted: true, isHTTP11: false, now: { 0 })
        sink.ready = [[UInt8](repeating: 1, count: LiveAnswer.thresholdBytes * 2)]
        #expect(Self.isProceed(machine.chunk(count: 1, now: 100)))
        #expect(Self.bodyText(Self.queued(machine.bodyEnded())) == "last\n")
    }

    @Test func aSmallQuickLiveStreamIsAnsweredAfterTheBodyLikeAnyRequest() {
        let sink = LiveSink()
        let machine = Self.machine(FakeHandler { .stream(maxBytes: 1 << 30, sink: sink) })
        _ = machine.headReceived(Self.head(contentLength: 4), admitted: true, isHTTP11: true, now: { 0 })
        sink.ready = [Array("a\n".utf8)]
        #expect(Self.isProceed(machine.chunk(count: 4, now: 0.001)))
        let response = Self.queued(machine.bodyEnded())
        #expect(response?.closesConnection == false)
    }

    // MARK: WebSocket

    static func acceptance(_ socket: Socket) -> WebSocketAcceptance {
        WebSocketAcceptance(
            handshake: WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", offeredProtocols: []), maxMessageBytes: 100, handler: socket)
    }

    @Test func anAcceptedWebSocketIsUpgradedAtTheEndAndHandedOver() {
        let socket = Socket()
        let machine = Self.machine(FakeHandler { .webSocket(Self.acceptance(socket)) })
        #expect(Self.isProceed(machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })))
        guard case .queueUpgrade = machine.bodyEnded() else {
            Issue.record("expected queueUpgrade")
            return
        }
        #expect(machine.takeWebSocket() != nil)
        #expect(machine.takeWebSocket() == nil)
        #expect(machine.completed())
        #expect(socket.closed_ == 0)
    }

    @Test func aWebSocketThatIsNeverUpgradedIsToldClosedOnCompletion() {
        let socket = Socket()
        let machine = Self.machine(FakeHandler { .webSocket(Self.acceptance(socket)) })
        _ = machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.bodyEnded()
        #expect(machine.completed())
        #expect(socket.closed_ == 1)
    }

    @Test func aWebSocketWhose101WasRefusedIsToldClosedOnce() {
        let socket = Socket()
        let machine = Self.machine(FakeHandler { .webSocket(Self.acceptance(socket)) })
        _ = machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })
        _ = machine.bodyEnded()
        machine.upgradeFailed()
        _ = machine.completed()
        #expect(socket.closed_ == 1)
    }

    @Test func aWebSocketHandshakeWithABodyGets400AndItsHandlerClosed() {
        let socket = Socket()
        let machine = Self.machine(FakeHandler { .webSocket(Self.acceptance(socket)) })
        _ = machine.headReceived(Self.head(method: "GET", contentLength: 3), admitted: true, isHTTP11: true, now: { 0 })
        #expect(socket.closed_ == 1)
        _ = machine.chunk(count: 3)
        #expect(Self.queued(machine.bodyEnded())?.status == 400)
        _ = machine.completed()
        #expect(socket.closed_ == 1)
    }

    // MARK: odd orders

    @Test func aSecondHeadOrAnEndWithNothingToSayCloses() {
        let machine = Self.machine(FakeHandler { .respond(HTTPResponse(status: 200)) })
        _ = machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })
        #expect(Self.isClose(machine.headReceived(Self.head(method: "GET"), admitted: true, isHTTP11: true, now: { 0 })))
        _ = machine.bodyEnded()
        #expect(Self.isClose(machine.bodyEnded()))
    }
}
