import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Drives one request through its access-handler calls: builds the head, feeds each event to the
/// request's ``RequestStateMachine``, and performs the action it returns: it calls the handler,
/// the body sinks and the body budget, and works libmicrohttpd and the connection's socket (the
/// machine itself calls nothing).
struct RequestDriver {
    let core: ServerCore
    let connection: OpaquePointer
    let context: RequestContext

    /// No chunk at hand (the actions of events other than a body chunk).
    private static var noChunk: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// First call: the head is complete.
    func begin(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> MHD_Result {
        let (fields, contentLength) = HeaderCollector.collect(connection)
        let head = HTTPRequestHead(
            method: method.map(Self.method) ?? "GET", path: context.path, query: context.query,
            fields: fields, contentLength: contentLength)
        guard core.admit() else {
            return perform(context.machine.headReceivedWhileDraining(head, unavailable: core.handler.unavailable(head)))
        }
        let isHTTP11 = version.map { strcmp($0, "HTTP/1.1") == 0 } ?? false
        let action = context.machine.headReceived(
            head, action: core.handler.begin(head), isHTTP11: isHTTP11, now: SocketWriter.monotonicSeconds)
        return perform(action)
    }

    /// The method as a string: the common ones as literals (no UTF-8 validation, no copy).
    static func method(_ text: UnsafePointer<CChar>) -> String {
        switch (text[0], text[1]) {
        case (0x50, 0x4F) where strcmp(text, "POST") == 0: return "POST"
        case (0x47, 0x45) where strcmp(text, "GET") == 0: return "GET"
        case (0x50, 0x55) where strcmp(text, "PUT") == 0: return "PUT"
        case (0x44, 0x45) where strcmp(text, "DELETE") == 0: return "DELETE"
        case (0x50, 0x41) where strcmp(text, "PATCH") == 0: return "PATCH"
        default: return String(cString: text)
        }
    }

    /// A body chunk arrived (`*upload_data_size` is already set to 0).
    func body(_ chunk: UnsafeRawBufferPointer) -> MHD_Result {
        perform(context.machine.bodyReceived(chunk), chunk: chunk)
    }

    /// Final call: the body (if any) is complete.
    func end() -> MHD_Result {
        perform(context.machine.bodyEnded())
    }

    /// The request is over: does what is left (``RequestStateMachine/completed()``) and says
    /// whether the server counted the request in flight.
    static func complete(_ context: RequestContext, core: ServerCore) -> Bool {
        let (admitted, cleanup) = context.machine.completed()
        switch cleanup {
        case .none:
            break
        case .finishSink(let sink):
            _ = sink.finish(truncated: true)
        case .closeWebSocket(let acceptance):
            acceptance.handler.closed()
        case .releaseBody(let bytes):
            core.releaseBody(bytes)
        }
        return admitted
    }

    /// Does what the machine says; `chunk` is the body chunk at hand, if any.
    private func perform(_ action: RequestStateMachine.Action, chunk: UnsafeRawBufferPointer = noChunk) -> MHD_Result {
        switch action {
        case .proceed:
            return .YES
        case .queue(let response):
            return queue(response)
        case .refuse(let refusal):
            return queue(refusalResponse(refusal).closingConnection())
        case .refuseStream(let sink, let refusal):
            _ = sink.finish(truncated: true)
            return queue(refusalResponse(refusal).closingConnection())
        case .reserveBody(let bytes):
            guard core.reserveBody(bytes) else { return perform(context.machine.bodyBudgetSpent()) }
            return perform(context.machine.bodyReserved(bytes, appending: chunk))
        case .deliver(let sink):
            sink.consume(chunk)
            return .YES
        case .deliverLive(let sink):
            sink.consume(chunk)
            return perform(poll(sink))
        case .pollLive(let sink):
            return perform(poll(sink))
        case .startLive(let sink):
            return perform(context.machine.liveStarted(status: sink.liveStatus, headers: sink.liveHeaders, first: sink.takeReady()))
        case .takeReady(let sink):
            return perform(context.machine.readyTaken(sink.takeReady()))
        case .answer(let onBody, let body, let releasing):
            let answer = onBody(body)
            core.releaseBody(releasing)
            return perform(context.machine.answered(answer))
        case .runDeferred(let work):
            return runDeferred(work)
        case .takeDeferredResponse:
            let response = context.deferredResponse?.take()
            context.deferredResponse = nil
            return perform(context.machine.deferredAnswered(response))
        case .finishStream(let sink):
            return queue(sink.finish(truncated: false))
        case .finishLiveStream(let sink):
            return perform(context.machine.liveAnswerEnded(withBody: sink.finish(truncated: false).body.drainedChunks()))
        case .truncateStream(let sink, let keeping):
            if keeping > 0 { sink.consume(UnsafeRawBufferPointer(rebasing: chunk[..<keeping])) }
            return writeAndShutdown(sink.finish(truncated: true).serializedClosing())
        case .truncateLiveStream(let sink, let keeping):
            if keeping > 0 { sink.consume(UnsafeRawBufferPointer(rebasing: chunk[..<keeping])) }
            return perform(context.machine.liveAnswerEnded(withBody: sink.finish(truncated: true).body.drainedChunks()))
        case .writeClosing(let response):
            return writeAndShutdown(response.serializedClosing())
        case .refuseMidBody(let refusal, let releasing):
            let response = refusalResponse(refusal)
            core.releaseBody(releasing)
            return writeAndShutdown(response.serializedClosing())
        case .closeWebSocket(let acceptance, let next):
            acceptance.handler.closed()
            return perform(next)
        case .queueUpgrade(let acceptance):
            return queueUpgrade(acceptance)
        case .writeAndShutdown(let bytes):
            return writeAndShutdown(bytes)
        case .sendLive:
            return perform(sendLive())
        case .shutdownAndClose:
            // MHD closes the socket on `.NO`; the kernel still delivers what was written.
            let fd = viewport_mhd_connection_fd(connection)
            if fd >= 0 { _ = shutdown(fd, Int32(SHUT_WR)) }
            return .NO
        case .drainLive(let rest):
            return drainLive(rest)
        case .close:
            return .NO
        }
    }

    /// The handler's response for a refusal.
    private func refusalResponse(_ refusal: RequestStateMachine.Refusal) -> HTTPResponse {
        switch refusal.reason {
        case .payloadTooLarge(let limit): core.handler.payloadTooLarge(refusal.head, limit: limit)
        case .busy: core.handler.busy(refusal.head)
        case .deferredWorkRefused: core.handler.deferredWorkRefused(refusal.head)
        }
    }

    /// Tells the machine how ready the live sink is.
    private func poll(_ sink: any HTTPLiveBodySink) -> RequestStateMachine.Action {
        context.machine.liveSinkPolled(
            readyBytes: sink.readyBytes, answersAreDue: sink.answersAreDue, now: SocketWriter.monotonicSeconds)
    }

    /// Writes a whole answer mid-body within a second and shuts down the socket's write side; the
    /// rest of the body is still read (`MHD_YES`). MHD has nothing else pending on the socket at
    /// this point; see ``RequestStateMachine``.
    private func writeAndShutdown(_ bytes: [UInt8]) -> MHD_Result {
        let fd = viewport_mhd_connection_fd(connection)
        guard fd >= 0, SocketWriter.writeAll(bytes, to: fd, within: 1) else { return .NO }
        _ = shutdown(fd, Int32(SHUT_WR))
        return .YES
    }

    /// Sends what the socket takes of the live answer now, without waiting, and tells the machine.
    private func sendLive() -> RequestStateMachine.Action {
        let fd = viewport_mhd_connection_fd(connection)
        var written = 0
        var broken = fd < 0
        if !broken {
            context.machine.withLiveUnsent { raw in
                while written < raw.count {
                    let sent = send(fd, raw.baseAddress.map { $0 + written }, raw.count - written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    if sent > 0 {
                        written += sent
                    } else {
                        broken = !(sent < 0 && SocketWriter.isTransient(errno))
                        return
                    }
                }
            }
        }
        return context.machine.liveSent(written, broken: broken)
    }

    /// The body has ended and the socket did not take the whole rest of a live answer: a drain
    /// thread writes it while MHD keeps the connection suspended (the worker serves its other
    /// connections meanwhile); the thread resumes it when done, and the final call then closes it.
    private func drainLive(_ rest: [[UInt8]]) -> MHD_Result {
        let drains = core.liveDrains
        let socket = viewport_mhd_connection_fd(connection)
        guard socket >= 0, drains.enter() else { return .NO }  // stopping: no new threads
        let suspended = SuspendedConnection(pointer: connection)
        // A client that reads only after sending gets the rest at 1 MB/s at least.
        let seconds = drains.timeoutSeconds + Double(rest.reduce(0) { $0 + $1.count }) / 1_000_000
        MHD_suspend_connection(connection)
        let started = DetachedThread.start(stackSize: 128 * 1024) {
            if SocketWriter.writeAll(pieces: rest, to: socket, within: seconds, wakeFD: drains.wakeReadEnd, abortWhen: { drains.isShuttingDown }) {
                _ = shutdown(socket, Int32(SHUT_WR))
            }
            MHD_resume_connection(suspended.pointer)
            drains.leave()
        }
        if !started {
            core.log("cannot start a thread to finish a streamed answer; closing the connection")
            MHD_resume_connection(connection)
            drains.leave()
        }
        return .YES
    }

    /// Runs a deferred answer's work on the pool while MHD holds the connection suspended (the
    /// worker serves its other connections meanwhile). The work leaves its response in the
    /// context and resumes the connection; the final call then comes again and queues it.
    /// Suspended before the work is queued, so its resume can never come first.
    private func runDeferred(_ work: @escaping @Sendable () -> HTTPResponse) -> MHD_Result {
        let pool = core.deferredWork
        guard pool.reserve() else { return perform(context.machine.deferralRefused()) }
        let slot = DeferredResponse()
        context.deferredResponse = slot
        let suspended = SuspendedConnection(pointer: connection)
        MHD_suspend_connection(connection)
        pool.run {
            slot.store(work())
            MHD_resume_connection(suspended.pointer)
        }
        return .YES
    }

    /// Queues `101 Switching Protocols` for a WebSocket; MHD calls ``mhdUpgraded`` once it is
    /// sent (MHD adds `Connection: Upgrade` itself).
    private func queueUpgrade(_ acceptance: WebSocketAcceptance) -> MHD_Result {
        guard let response = MHD_create_response_for_upgrade(mhdUpgraded, Unmanaged.passUnretained(core).toOpaque()) else {
            core.log("cannot create an upgrade response")
            context.machine.upgradeFailed()?.handler.closed()
            return .NO
        }
        var headers = [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", acceptance.handshake.acceptValue)]
        if let subprotocol = acceptance.subprotocol { headers.append(("Sec-WebSocket-Protocol", subprotocol)) }
        for (name, value) in headers where MHD_add_response_header(response, name, value) != .YES {
            core.log("dropped invalid upgrade header '\(name)'")
        }
        let result = MHD_queue_response(connection, 101, response)
        MHD_destroy_response(response)
        if result != .YES { context.machine.upgradeFailed()?.handler.closed() }
        return result
    }

    /// Builds the MHD response and queues it.
    private func queue(_ response: HTTPResponse) -> MHD_Result {
        let created: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            created = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
            }
        case .buffer(let buffer):
            // MHD frees the memory when it is done with it (also if queueing fails).
            if let memory = buffer.take() {
                created = MHD_create_response_from_buffer(buffer.count, memory, .RESPMEM_MUST_FREE)
                if created == nil { free(memory) }
            } else {
                core.log("a response buffer was queued twice (status \(response.status))")
                created = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
            }
        case .stream(let stream):
            let box = Unmanaged.passRetained(ResponseStreamBox(stream))
            created = MHD_create_response_from_callback(
                UInt64.max, 16 * 1024, mhdStreamRead, box.toOpaque(), mhdStreamFree)
            if created == nil { box.release() }
        }
        guard let mhdResponse = created else {
            core.log("cannot create a response (status \(response.status))")
            return .NO
        }
        for field in response.headers {
            // withCString: a native string is passed as it is (the implicit conversion copied it).
            let added = field.name.withCString { name in field.value.withCString { MHD_add_response_header(mhdResponse, name, $0) } }
            if added != .YES {
                core.log("dropped invalid response header '\(field.name)'")
            }
        }
        if core.draining.load(ordering: .relaxed) && !response.closesConnection {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        var status = response.status
        if !(100...999).contains(status) {
            core.log("invalid status \(status) from the handler, sending 500")
            status = 500
        }
        let result = MHD_queue_response(connection, UInt32(status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }
}

/// A connection MHD holds suspended, handed to the thread that will resume it (MHD allows that
/// from any thread; the pointer stays valid until then).
private struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

extension String {
    /// The string without leading and trailing ASCII spaces and tabs.
    func trimmingASCIISpaces() -> Substring {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
