import Logging
import Synchronization
import ViewportCore
import ViewportHTTP
import ViewportOpenAPI
import ViewportJSON

/// API v1 over the HTTP layer: checks a request's head in the order of precedence of docs/api.md "Errors" (401, 404,
/// 405, 415; the HTTP layer does 413), then reads the body and answers.
final class APIHandler: HTTPHandler {
    let layouts: any LayoutRepository
    let sessions: any SessionRepository
    /// `sessions` when it is the in-process store: updates call it directly, so that its generic
    /// `withSession` is specialized (through the protocol it looked up generic metadata and copied
    /// its result through value witnesses on every update).
    private let localSessions: SessionStore?
    /// Whether a shared store is configured: a 409 for a `seq` ahead of the session then says
    /// `"resync": true` (the session may have lost updates with a crashed instance).
    let sharedStore: Bool
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

    /// A handler with fresh stores sized and timed by `configuration` (in-process, or in front of
    /// the shared store of `store.url`).
    convenience init(configuration: ServiceConfiguration, metrics: ServiceMetrics, logger: Logger) {
        self.init(configuration: configuration, repositories: .make(configuration, metrics: metrics, logger: logger), metrics: metrics, logger: logger)
    }

    init(configuration: ServiceConfiguration, repositories: Repositories, metrics: ServiceMetrics, logger: Logger) {
        self.layouts = repositories.layouts
        self.sessions = repositories.sessions
        self.localSessions = repositories.sessions as? SessionStore
        self.sharedStore = repositories.shared
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
        recordLayerAnswer(head, status: 413)
        return response
    }

    func busy(_ head: HTTPRequestHead) -> HTTPResponse {
        recordLayerAnswer(head, status: 503)
        var problem = Problem(
            status: 503,
            detail: "too many request bodies are being received at once (http.maxBufferedBodyBytes); retry shortly"
        )
        problem.retryAfter = 1
        return problem.response
    }

    func unavailable(_ head: HTTPRequestHead) -> HTTPResponse {
        recordLayerAnswer(head, status: 503)
        var problem = Problem(status: 503, detail: "viewportd is shutting down")
        // Another instance (or this one's successor) answers it: a proxy retries at once.
        problem.retryAfter = 1
        return problem.response
    }

    // MARK: Dispatch

