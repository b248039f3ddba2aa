import ViewportCore
import ViewportHTTP
import ViewportOpenAPI

/// API v1's routes: for each path pattern, the methods it answers (in the order `Allow` lists
/// them) and what each does, which is to decode the body, call the ``SessionService`` and make
/// the HTTP answer. ``APIHandler`` checks a request's head, then runs the action it finds here.
///
/// Built once per handler, for the session repository's concrete type: the actions are
/// specialized closures, so the hot path never goes through the repository's protocol.
struct RouteTable: Sendable {
    typealias Action = @Sendable (RouteRequest) throws -> RouteAnswer
    /// Answers a whole body; its errors become problems.
    typealias BodyAction = @Sendable (RouteRequest, [UInt8]) throws -> HTTPResponse

    struct Endpoint: Sendable {
        let method: String
        let action: Action

        init(_ method: String, _ action: @escaping Action) {
            self.method = method
            self.action = action
        }

        /// An endpoint that reads the whole body, then answers.
        init(_ method: String, body: @escaping BodyAction) {
            self.init(method) { request in .collect(request, body) }
        }
    }

    /// Endpoints by `RoutePattern.rawValue`.
    private let rows: [[Endpoint]]

    /// The endpoints of a pattern.
    func endpoints(_ pattern: RoutePattern) -> [Endpoint] { rows[pattern.rawValue] }

