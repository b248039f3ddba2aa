import Logging
import Synchronization
import ViewportCore
import ViewportHTTP

/// API v1 over the HTTP layer: checks a request's head in API.md's order of precedence (401, 404,
/// 405, 415; the HTTP layer does 413), then reads the body and answers.
final class APIHandler: HTTPHandler {
    let layouts: LayoutStore
    let sessions: SessionStore
    let metrics: ServiceMetrics
    let maxBodyBytes: Int
    let maxItems: Int
    /// `sessions.maxViews`, given to every session.
    let maxViews: Int
    /// `Bearer <token>` as bytes, when auth is on.
    private let expectedAuthorization: [UInt8]?
    /// `bearer.<token>` as bytes, when auth is on: the WebSocket subprotocol that stands in for
    /// the header (browsers cannot set headers on a WebSocket).
    private let expectedBearerProtocol: [UInt8]?
    let logger: Logger

    /// A handler with fresh stores sized and timed by `configuration`.
    convenience init(configuration: ServiceConfiguration, metrics: ServiceMetrics, logger: Logger) {
        let idle = ServiceConfiguration.seconds(configuration.sessions.idleTimeout)
        let layouts = LayoutStore(
            maxLayouts: configuration.layouts.max, maxTotalItems: configuration.layouts.maxTotalItems, idleTimeoutSeconds: idle)
        let sessions = SessionStore(maxSessions: configuration.sessions.max, idleTimeoutSeconds: idle, layouts: layouts)
        self.init(configuration: configuration, layouts: layouts, sessions: sessions, metrics: metrics, logger: logger)
    }

    init(configuration: ServiceConfiguration, layouts: LayoutStore, sessions: SessionStore, metrics: ServiceMetrics, logger: Logger) {
        self.layouts = layouts
        self.sessions = sessions
        self.metrics = metrics
        self.maxBodyBytes = configuration.http.maxBodyBytes
        self.maxItems = configuration.layouts.maxItems
        self.maxViews = configuration.sessions.maxViews
        self.expectedAuthorization = configuration.authToken.map { Array("Bearer \($0)".utf8) }
        self.expectedBearerProtocol = configuration.authToken.map { Array("\(SessionSocket.bearerPrefix)\($0)".utf8) }
        self.logger = logger
    }

    // MARK: HTTPHandler

    func begin(_ head: HTTPRequestHead) -> HTTPRequestAction {
        let started = Monotonic.nanoseconds()
        let route = Route(path: head.path)
        let label = route?.template ?? "unmatched"
        do {
            return try dispatch(head, route: route, started: started)
        } catch {
            return .respond(record(error.response, head: head, route: label, started: started))
        }
    }

    func payloadTooLarge(_ head: HTTPRequestHead, limit: Int) -> HTTPResponse {
        let response = Problem.tooLarge("body: larger than \(limit) bytes (http.maxBodyBytes)").response
        metrics.recordRequest(route: Route(path: head.path)?.template ?? "unmatched", method: head.method, status: 413, nanoseconds: 0)
        return response
    }

    func busy(_ head: HTTPRequestHead) -> HTTPResponse {
        metrics.recordRequest(route: Route(path: head.path)?.template ?? "unmatched", method: head.method, status: 503, nanoseconds: 0)
        var response = Problem(
            status: 503,
            detail: "too many request bodies are being received at once (http.maxBufferedBodyBytes); retry shortly"
        ).response
        response.headers.append(("Retry-After", "1"))
        return response
    }

    func unavailable(_ head: HTTPRequestHead) -> HTTPResponse {
        metrics.recordRequest(route: Route(path: head.path)?.template ?? "unmatched", method: head.method, status: 503, nanoseconds: 0)
        return Problem(status: 503, detail: "viewportd is shutting down").response
    }

    // MARK: Dispatch