    private func dispatch(_ head: HTTPRequestHead, route: Route?, started: Int64) throws(Problem) -> HTTPRequestAction {
        if route != .healthz && route != .readyz, let expected = expectedAuthorization {
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
            guard try layouts.lookup(id: id) != nil else { throw Problem.notFound("layout \(id) does not exist") }
        case .session(let id), .sessionViewport(let id), .sessionLayout(let id), .sessionSocket(let id), .sessionResync(let id):
            let location = try sessions.locate(id)
            guard location.exists else { throw Problem.notFound("session \(id) does not exist or has expired") }
            session = location.handle
        default:
            break
        }
        // HEAD is answered as GET (libmicrohttpd sends the head without the body), on every path
        // that answers GET but the socket; `Allow` keeps listing the contract's methods.
        let method = head.method == "HEAD" && route.answersHead ? "GET" : head.method
        guard route.allowedMethods.contains(method) else {
            var problem = Problem(status: 405, detail: "\(head.method) is not allowed on \(route.template); allowed: \(route.allowedMethods.joined(separator: ", "))")
            problem.allow = route.allowedMethods.joined(separator: ", ")
            throw problem
        }
        // The usual `application/json` is recognized without making a string.
        let media = head.header("Content-Type", is: "application/json") ? MediaType.json : MediaType(contentType: head.header("Content-Type"))
        if method == "POST" || method == "PUT" || method == "PATCH" {
            let acceptsStream = route.isSessionViewport
            if case .other(let given) = media {
                throw Problem(status: 415, detail: "Content-Type \(given) is not supported; send application/json\(acceptsStream ? " or application/x-ndjson" : "")")
            }
            if media == .ndjson && !acceptsStream {
                throw Problem(status: 415, detail: "Content-Type application/x-ndjson is only accepted by /v1/sessions/{id}/viewport")
            }
        }
        let label = route.template
        switch (route, method) {
        case (.healthz, _):
            // With a shared store, whether it answers (the process itself is fine either way).
            let body = sessions.storeIsUp.map { #"{"status":"ok","store":"\#($0 ? "ok" : "unavailable")"}"# } ?? #"{"status":"ok"}"#
            return .respond(record(Self.json(200, body), head: head, route: label, started: started))
        case (.readyz, _):
            let up = sessions.storeIsUp ?? true
            let body = sessions.storeIsUp.map { #"{"status":"\#($0 ? "ok" : "unavailable")","store":"\#($0 ? "ok" : "unavailable")"}"# } ?? #"{"status":"ok"}"#
            var response = Self.json(up ? 200 : 503, body)
            if !up { response.headers.append(("Retry-After", "1")) }
            return .respond(record(response, head: head, route: label, started: started))
        case (.metrics, _):
            let body = metrics.render(sessions: sessions.count, layouts: layouts.count, storeIsUp: sessions.storeIsUp)
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
            return .respond(record(try getSession(id, hint: session), head: head, route: label, started: started))
        case (.session(let id), _):
            // Another request may have ended the session since the lookup above: only the one
            // that removes it answers 204, like a DELETE that comes after.
            guard try sessions.end(id) else { throw Problem.notFound("session \(id) does not exist or has expired") }
            return .respond(record(HTTPResponse(status: 204), head: head, route: label, started: started))
        case (.sessionLayout(let id), "GET"):
            return .respond(record(try getSessionLayout(id, hint: session), head: head, route: label, started: started))
        case (.sessionLayout(let id), "PATCH"):
            return collect(head, route: label, started: started) { body in
                let request = try body.withUnsafeBytes { bytes throws(Problem) in
                    do { return try LayoutEditRequest.decode(bytes) } catch { throw error.problem }
                }
                var w = JSONWriter(capacity: 2048)
                var hint = session
                try self.applyEdit(request, sessionID: id, hint: &hint, into: &w)
                return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .buffer(w.finish()))
            }
        case (.sessionLayout(let id), _):
            return collect(head, route: label, started: started) { try self.changeLayout(of: id, hint: session, body: $0) }
        case (.sessionResync(let id), _):
            return collect(head, route: label, started: started) { try self.resync(id, hint: session, body: $0) }
        case (.sessionSocket(let id), _):
            return openSocket(head, sessionID: id, hint: session, route: label, started: started)
        case (.sessionViewport(let id), _):
            if media == .ndjson {
                let sink = UpdateStreamSink(sessionID: id, hint: session, handler: self) { status in
                    self.record(status: status, head: head, route: label, started: started)
                }
                return .stream(maxBytes: maxBodyBytes, sink: sink)
            }
            // What `collect` does, in one closure: the hot request allocates one context, not two
            // (the body's closure inside the recording one).
            return .collect(maxBytes: maxBodyBytes) { body in
                let response: HTTPResponse
                do {
                    response = try self.updateViewport(body, sessionID: id, hint: session)
                } catch {
                    response = error.problem.response
                }
                return self.record(response, head: head, route: label, started: started)
            }
        }
    }

    /// `POST /v1/sessions/{id}/viewport` with a JSON body: the plan.
    private func updateViewport(_ body: [UInt8], sessionID id: String, hint session: SessionHandle?) throws -> HTTPResponse {
        let update = try body.withUnsafeBytes { bytes throws(Problem) in
            do { return try UpdateRequest.decode(bytes) } catch { throw error.problem }
        }
        // Most plans fit in 2 KiB (a full-screen jump of 15 rows is 1.3 KB): one
        // allocation, no regrowth; the server sends the writer's buffer without a copy.
        var w = JSONWriter(capacity: 2048)
        var hint = session
        try apply(update, sessionID: id, hint: &hint, into: &w)
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .buffer(w.finish()))
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
        record(status: response.status, head: head, route: route, started: started)
        return response
    }

