/// The API's path patterns: the rows of ``RouteTable``.
enum RoutePattern: Int, CaseIterable, Sendable {
    case healthz
    /// `GET /readyz`: 200 while the instance can serve (its shared store answers), else 503.
    case readyz
    case metrics
    /// `GET /openapi.json`: the OpenAPI document of API v1.
    case openapi
    /// `GET /client/viewportd.js`: the browser client, an ES module.
    case clientModule
    /// `GET /demo`: a page that scrolls a 100,000-item feed through the browser client.
    case demo
    case layouts
    case layout
    case sessions
    case session
    case sessionViewport
    case sessionLayout
    /// `GET /v1/sessions/{id}/socket`: a WebSocket of viewport updates and their plans.
    case sessionSocket
    /// `POST /v1/sessions/{id}/resync`: the session adopts the client's views.
    case sessionResync

    /// The path template, used as the metrics label.
    var template: String {
        switch self {
        case .healthz: return "/healthz"
        case .readyz: return "/readyz"
        case .metrics: return "/metrics"
        case .openapi: return "/openapi.json"
        case .clientModule: return "/client/viewportd.js"
        case .demo: return "/demo"
        case .layouts: return "/v1/layouts"
        case .layout: return "/v1/layouts/{id}"
        case .sessions: return "/v1/sessions"
        case .session: return "/v1/sessions/{id}"
        case .sessionViewport: return "/v1/sessions/{id}/viewport"
        case .sessionLayout: return "/v1/sessions/{id}/layout"
        case .sessionSocket: return "/v1/sessions/{id}/socket"
        case .sessionResync: return "/v1/sessions/{id}/resync"
        }
    }

    /// What the `{id}` names, looked up before the method is checked (404 before 405).
    enum Subject { case none, layout, session }

    var subject: Subject {
        switch self {
        case .layout: return .layout
        case .session, .sessionViewport, .sessionLayout, .sessionSocket, .sessionResync: return .session
        default: return .none
        }
    }

    /// Whether health checks reach it without the token.
    var isPublic: Bool { self == .healthz || self == .readyz }
}