    init<Sessions>(service: SessionService<Sessions>, maxBodyBytes: Int) {
        let messages = SessionMessages(service)
        var rows = [[Endpoint]](repeating: [], count: RoutePattern.allCases.count)
        rows[RoutePattern.healthz.rawValue] = [
            Endpoint("GET") { _ in
                // With a shared store, whether it answers (the process itself is fine either way).
                let up = service.sessions.storeIsUp
                return .response(Self.json(200, up.map { #"{"status":"ok","store":"\#($0 ? "ok" : "unavailable")"}"# } ?? #"{"status":"ok"}"#))
            }
        ]
        rows[RoutePattern.readyz.rawValue] = [
            Endpoint("GET") { _ in
                let state = service.sessions.storeIsUp
                let up = state ?? true
                var response = Self.json(
                    up ? 200 : 503, state.map { #"{"status":"\#($0 ? "ok" : "unavailable")","store":"\#($0 ? "ok" : "unavailable")"}"# } ?? #"{"status":"ok"}"#)
                if !up { response.headers.append(("Retry-After", "1")) }
                return .response(response)
            }
        ]
        rows[RoutePattern.metrics.rawValue] = [
            Endpoint("GET") { _ in
                let body = service.metrics.render(sessions: service.sessions.count, layouts: service.layouts.count, storeIsUp: service.sessions.storeIsUp)
                return .response(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: .bytes(body)))
            }
        ]
        rows[RoutePattern.openapi.rawValue] = [
            Endpoint("GET") { _ in .response(HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .bytes(OpenAPIDocument.bytes))) }
        ]
        rows[RoutePattern.clientModule.rawValue] = [Endpoint("GET") { _ in .response(ClientAssets.module) }]
        rows[RoutePattern.demo.rawValue] = [Endpoint("GET") { _ in .response(ClientAssets.demo) }]
        rows[RoutePattern.layouts.rawValue] = [
            Endpoint("POST") { _, body in
                let layout = try Self.decodingLayoutBody(body, layoutIn: nil, maxItems: service.maxItems) {
                    try JSONReader.read(body) { r in
                        let layout = try LayoutDecoder(maxItems: service.maxItems).decodeDeferringInvalid(&r)
                        try r.finish()
                        return try layout.get()
                    }
                }
                let (id, created, info) = try service.store(layout)
                return HTTPResponse(
                    status: created ? 201 : 200, headers: [("Content-Type", "application/json"), ("Location", "/v1/layouts/\(id)")], body: .bytes(info))
            }
        ]
        rows[RoutePattern.layout.rawValue] = [
            Endpoint("GET") { request in .response(Self.json(200, try service.layoutInfo(request.id))) }
        ]
        rows[RoutePattern.sessions.rawValue] = [
            Endpoint("POST") { _, body in
                let decoded = try Self.decodingLayoutBody(body, layoutIn: "layout", maxItems: service.maxItems) {
                    try SessionRequest.decode(body, maxItems: service.maxItems)
                }
                let (id, opened) = try service.open(decoded)
                return HTTPResponse(status: 201, headers: [("Content-Type", "application/json"), ("Location", "/v1/sessions/\(id)")], body: .bytes(opened))
            }
        ]
        rows[RoutePattern.session.rawValue] = [
            Endpoint("GET") { request in .response(Self.json(200, try service.state(of: request.id, hint: request.hint))) },
            Endpoint("DELETE") { request in
                try service.end(request.id)
                return .response(HTTPResponse(status: 204))
            },
        ]
        // Made once: the hot request's action forms no closure of its own.
        let updateViewport: BodyAction = { request, body in
            let update = try body.withUnsafeBytes { bytes throws(Problem) in
                do { return try UpdateRequest.decode(bytes) } catch { throw error.problem }
            }
            // Most plans fit in 2 KiB (a full-screen jump of 15 rows is 1.3 KB): one allocation,
            // no regrowth; the server sends the writer's buffer without a copy.
            var w = JSONWriter(capacity: 2048)
            var hint = request.hint
            try service.apply(update, sessionID: request.id, hint: &hint, into: &w)
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .buffer(w.finish()))
        }
        rows[RoutePattern.sessionViewport.rawValue] = [
            Endpoint("POST") { request in
                guard request.media == .ndjson else { return .collect(request, updateViewport) }
                return .stream(UpdateStreamSink(sessionID: request.id, hint: request.hint, messages: messages, maxBodyBytes: maxBodyBytes))
            }
        ]
        rows[RoutePattern.sessionLayout.rawValue] = [
            Endpoint("GET") { request in
                let layout = try service.layout(of: request.id, hint: request.hint)
                var w = JSONWriter(capacity: 64 + layout.count * 24)
                LayoutEncoder.encode(layout, into: &w)
                return .response(Self.json(200, w.bytes))
            },
            Endpoint("PUT") { request, body in
                let change = try Self.decodingLayoutBody(body, layoutIn: "layout", maxItems: service.maxItems) {
                    try LayoutChangeRequest.decode(body, maxItems: service.maxItems)
                }
                return Self.json(200, try service.changeLayout(of: request.id, hint: request.hint, to: change))
            },
            Endpoint("PATCH") { request, body in
                let edit = try body.withUnsafeBytes { bytes throws(Problem) in
                    do { return try LayoutEditRequest.decode(bytes) } catch { throw error.problem }
                }
                var w = JSONWriter(capacity: 2048)
                var hint = request.hint
                try service.edit(edit, sessionID: request.id, hint: &hint, into: &w)
                return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: .buffer(w.finish()))
            },
        ]
        rows[RoutePattern.sessionSocket.rawValue] = [
            Endpoint("GET") { request in Self.openSocket(request, messages: messages, maxBodyBytes: maxBodyBytes, metrics: service.metrics) }
        ]
        rows[RoutePattern.sessionResync.rawValue] = [
            Endpoint("POST") { request, body in
                Self.json(200, try service.resync(request.id, hint: request.hint, with: try ResyncRequest.decode(body)))
            }
        ]
        self.rows = rows
    }

    /// `GET /v1/sessions/{id}/socket`: the WebSocket handshake (426/400 when it is not one), then
    /// a ``SessionSocket`` answers each message. Confirms the subprotocol `viewportd.v1` when
    /// offered, never `bearer.…`.
    private static func openSocket(_ request: RouteRequest, messages: SessionMessages, maxBodyBytes: Int, metrics: ServiceMetrics) -> RouteAnswer {
        switch WebSocketHandshake.validate(request.head) {
        case .failure(let error):
            var response = Problem(status: error.status, detail: error.message).response
            response.headers += error.headers
            return .response(response)
        case .success(let handshake):
            let subprotocol = handshake.offeredProtocols.contains(SessionSocket.subprotocol) ? SessionSocket.subprotocol : nil
            let socket = SessionSocket(
                sessionID: request.id, hint: request.hint, messages: messages, metrics: metrics, route: RoutePattern.sessionSocket.template)
            return .webSocket(WebSocketAcceptance(handshake: handshake, subprotocol: subprotocol, maxMessageBytes: maxBodyBytes, handler: socket))
        }
    }

    /// Decodes a body that holds a layout (`field` names the key that holds it; nil: the body is
    /// the layout). A 400 becomes a 413 when the layout has more items than allowed too: 413
    /// comes first in the problems' order, whatever the order of the body's keys (see
    /// ``LayoutSizeProbe``, which runs only on this error path).
    private static func decodingLayoutBody<R>(_ body: [UInt8], layoutIn field: StaticString?, maxItems: Int, _ decode: () throws -> R) throws -> R {
        do {
            return try decode()
        } catch {
            let problem = error.problem
            guard problem.status == 400, LayoutSizeProbe.exceedsLimit(body, layoutIn: field, maxItems: maxItems) else { throw error }
            throw Problem.tooLarge("\(field.map { "\($0)" } ?? "layout"): more than \(maxItems) items (layouts.maxItems); the body has this problem too: \(problem.detail)")
        }
    }

    /// Shared, so a response does not build its header list each time.
    static let jsonHeaders: [(name: String, value: String)] = [("Content-Type", "application/json")]

    static func json(_ status: Int, _ body: String) -> HTTPResponse {
        json(status, Array(body.utf8))
    }

    static func json(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: jsonHeaders, body: .bytes(body))
    }
}

/// A request whose head passed ``APIHandler``'s checks, as a route's action sees it.
struct RouteRequest: Sendable {
    let head: HTTPRequestHead
    /// The path's `{id}`; empty when it has none.
    let id: String
    /// The session's handle here, when the path names a session held by this instance.
    let hint: SessionHandle?
    let media: MediaType
}

/// What a route's action answers. ``APIHandler`` turns it into the HTTP layer's action and
/// records the request's outcome around it.
enum RouteAnswer {
    case response(HTTPResponse)
    /// Read the whole body, then answer the action's response (or its problem).
    case collect(RouteRequest, RouteTable.BodyAction)
    /// An NDJSON stream of updates, answered line by line.
    case stream(UpdateStreamSink)
    /// A WebSocket: `101 Switching Protocols`, then one ``SessionSocket``.
    case webSocket(WebSocketAcceptance)
}