    /// Counts a request's answer and, at debug level, logs it when it is an error.
    private func record(status: Int, head: HTTPRequestHead, route: String, started: Int64) {
        metrics.recordRequest(route: route, method: head.method, status: status, nanoseconds: Monotonic.nanoseconds() - started)
        if status >= 400 {
            logger.debug("\(head.method) \(head.path) → \(status)")
        }
    }

    /// An answer the HTTP layer sends for the handler (a body too large, the body budget full,
    /// shutting down): counted and logged like the handler's own.
    private func recordLayerAnswer(_ head: HTTPRequestHead, status: Int) {
        record(status: status, head: head, route: Route(path: head.path)?.template ?? "unmatched", started: Monotonic.nanoseconds())
    }

    // MARK: Endpoints

    /// `GET /v1/sessions/{id}/socket`: the WebSocket handshake (426/400 when it is not one), then
    /// a ``SessionSocket`` answers each message. Confirms the subprotocol `viewportd.v1` when
    /// offered, never `bearer.…`.
    private func openSocket(_ head: HTTPRequestHead, sessionID: String, hint: SessionHandle?, route: String, started: Int64) -> HTTPRequestAction {
        switch WebSocketHandshake.validate(head) {
        case .failure(let error):
            var response = Problem(status: error.status, detail: error.message).response
            response.headers += error.headers
            return .respond(record(response, head: head, route: route, started: started))
        case .success(let handshake):
            let subprotocol = handshake.offeredProtocols.contains(SessionSocket.subprotocol) ? SessionSocket.subprotocol : nil
            metrics.recordRequest(route: route, method: head.method, status: 101, nanoseconds: Monotonic.nanoseconds() - started)
            let socket = SessionSocket(sessionID: sessionID, hint: hint, handler: self, route: route)
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
        let layout = try decodingLayoutBody(body, layoutIn: nil) {
            try JSONReader.read(body) { r in
                let layout = try LayoutDecoder(maxItems: maxItems).decodeDeferringInvalid(&r)
                try r.finish()
                return try layout.get()
            }
        }
        let (stored, created) = try layouts.store(layout, retain: false)
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(stored, sessions: nil, into: &w)
        return HTTPResponse(
            status: created ? 201 : 200,
            headers: [("Content-Type", "application/json"), ("Location", "/v1/layouts/\(stored.digest)")], body: .bytes(w.bytes))
    }

    private func getLayout(_ id: String) throws(Problem) -> HTTPResponse {
        guard let (layout, count) = try layouts.lookup(id: id) else { throw Problem.notFound("layout \(id) does not exist") }
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(layout, sessions: count, into: &w)
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
    }

    private func openSession(_ body: [UInt8]) throws -> HTTPResponse {
        var request = try decodingLayoutBody(body, layoutIn: "layout") { try SessionRequest.decode(body, maxItems: maxItems) }
        request.configuration.maxViews = maxViews
        do {
            try request.configuration.validate()
        } catch {
            throw Problem.invalid(error.description)
        }
        let layout = try retainLayout(request.layout)
        let session: ViewportSession
        do {
            session = try ViewportSession(layout: layout, configuration: try request.resolvedConfiguration(in: layout))
        } catch {
            layouts.release(id: layout.digest)
            throw error.problem
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

    private func changeLayout(of id: String, hint: SessionHandle?, body: [UInt8]) throws -> HTTPResponse {
        let request = try decodingLayoutBody(body, layoutIn: "layout") { try LayoutChangeRequest.decode(body, maxItems: maxItems) }
        // The problems' order puts the session's 404 before what the body names (a layout id's
        // 422), and 422 and 409 before 429, which storing an inline layout can answer when the
        // layout table is full: so the session is found first and, for an inline layout, its
        // checks run (a retry answered, applying nothing) before the layout is stored.
        let retry = try sessions.withSession(id, hint: hint) { (session) throws(Problem) -> SessionChange<[UInt8]?> in
            guard case .inline = request.layout else { return SessionChange(result: nil, changed: false) }
            let plan: Plan?
            do throws(SessionError) {
                plan = try session.checkLayoutChange(seq: request.seq)
            } catch {
                throw conflict(error, session: session)
            }
            guard let plan else { return SessionChange(result: nil, changed: false) }
            var w = JSONWriter(capacity: 512)
            PlanEncoder.encode(plan, layout: session.layout, into: &w)
            return SessionChange(result: w.bytes, changed: false)
        }.result
        if let retry { return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(retry)) }
        let layout = try retainLayout(request.layout)
        let outcome: Result<(Plan, Layout, String?), Problem>
        do throws(Problem) {
            outcome = .success(try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
                let before = session.seq
                let previous = session.layout.digest
                let plan: Plan
                do throws(SessionError) {
                    plan = try session.changeLayout(to: layout, anchor: request.anchor, seq: request.seq)
                } catch {
                    throw conflict(error, session: session)
                }
                // A retry applies nothing: the session keeps the layout it has.
                let applied = session.seq != before
                return SessionChange(result: (plan, session.layout, applied ? previous : nil), changed: applied)
            }.result)
        } catch {
            outcome = .failure(error)
        }
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

    /// Decodes a body that holds a layout (`field` names the key that holds it; nil: the body is
    /// the layout). A 400 becomes a 413 when the layout has more items than allowed too: 413
    /// comes first in the problems' order, whatever the order of the body's keys (see
    /// ``LayoutSizeProbe``, which runs only on this error path).
    private func decodingLayoutBody<R>(_ body: [UInt8], layoutIn field: StaticString?, _ decode: () throws -> R) throws -> R {
        do {
            return try decode()
        } catch {
            let problem = error.problem
            guard problem.status == 400, LayoutSizeProbe.exceedsLimit(body, layoutIn: field, maxItems: maxItems) else { throw error }
            throw Problem.tooLarge("\(field.map { "\($0)" } ?? "layout"): more than \(maxItems) items (layouts.maxItems); the body has this problem too: \(problem.detail)")
        }
    }

    /// The layout a body names, counted as used by one more session: a stored one by id (422 when
    /// unknown) or an inline one, stored.
    private func retainLayout(_ reference: LayoutReference) throws(Problem) -> Layout {
        switch reference {
        case .id(let id):
            guard let found = try layouts.retain(id: id) else { throw Problem.invalid("layout: no stored layout has the id \"\(id)\"") }
            return found
        case .inline(let inline):
            return try layouts.store(inline, retain: true).layout
        }
    }

    private func getSession(_ id: String, hint: SessionHandle?) throws(Problem) -> HTTPResponse {
        let bytes = try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            var w = JSONWriter(capacity: 1024)
            PlanEncoder.encodeState(session, id: id, into: &w)
            return SessionChange(result: w.bytes, changed: false)
        }.result
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(bytes))
    }

