import Logging
import ViewportCore
import ViewportHTTP

/// API v1 over the HTTP layer: checks a request's head in the order of precedence of docs/api.md
/// "Errors" (401, 404, 405, 415; the HTTP layer does 413), runs the ``RouteTable``'s action for
/// its path and method, and records the request's outcome around the action it answers.
final class APIHandler: HTTPHandler {
    let layouts: any LayoutRepository
    let sessions: any SessionRepository
    private let routes: RouteTable
    let metrics: ServiceMetrics
    let maxBodyBytes: Int
    /// `Bearer <token>` as bytes, when auth is on.
    private let expectedAuthorization: [UInt8]?
    /// `bearer.<token>` as bytes, when auth is on: the WebSocket subprotocol that stands in for
    /// the header (browsers cannot set headers on a WebSocket).
    private let expectedBearerProtocol: [UInt8]?
    let logger: Logger
    /// With a shared store: requests that need a round trip to it are answered off the HTTP
    /// workers (``HTTPAnswer/deferred(_:)``), so that a slow store holds none of them.
    private let defersStoreWork: Bool

    /// A handler with fresh stores sized and timed by `configuration` (in-process, or in front of
    /// the shared store of `store.url`).
    convenience init(configuration: ServiceConfiguration, metrics: ServiceMetrics, logger: Logger) {
        self.init(configuration: configuration, repositories: .make(configuration, metrics: metrics, logger: logger), metrics: metrics, logger: logger)
    }

    init(configuration: ServiceConfiguration, repositories: Repositories, metrics: ServiceMetrics, logger: Logger) {
        self.layouts = repositories.layouts
        self.sessions = repositories.sessionRepository
        self.metrics = metrics
        self.maxBodyBytes = configuration.http.maxBodyBytes
        self.expectedAuthorization = configuration.authToken.map { Array("Bearer \($0)".utf8) }
        self.expectedBearerProtocol = configuration.authToken.map { Array("\(SessionSocket.bearerPrefix)\($0)".utf8) }
        self.logger = logger
        self.defersStoreWork = repositories.shared
        func routes<Sessions: SessionRepository>(_ sessions: Sessions) -> RouteTable {
            let service = SessionService(
                layouts: repositories.layouts, sessions: sessions, sharedStore: repositories.shared, metrics: metrics,
                maxItems: configuration.layouts.maxItems, maxViews: configuration.sessions.maxViews)
            return RouteTable(service: service, maxBodyBytes: configuration.http.maxBodyBytes)
        }
        // Each case builds the routes for its store's own type.
        switch repositories.sessions {
        case .local(let store): self.routes = routes(store)
        case .shared(let store): self.routes = routes(store)
        }
    }

    // MARK: HTTPHandler

