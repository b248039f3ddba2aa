import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Drives one request through its access-handler calls: builds the head, asks the handler,
/// routes body bytes, and queues the response.
///
/// Responses are queued on the final access-handler call (after the body), except:
/// - a `Content-Length` above the limit (413), or above ``discardLimit`` for `.respond`, is
///   answered on the first call, before any body is read, with `Connection: close`
///   (``answerBeforeBody(_:)``);
/// - a body that grows past its limit while arriving (chunked uploads) is answered at once,
///   mid-body, with `Connection: close` (``answerMidBody(_:)``).
struct RequestDriver {
    /// A `.respond` request's body is read and dropped up to this size (so keep-alive
    /// survives); larger bodies are not read: the answer goes out at once and the
    /// connection closes.
    static let discardLimit = 1 << 20

    let core: ServerCore
    let connection: OpaquePointer
    let context: RequestContext

    /// First call: the head is complete.
    func begin(method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> MHD_Result {
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(8)
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, mhdCollectHeader, pointer)
        }
        var contentLength: Int?
        var chunked = false
        for field in headers {
            if asciiCaseInsensitiveEquals(field.name, "Content-Length") {
                contentLength = Int(field.value.trimmingASCIISpaces())
            } else if asciiCaseInsensitiveEquals(field.name, "Transfer-Encoding") {
                chunked = field.value.lowercased().contains("chunked")
            }
        }
        if chunked { contentLength = nil }
        let head = HTTPRequestHead(
            method: method.map { String(cString: $0) } ?? "GET",
            path: context.path, query: context.query,
            headers: headers, contentLength: contentLength)
        context.head = head