    /// `POST /v1/sessions/{id}/resync`: the session adopts the views the client says it has, and
    /// answers its state as `GET` does.
    private func resync(_ id: String, hint: SessionHandle?, body: [UInt8]) throws -> HTTPResponse {
        let request = try ResyncRequest.decode(body)
        let bytes = try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            let state = try request.resolve(in: session.layout)
            do {
                try session.resync(state)
            } catch {
                throw error.problem
            }
            var w = JSONWriter(capacity: 1024)
            PlanEncoder.encodeState(session, id: id, into: &w)
            return SessionChange(result: w.bytes, changed: true)
        }.result
        metrics.countResync()
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(bytes))
    }

    /// A session error as a problem; with a shared store, a `seq` ahead of the session's says
    /// `"resync": true` (the session may have lost updates with a crashed instance).
    func conflict(_ error: SessionError, session: ViewportSession) -> Problem {
        var problem = error.problem
        if sharedStore, case .sequenceConflict(let current, let sent) = error, sent > current &+ 1, sent != SessionError.seqBelowZero {
            problem.resync = true
            problem.detail += "; the session is behind this client (an instance that held it stopped): POST /v1/sessions/{id}/resync with the views you have"
        }
        return problem
    }

    /// Applies one update to a session under its lock and writes the plan. `hint` is the
    /// session's handle if known, and is updated (a stream applies many updates to one session).
    /// On an error nothing is written (what the plan had written is taken back).
    ///
    /// The plan is encoded inside the lock, so it never leaves the closure: a plan is a dozen
    /// arrays, and handing it out through the repository's generic result cost a copy, generic
    /// metadata lookups and ~20 retains and releases per update (a fifth of an NDJSON line's time
    /// on small steps, `perf`).
    func apply(_ request: UpdateRequest, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        let mark = w.count
        var counts = (created: 0, reused: 0)
        func update<Store: SessionRepository>(in store: Store) throws(Problem) -> (result: Bool, handle: SessionHandle) {
            try store.withSession(sessionID, hint: hint) { (session) throws(Problem) -> SessionChange<Bool> in
                let before = session.seq
                let plan: Plan
                do {
                    let update = try request.resolve(in: session.layout)
                    plan = try session.apply(update)
                } catch let error as SessionError {
                    throw conflict(error, session: session)
                } catch {
                    throw error.problem
                }
                let applied = session.seq != before
                PlanEncoder.encode(plan, layout: session.layout, into: &w)
                counts = (plan.createCount, plan.reuseCount)
                return SessionChange(result: applied, changed: applied)
            }
        }
        do throws(Problem) {
            let (applied, handle) = if let localSessions { try update(in: localSessions) } else { try update(in: sessions) }
            hint = handle
            if applied { metrics.count(created: counts.created, reused: counts.reused) }
        } catch {
            w.truncate(to: mark)
            throw error
        }
    }

    /// Applies one edit of a session's layout (PATCH, or a stream's `patch`) under the session's
    /// lock and writes the plan. `hint` as for ``apply(_:sessionID:hint:into:)``.
    func applyEdit(_ request: LayoutEditRequest, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        let (outcome, handle) = try sessions.withSession(sessionID, hint: hint) { (session) throws(Problem) in
            let before = session.seq
            let plan: Plan
            do throws(SessionError) {
                plan = try session.apply(request.edit, anchor: request.anchor, seq: request.seq, maxItems: maxItems)
            } catch {
                throw conflict(error, session: session)
            }
            let applied = session.seq != before
            return SessionChange(result: (plan, session.layout, applied), changed: applied)
        }
        hint = handle
        let (plan, layout, applied) = outcome
        if applied { count(plan) }
        PlanEncoder.encode(plan, layout: layout, into: &w)
    }

    /// Applies one line of a stream or one WebSocket message: an update or an edit.
    func apply(_ message: StreamMessage, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        switch message {
        case .update(let update): try apply(update, sessionID: sessionID, hint: &hint, into: &w)
        case .patch(let edit): try applyEdit(edit, sessionID: sessionID, hint: &hint, into: &w)
        }
    }

    /// `GET /v1/sessions/{id}/layout`: the session's current layout (LayoutEncoder), written
    /// outside the session's lock (a layout version never changes).
    private func getSessionLayout(_ id: String, hint: SessionHandle?) throws(Problem) -> HTTPResponse {
        let layout = try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            SessionChange(result: session.layout, changed: false)
        }.result
        var w = JSONWriter(capacity: 64 + layout.count * 24)
        LayoutEncoder.encode(layout, into: &w)
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(w.bytes))
    }

    private func count(_ plan: Plan) {
        metrics.count(created: plan.createCount, reused: plan.reuseCount)
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
        // Whitespace around a field value is not part of it (RFC 9110 §5.5), nor is more than
        // one space after the scheme (RFC 7235 §2.1: `1*SP`); a token has none (RFC 6750's `b64token`).
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return bytes }
        var start = scheme.count
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        guard start > scheme.count else { return bytes }  // `Bearerabc`: not this scheme
        return Array("Bearer ".utf8) + bytes[start...]
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
        if let store = self as? StoreFailure { return store.problem }
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