    func begin(_ head: HTTPRequestHead) -> HTTPRequestAction {
        let started = Monotonic.nanoseconds()
        let route = Route(path: head.path)
        if let route, needsStore(head, route: route) {
            // The body (if any) is collected on the worker, which waits for nothing; the rest
            // (the head's checks included: a 404 may need the store) runs on a store thread.
            return .deferrable(maxBytes: maxBodyBytes) { body in
                .deferred { self.answerWithStore(head, route: route, body: body, started: started) }
            }
        }
        let answer: RouteAnswer
        do {
            answer = try self.answer(head, route: route)
        } catch {
            answer = .response(error.response)
        }
        return recording(answer, head: head, pattern: route?.pattern, started: started)
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

    // MARK: Requests that need the store

    /// Whether a request's head checks may need a round trip to the shared store (a session not
    /// held here, a layout), or its action has no body to wait for (DELETE), judged without
    /// waiting for anything. NDJSON streams and WebSockets stay on the worker (their lines and
    /// messages are answered where they arrive), and so does a request with a body too large
    /// (answered 404 or 413 at once, as without a store). Requests with a body whose checks need
    /// no store are sent to a store thread after the body (``recording(_:head:pattern:started:)``).
    private func needsStore(_ head: HTTPRequestHead, route: Route) -> Bool {
        guard defersStoreWork, head.contentLength.map({ $0 <= maxBodyBytes }) ?? true, isAuthorized(head, route: route) else { return false }
        switch route.pattern.subject {
        case .layout:
            return true
        case .session:
            if route.pattern == .sessionSocket { return false }
            if route.pattern == .sessionViewport && MediaType(contentType: head.header("Content-Type")) == .ndjson { return false }
            return head.method == "DELETE" || !sessions.answersFromMemory(route.id, hint: nil)
        case .none:
            return false
        }
    }

    /// A request sent off the worker: the head's checks, the route's action and its body, on a
    /// store thread; recorded like any other.
    private func answerWithStore(_ head: HTTPRequestHead, route: Route, body: [UInt8], started: Int64) -> HTTPResponse {
        let response: HTTPResponse
        do {
            switch try answer(head, route: route) {
            case .response(let answered): response = answered
            case .collect(let request, let action): response = try action(request, body)
            case .stream, .webSocket:
                // Not sent here (``needsStore(_:route:)``).
                response = Problem(status: 500, detail: "\(head.method) \(head.path) cannot be answered off the HTTP workers").response
            }
        } catch {
            response = error.response
        }
        record(status: response.status, head: head, route: route.pattern.template, started: started)
        return response
    }

    func deferredWorkRefused(_ head: HTTPRequestHead) -> HTTPResponse {
        recordLayerAnswer(head, status: 503)
        var problem = Problem(
            status: 503,
            detail: "too many requests are waiting for the shared store (store.requestThreads); retry shortly")
        problem.retryAfter = 1
        return problem.response
    }

    // MARK: Checks

    /// Whether the head carries the token (or the route is public, or auth is off).
    private func isAuthorized(_ head: HTTPRequestHead, route: Route?) -> Bool {
        guard route?.pattern.isPublic != true, let expected = expectedAuthorization else { return true }
        let header = head.header("Authorization").map { Self.constantTimeEquals(Self.normalizingScheme($0), expected) } ?? false
        return header || (route?.pattern == .sessionSocket && offersBearerProtocol(head))
    }

    /// The head's checks, then the action of its route and method.
    private func answer(_ head: HTTPRequestHead, route: Route?) throws -> RouteAnswer {
        let isSocket = route?.pattern == .sessionSocket
        guard isAuthorized(head, route: route) else {
            let alternative = isSocket ? " (or the WebSocket subprotocol \"bearer.<token>\")" : ""
            throw Problem(status: 401, detail: "Authorization: a valid \"Bearer <token>\" header is required\(alternative)")
        }
        guard let route else { throw Problem.notFound("path \(head.path) does not exist") }
        // 404 for ids in the path before 405 for the method.
        var hint: SessionHandle?
        switch route.pattern.subject {
        case .layout:
            guard try layouts.lookup(id: route.id) != nil else { throw Problem.notFound("layout \(route.id) does not exist") }
        case .session:
            let location = try sessions.locate(route.id)
            guard location.exists else { throw SessionStore.notFound(route.id) }
            hint = location.handle
        case .none:
            break
        }
        let endpoints = routes.endpoints(route.pattern)
        // HEAD is answered as GET (libmicrohttpd sends the head without the body), on every path
        // that answers GET but the socket; `Allow` keeps listing the contract's methods.
        let method = head.method == "HEAD" && !isSocket && endpoints.contains(where: { $0.method == "GET" }) ? "GET" : head.method
        guard let endpoint = endpoints.first(where: { $0.method == method }) else {
            let allowed = endpoints.map(\.method).joined(separator: ", ")
            var problem = Problem(status: 405, detail: "\(head.method) is not allowed on \(route.pattern.template); allowed: \(allowed)")
            problem.allow = allowed
            throw problem
        }
        // The usual `application/json` is recognized without making a string.
        let media = head.header("Content-Type", is: "application/json") ? MediaType.json : MediaType(contentType: head.header("Content-Type"))
        if method == "POST" || method == "PUT" || method == "PATCH" {
            let acceptsStream = route.pattern == .sessionViewport
            if case .other(let given) = media {
                throw Problem(status: 415, detail: "Content-Type \(given) is not supported; send application/json\(acceptsStream ? " or application/x-ndjson" : "")")
            }
            if media == .ndjson && !acceptsStream {
                throw Problem(status: 415, detail: "Content-Type application/x-ndjson is only accepted by /v1/sessions/{id}/viewport")
            }
        }
        return try endpoint.action(RouteRequest(head: head, id: route.id, hint: hint, media: media))
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

    // MARK: Metrics

    /// The HTTP layer's action for a route's answer, with the request's outcome recorded when it
    /// is known: at once, after the body, at the end of a stream, or at a WebSocket's 101.
    private func recording(_ answer: RouteAnswer, head: HTTPRequestHead, pattern: RoutePattern?, started: Int64) -> HTTPRequestAction {
        let route = pattern?.template ?? "unmatched"
        switch answer {
        case .response(let response):
            record(status: response.status, head: head, route: route, started: started)
            return .respond(response)
        case .collect(let request, let action) where defersStoreWork:
            // Opening a session writes it, storing a layout publishes it: on a store thread. A
            // session was here at the head; if its lease must be renewed or its changes written
            // before the answer by now, that runs on a store thread too.
            let alwaysStore = pattern == .sessions || pattern == .layouts
            return .deferrable(maxBytes: maxBodyBytes) { body in
                guard !alwaysStore && self.sessions.answersFromMemory(request.id, hint: request.hint) else {
                    return .deferred { self.run(action, request, body: body, route: route, started: started) }
                }
                return .response(self.run(action, request, body: body, route: route, started: started))
            }
        case .collect(let request, let action):
            // One closure context per request: the action is the table's, made once.
            return .collect(maxBytes: maxBodyBytes) { body in
                self.run(action, request, body: body, route: route, started: started)
            }
        case .stream(let sink):
            sink.onFinish = { status in self.record(status: status, head: head, route: route, started: started) }
            return .stream(maxBytes: maxBodyBytes, sink: sink)
        case .webSocket(let acceptance):
            // The handshake is the request; each message is recorded by the socket.
            metrics.recordRequest(route: route, method: head.method, status: 101, nanoseconds: Monotonic.nanoseconds() - started)
            return .webSocket(acceptance)
        }
    }

    /// A body action's response (its error's problem), recorded.
    private func run(_ action: RouteTable.BodyAction, _ request: RouteRequest, body: [UInt8], route: String, started: Int64) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try action(request, body)
        } catch {
            response = error.response
        }
        record(status: response.status, head: request.head, route: route, started: started)
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
        record(status: status, head: head, route: Route(path: head.path)?.pattern.template ?? "unmatched", started: Monotonic.nanoseconds())
    }

    // MARK: Authorization

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

extension Error {
    var response: HTTPResponse { problem.response }
}