        guard core.admit() else {
            return respond(core.handler.unavailable(head).closingConnection(), head: head)
        }
        context.admitted = true
        switch core.handler.begin(head) {
        case .respond(let response):
            return respond(response, head: head)
        case .collect(let maxBytes, let onBody):
            if let length = contentLength, length > maxBytes {
                return answerBeforeBody(core.handler.payloadTooLarge(head, limit: maxBytes))
            }
            if let length = contentLength, length > 0 {
                guard reserveBody(upTo: length) else { return answerBeforeBody(core.handler.busy(head)) }
                context.buffer.reserveCapacity(length)
            }
            context.phase = .collect(maxBytes: maxBytes, onBody: onBody)
        case .stream(let maxBytes, let sink):
            if let length = contentLength, length > maxBytes {
                context.phase = .done
                _ = sink.finish(truncated: true)
                return answerBeforeBody(core.handler.payloadTooLarge(head, limit: maxBytes))
            }
            context.phase = .stream(maxBytes: maxBytes, sink: sink)
            // A live answer is chunked: HTTP/1.1 only (an HTTP/1.0 client gets its answer after the body).
            if sink is any HTTPLiveBodySink, let version, strcmp(version, "HTTP/1.1") == 0 {
                context.allowsLive = true
                context.startedAt = SocketWriter.monotonicSeconds()
            }
        case .webSocket(let acceptance):
            guard !head.hasBody else {
                acceptance.handler.closed()
                return respond(HTTPResponse(status: 400, contentType: "text/plain", body: "a WebSocket handshake carries no body"), head: head)
            }
            context.phase = .webSocket(acceptance)
        }
        return .YES
    }

    private func respond(_ response: HTTPResponse, head: HTTPRequestHead) -> MHD_Result {
        if let length = head.contentLength, length > Self.discardLimit {
            return answerBeforeBody(response)
        }
        context.phase = .respond(response)
        return .YES
    }

    /// A body chunk arrived (`*upload_data_size` is already set to 0).
    func body(_ chunk: UnsafeRawBufferPointer) -> MHD_Result {
        let before = context.received
        context.received += chunk.count
        switch context.phase {
        case .respond(let response):
            if context.received > Self.discardLimit {
                return answerMidBody(response)
            }
        case .collect(let maxBytes, _):
            if context.received > maxBytes {
                return answerMidBody(core.handler.payloadTooLarge(requestHead, limit: maxBytes))
            }
            guard reserveBody(upTo: context.received) else { return answerMidBody(core.handler.busy(requestHead)) }
            context.buffer.append(contentsOf: chunk)
        case .stream(let maxBytes, let sink):
            if context.received > maxBytes {
                let allowed = maxBytes - before
                if allowed > 0 {
                    sink.consume(UnsafeRawBufferPointer(rebasing: chunk[..<allowed]))
                }
                context.phase = .done
                let last = sink.finish(truncated: true)
                return context.live == nil ? answerMidBody(last) : endLiveMidBody(last)
            }
            sink.consume(chunk)
            if context.allowsLive, let live = sink as? any HTTPLiveBodySink { return advanceLive(live) }
        case .answeredMidBody:
            if context.received > Self.discardLimit { return .NO }
        case .awaitingHead, .done, .webSocket, .closeOnResume:
            break
        }
        return .YES
    }

    /// Final call: the body (if any) is complete.
    func end() -> MHD_Result {
        let phase = context.phase
        context.phase = .done
        switch phase {
        case .respond(let response):
            return queue(response)
        case .collect(_, let onBody):
            let body = context.buffer
            context.buffer = []
            let response = onBody(body)
            releaseBody()
            return queue(response)
        case .stream(_, let sink):
            let response = sink.finish(truncated: false)
            return context.live == nil ? queue(response) : finishLive(response)
        case .webSocket(let acceptance):
            return queueUpgrade(acceptance)
        case .answeredMidBody, .awaitingHead, .done, .closeOnResume:
            // Nothing to queue: close rather than leave the client waiting for a response.
            return .NO
        }
    }

    /// The head (always set once the body arrives).
    private var requestHead: HTTPRequestHead { context.head ?? HTTPRequestHead(method: "", path: context.path) }

    /// Grows this request's share of the server's body budget to `total` bytes (a declared
    /// `Content-Length` at once; a chunked body as it arrives); false when the budget is spent.
    private func reserveBody(upTo total: Int) -> Bool {
        let extra = total - context.reservedBody
        guard extra > 0 else { return true }
        guard core.reserveBody(extra) else { return false }
        context.reservedBody = total
        return true
    }

    /// Gives this request's share of the body budget back (its buffer is gone).
    func releaseBody() {
        core.releaseBody(context.reservedBody)
        context.reservedBody = 0
    }

    /// Answers on the first call, before any body is read, and closes the connection after.
    /// MHD 0.9.75 accepts a response queued here (state "headers processed"): it sends it at
    /// once (no `100 Continue`), does not read the body, and closes the connection.
    func answerBeforeBody(_ response: HTTPResponse) -> MHD_Result {
        context.phase = .done
        return queue(response.closingConnection())
    }

    /// Answers while the body is still arriving (a chunked body grew past its limit).
    ///
    /// Found with libmicrohttpd 0.9.75 (tests `chunkedBodyOverTheLimit…`): `MHD_queue_response`
    /// returns `MHD_NO` while the body is being received — MHD only accepts a response before
    /// the body (first call) or after it (final call). Waiting for the end of the body would
    /// leave a client that stops sending (or streams forever) without an answer until the
    /// connection timeout. So the layer writes the response itself, serialized with
    /// `Content-Length` and `Connection: close` (a streamed body is drained first), straight
    /// to the connection's socket — MHD has nothing else pending on it at this point — and
    /// shuts down the socket's write side. The rest of the body is then read and dropped (so
    /// the close does not reset the connection while the client still sends) up to
    /// ``discardLimit`` more bytes; at the end of the body, or past that limit, the access
    /// handler returns `MHD_NO` and MHD closes the connection (the request completes with an
    /// error code; nothing is queued). If the socket write fails the connection just closes.
    func answerMidBody(_ response: HTTPResponse) -> MHD_Result {
        context.phase = .answeredMidBody
        context.received = 0
        context.buffer = []
        releaseBody()
        let fd = viewport_mhd_connection_fd(connection)
        guard fd >= 0 else { return .NO }
        let bytes = Self.serialize(response)
        guard SocketWriter.writeAll(bytes, to: fd, within: 1) else { return .NO }
        _ = shutdown(fd, Int32(SHUT_WR))
        return .YES
    }

    /// The response as HTTP/1.1 bytes with `Content-Length` and `Connection: close` (a stream is
    /// read to its end).
    static func serialize(_ response: HTTPResponse) -> [UInt8] {
        var body: [UInt8]
        switch response.body {
        case .bytes(let bytes):
            body = bytes
        case .stream(let stream):
            body = []
            while let chunk = stream.nextChunk() { body += chunk }
        }
        return closingHead(status: response.status, headers: response.headers, framing: "Content-Length: \(body.count)") + body
    }

    /// The head of a response the layer writes to the socket itself, after which the connection
    /// closes: the status line, `headers` without the framing ones, `framing`, `Connection: close`.
    static func closingHead(status: Int, headers: [(name: String, value: String)], framing: String) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for field in headers
        where !asciiCaseInsensitiveEquals(field.name, "Content-Length")
            && !asciiCaseInsensitiveEquals(field.name, "Transfer-Encoding")
            && !asciiCaseInsensitiveEquals(field.name, "Connection") {
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "\(framing)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// Queues `101 Switching Protocols` for a WebSocket; MHD calls ``mhdUpgraded`` once it is
    /// sent (MHD adds `Connection: Upgrade` itself).
    func queueUpgrade(_ acceptance: WebSocketAcceptance) -> MHD_Result {
        guard let response = MHD_create_response_for_upgrade(mhdUpgraded, Unmanaged.passUnretained(core).toOpaque()) else {
            core.log("cannot create an upgrade response")
            acceptance.handler.closed()
            return .NO
        }
        var headers = [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", acceptance.handshake.acceptValue)]
        if let subprotocol = acceptance.subprotocol { headers.append(("Sec-WebSocket-Protocol", subprotocol)) }
        for (name, value) in headers where MHD_add_response_header(response, name, value) != .YES {
            core.log("dropped invalid upgrade header '\(name)'")
        }
        context.webSocket = acceptance
        let result = MHD_queue_response(connection, 101, response)
        MHD_destroy_response(response)
        if result != .YES {
            context.webSocket = nil
            acceptance.handler.closed()
        }
        return result
    }

    /// Builds the MHD response and queues it.
    @discardableResult
    func queue(_ response: HTTPResponse) -> MHD_Result {
        let created: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            created = bytes.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(
                    raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
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
            if MHD_add_response_header(mhdResponse, field.name, field.value) != .YES {
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

extension String {
    /// The string without leading and trailing ASCII spaces and tabs.
    func trimmingASCIISpaces() -> Substring {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}