    private func dispatch(_ head: HTTPRequestHead, route: Route?, started: Int64) throws(Problem) -> HTTPRequestAction {
        if route != .healthz, let expected = expectedAuthorization {
            let header = head.header("Authorization").map { Self.constantTimeEquals(Self.normalizingScheme($0), expected) } ?? false
            guard header || (route?.isSessionSocket == true && offersBearerProtocol(head)) else {
                let alternative = route?.isSessionSocket == true ? " (or the WebSocket subprotocol \"bearer.<token>\")" : ""
                throw Problem(status: 401, detail: "Authorization: a valid \"Bearer <token>\" header is required\(alternative)")
            }
        }
        guard let route else { throw Problem.notFound("path \(head.path) does not exist") }
        // 404 for ids in the path before 405 for the method.
        var session: SessionHandle?
        switch route {
        case .layout(let id):
            guard layouts.lookup(id: id) != nil else { throw Problem.notFound("layout \(id) does not exist") }
        case .session(let id), .sessionViewport(let id), .sessionLayout(let id), .sessionSocket(let id):
            session = sessions.get(id)
            guard session != nil else { throw Problem.notFound("session \(id) does not exist or has expired") }
        default:
            break
        }
        guard route.allowedMethods.contains(head.method) else {
            var problem = Problem(status: 405, detail: "\(head.method) is not allowed on \(route.template); allowed: \(route.allowedMethods.joined(separator: ", "))")
            problem.allow = route.allowedMethods.joined(separator: ", ")
            throw problem
        }
        let media = MediaType(contentType: head.header("Content-Type"))
        if head.method == "POST" || head.method == "PUT" || head.method == "PATCH" {
            let acceptsStream = route.isSessionViewport
            if case .other(let given) = media {
                throw Problem(status: 415, detail: "Content-Type \(given) is not supported; send application/json\(acceptsStream ? " or application/x-ndjson" : "")")
            }
            if media == .ndjson && !acceptsStream {
                throw Problem(status: 415, detail: "Content-Type application/x-ndjson is only accepted by /v1/sessions/{id}/viewport")
            }
        }
        let label = route.template
        switch (route, head.method) {
        case (.healthz, _):
            return .respond(record(Self.json(200, #"{"status":"ok"}"#), head: head, route: label, started: started))
        case (.metrics, _):
            let body = metrics.render(sessions: sessions.count, layouts: layouts.count)
            let response = HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: .bytes(body))
            return .respond(record(response, head: head, route: label, started: started))
        case (.openapi, _):
            let response = HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(OpenAPIDocument.bytes))
            return .respond(record(response, head: head, route: label, started: started))
        case (.clientModule, _):
            return .respond(record(ClientAssets.module, head: head, route: label, started: started))
        case (.demo, _):
            return .respond(record(ClientAssets.demo, head: head, route: label, started: started))
        case (.layouts, _):
            return collect(head, route: label, started: started) { try self.postLayout($0) }
        case (.layout(let id), _):
            return .respond(record(try getLayout(id), head: head, route: label, started: started))
        case (.sessions, _):
            return collect(head, route: label, started: started) { try self.openSession($0) }
        case (.session(let id), "GET"):
            return .respond(record(try getSession(session, id: id), head: head, route: label, started: started))
        case (.session(let id), _):
            // Another request may have ended the session since the lookup above: only the one
            // that removes it answers 204, like a DELETE that comes after.
            guard sessions.remove(id) != nil else { throw Problem.notFound("session \(id) does not exist or has expired") }
            return .respond(record(HTTPResponse(status: 204), head: head, route: label, started: started))
        case (.sessionLayout(let id), "GET"):
            return .respond(record(try getSessionLayout(session, id: id), head: head, route: label, started: started))
        case (.sessionLayout, "PATCH"):
            guard let session else { throw Problem.notFound("session does not exist") }
            return collect(head, route: label, started: started) { body in
                let request = try body.withUnsafeBytes { bytes throws(Problem) in
                    do { return try LayoutEditRequest.decode(bytes) } catch { throw error.problem }
                }
                var w = JSONWriter(capacity: 1024)
                try self.applyEdit(request, to: session, into: &w)
                return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
            }
        case (.sessionLayout, _):
            guard let session else { throw Problem.notFound("session does not exist") }
            return collect(head, route: label, started: started) { try self.changeLayout(of: session, body: $0) }
        case (.sessionSocket, _):
            guard let session else { throw Problem.notFound("session does not exist") }
            return openSocket(head, session: session, route: label, started: started)
        case (.sessionViewport, _):
            guard let session else { throw Problem.notFound("session does not exist") }
            if media == .ndjson {
                let sink = UpdateStreamSink(session: session, handler: self) { [metrics] status in
                    metrics.recordRequest(route: label, method: head.method, status: status, nanoseconds: Monotonic.nanoseconds() - started)
                }
                return .stream(maxBytes: maxBodyBytes, sink: sink)
            }
            return collect(head, route: label, started: started) { body in
                let update = try body.withUnsafeBytes { bytes throws(Problem) in
                    do { return try UpdateRequest.decode(bytes) } catch { throw error.problem }
                }
                // Most plans fit in 1 KiB: one allocation, no regrowth.
                var w = JSONWriter(capacity: 1024)
                try self.apply(update, to: session, into: &w)
                return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
            }
        }
    }

    /// Reads the whole body, then answers `body(bytes)` (or its problem).
    private func collect(
        _ head: HTTPRequestHead, route: String, started: Int64, _ body: @escaping ([UInt8]) throws -> HTTPResponse
    ) -> HTTPRequestAction {
        .collect(maxBytes: maxBodyBytes) { bytes in
            let response: HTTPResponse
            do {
                response = try body(bytes)
            } catch {
                response = error.problem.response
            }
            return self.record(response, head: head, route: route, started: started)
        }
    }

    private func record(_ response: HTTPResponse, head: HTTPRequestHead, route: String, started: Int64) -> HTTPResponse {
        metrics.recordRequest(route: route, method: head.method, status: response.status, nanoseconds: Monotonic.nanoseconds() - started)
        if response.status >= 400 {
            logger.debug("\(head.method) \(head.path) → \(response.status)")
        }
        return response
    }

    // MARK: Endpoints

    /// `GET /v1/sessions/{id}/socket`: the WebSocket handshake (426/400 when it is not one), then
    /// a ``SessionSocket`` answers each message. Confirms the subprotocol `viewportd.v1` when
    /// offered, never `bearer.…`.
    private func openSocket(_ head: HTTPRequestHead, session: SessionHandle, route: String, started: Int64) -> HTTPRequestAction {
        switch WebSocketHandshake.validate(head) {
        case .failure(let error):
            var response = Problem(status: error.status, detail: error.message).response
            response.headers += error.headers
            return .respond(record(response, head: head, route: route, started: started))
        case .success(let handshake):
            let subprotocol = handshake.offeredProtocols.contains(SessionSocket.subprotocol) ? SessionSocket.subprotocol : nil
            metrics.recordRequest(route: route, method: head.method, status: 101, nanoseconds: Monotonic.nanoseconds() - started)
            let socket = SessionSocket(session: session, handler: self, route: route)
            return .webSocket(WebSocketAcceptance(handshake: handshake, subprotocol: subprotocol, maxMessageBytes: maxBodyBytes, handler: socket))
        }
    }

    /// Whether the request offers the subprotocol `bearer.<token>` with the right token
    /// (compared in constant time, like the header).
    private func offersBearerProtocol(_ head: HTTPRequestHead) -> Bool {
        guard let expected = expectedBearerProtocol else { return false }
        var found = false
        for offered in head.tokens(of: "Sec-WebSocket-Protocol") where offered.hasPrefix(SessionSocket.bearerPrefix) {
            found = Self.constantTimeEquals(Array(offered.utf8), expected) || found
        }
        return found
    }

    private func postLayout(_ body: [UInt8]) throws -> HTTPResponse {
        let layout = try JSONReader.read(body) { r in
            let layout = try LayoutDecoder(maxItems: maxItems).decodeDeferringInvalid(&r)
            try r.finish()
            return try layout.get()
        }
        let (stored, created) = try layouts.store(layout, retain: false)
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(stored, sessions: nil, into: &w)
        return HTTPResponse(
            status: created ? 201 : 200,
            headers: [("Content-Type", "application/json"), ("Location", "/v1/layouts/\(stored.digest)")], body: .bytes(w.bytes))
    }

    private func getLayout(_ id: String) throws(Problem) -> HTTPResponse {
        guard let (layout, count) = layouts.lookup(id: id) else { throw Problem.notFound("layout \(id) does not exist") }
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(layout, sessions: count, into: &w)
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
    }

    private func openSession(_ body: [UInt8]) throws -> HTTPResponse {
        var request = try SessionRequest.decode(body, maxItems: maxItems)
        request.configuration.maxViews = maxViews
        do {
            try request.configuration.validate()
        } catch {
            throw Problem.invalid(error.description)
        }
        let layout = try retainLayout(request.layout)
        let session: ViewportSession
        do {
            session = try ViewportSession(layout: layout, configuration: request.configuration)
        } catch {
            layouts.release(id: layout.digest)
            throw Problem.invalid(error.description)
        }
        let handle = SessionHandle(id: SessionStore.newID(), session: session)
        do {
            try sessions.insert(handle)
        } catch {
            layouts.release(id: layout.digest)
            throw error
        }
        count(session.lastPlan)
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("session")
        w.string(handle.id)
        w.key("layout")
        w.string(layout.digest)
        w.key("contentSize")
        PlanEncoder.size(layout.contentSize, into: &w)
        w.key("plan")
        PlanEncoder.encode(session.lastPlan, layout: layout, into: &w)
        w.endObject()
        return HTTPResponse(
            status: 201, headers: [("Content-Type", "application/json"), ("Location", "/v1/sessions/\(handle.id)")],
            body: .bytes(w.bytes))
    }

    private func changeLayout(of handle: SessionHandle, body: [UInt8]) throws -> HTTPResponse {
        let request = try LayoutChangeRequest.decode(body, maxItems: maxItems)
        let layout = try retainLayout(request.layout)
        let outcome: Result<(Plan, Layout, String?), Problem> = handle.state.withLock { state in
            guard !state.closed else { return .failure(.notFound("session \(handle.id) does not exist or has expired")) }
            let before = state.session.seq
            let previous = state.session.layout.digest
            do {
                let plan = try state.session.changeLayout(to: layout, anchor: request.anchor, seq: request.seq)
                // A retry applies nothing: the session keeps the layout it has.
                return .success((plan, state.session.layout, state.session.seq != before ? previous : nil))
            } catch {
                return .failure(error.problem)
            }
        }
        handle.touch()
        switch outcome {
        case .failure(let problem):
            layouts.release(id: layout.digest)
            throw problem
        case .success(let (plan, current, previous)):
            if let previous {
                layouts.release(id: previous)
                count(plan)
            } else {
                layouts.release(id: layout.digest)
            }
            var w = JSONWriter(capacity: 512)
            PlanEncoder.encode(plan, layout: current, into: &w)
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
        }
    }

    /// The layout a body names, counted as used by one more session: a stored one by id (422 when
    /// unknown) or an inline one, stored.
    private func retainLayout(_ reference: LayoutReference) throws(Problem) -> Layout {
        switch reference {
        case .id(let id):
            guard let found = layouts.retain(id: id) else { throw Problem.invalid("layout: no stored layout has the id \"\(id)\"") }
            return found
        case .inline(let inline):
            return try layouts.store(inline, retain: true).layout
        }
    }

    private func getSession(_ handle: SessionHandle?, id: String) throws(Problem) -> HTTPResponse {
        guard let handle else { throw Problem.notFound("session \(id) does not exist or has expired") }
        var w = JSONWriter(capacity: 1024)
        let found = handle.state.withLock { state in
            guard !state.closed else { return false }
            PlanEncoder.encodeState(state.session, id: id, into: &w)
            return true
        }
        guard found else { throw Problem.notFound("session \(id) does not exist or has expired") }
        handle.touch()
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
    }

    /// Applies one update to a session under its lock and writes the plan.
    func apply(_ request: UpdateRequest, to handle: SessionHandle, into w: inout JSONWriter) throws(Problem) {
        let outcome: Result<(Plan, Layout, Bool), Problem> = handle.state.withLock { state in
            guard !state.closed else { return .failure(.notFound("session \(handle.id) does not exist or has expired")) }
            let before = state.session.seq
            do {
                let update = try request.resolve(in: state.session.layout)
                let plan = try state.session.apply(update)
                return .success((plan, state.session.layout, state.session.seq != before))
            } catch {
                return .failure(error.problem)
            }
        }
        handle.touch()
        let (plan, layout, applied) = try outcome.get()
        if applied { count(plan) }
        PlanEncoder.encode(plan, layout: layout, into: &w)
    }

    /// Applies one edit of a session's layout (PATCH, or a stream's `patch`) under the session's
    /// lock and writes the plan.
    func applyEdit(_ request: LayoutEditRequest, to handle: SessionHandle, into w: inout JSONWriter) throws(Problem) {
        let outcome: Result<(Plan, Layout, Bool), Problem> = handle.state.withLock { state in
            guard !state.closed else { return .failure(.notFound("session \(handle.id) does not exist or has expired")) }
            let before = state.session.seq
            do {
                let plan = try state.session.apply(request.edit, anchor: request.anchor, seq: request.seq, maxItems: maxItems)
                return .success((plan, state.session.layout, state.session.seq != before))
            } catch {
                return .failure(error.problem)
            }
        }
        handle.touch()
        let (plan, layout, applied) = try outcome.get()
        if applied { count(plan) }
        PlanEncoder.encode(plan, layout: layout, into: &w)
    }

    /// Applies one line of a stream or one WebSocket message: an update or an edit.
    func apply(_ message: StreamMessage, to handle: SessionHandle, into w: inout JSONWriter) throws(Problem) {
        switch message {
        case .update(let update): try apply(update, to: handle, into: &w)
        case .patch(let edit): try applyEdit(edit, to: handle, into: &w)
        }
    }

    /// `GET /v1/sessions/{id}/layout`: the session's current layout (LayoutEncoder), written
    /// outside the session's lock (a layout version never changes).
    private func getSessionLayout(_ handle: SessionHandle?, id: String) throws(Problem) -> HTTPResponse {
        guard let handle else { throw Problem.notFound("session \(id) does not exist or has expired") }
        let layout: Layout? = handle.state.withLock { $0.closed ? nil : $0.session.layout }
        guard let layout else { throw Problem.notFound("session \(id) does not exist or has expired") }
        handle.touch()
        var w = JSONWriter(capacity: 64 + layout.count * 24)
        LayoutEncoder.encode(layout, into: &w)
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
    }

    private func count(_ plan: Plan) {
        metrics.count(created: plan.create.count, reused: plan.reuse.count)
    }

    // MARK: Helpers

    /// Shared, so a response does not build its header list each time.
    static let jsonHeaders: [(name: String, value: String)] = [("Content-Type", "application/json")]

    static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: Self.jsonHeaders, body: .bytes(Array(body.utf8)))
    }

    /// The header's bytes with an ASCII-case-insensitive `Bearer` scheme spelled `Bearer`
    /// (RFC 9110 §11.1: the scheme is case-insensitive; the token is not).
    static func normalizingScheme(_ authorization: String) -> [UInt8] {
        var bytes = Array(authorization.utf8)
        let scheme = Array("Bearer ".utf8)
        if bytes.count >= scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) {
            bytes.replaceSubrange(0..<scheme.count, with: scheme)
        }
        return bytes
    }

    /// Compares without an early exit, so response time does not reveal how much of a token matched.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}

extension Route {
    var isSessionViewport: Bool {
        if case .sessionViewport = self { return true }
        return false
    }

    var isSessionSocket: Bool {
        if case .sessionSocket = self { return true }
        return false
    }
}

extension Error {
    /// Any error thrown while answering, as a problem: decoding errors are 400 (or 422), session
    /// errors 422 or 409, problems are themselves, anything else is a 400 naming it.
    var problem: Problem {
        if let problem = self as? Problem { return problem }
        if let json = self as? JSONError { return Problem(json) }
        if let session = self as? SessionError {
            switch session {
            case .invalid: return .invalid(session.description)
            case .sequenceConflict(let current, _): return .sequenceConflict(current: current, detail: session.description)
            case .tooLarge: return .tooLarge(session.description)
            }
        }
        return .badRequest(String(describing: self))
    }

    var response: HTTPResponse { problem.response }
}
