/// The API's paths. Ids in paths are taken as they are (no percent-decoding: ids viewportd hands
/// out are plain hex).
enum Route: Equatable, Sendable {
    case healthz
    case metrics
    /// `GET /openapi.json`: the OpenAPI document of API v1.
    case openapi
    case layouts
    case layout(id: String)
    case sessions
    case session(id: String)
    case sessionViewport(id: String)
    case sessionLayout(id: String)

    init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "/a/b" splits into ["", "a", "b"].
        guard parts.first == "", parts.count >= 2, !parts.dropFirst().contains(where: \.isEmpty) else { return nil }
        switch (parts.count, parts[1]) {
        case (2, "healthz"): self = .healthz
        case (2, "metrics"): self = .metrics
        case (2, "openapi.json"): self = .openapi
        case (3, "v1") where parts[2] == "layouts": self = .layouts
        case (3, "v1") where parts[2] == "sessions": self = .sessions
        case (4, "v1") where parts[2] == "layouts": self = .layout(id: String(parts[3]))
        case (4, "v1") where parts[2] == "sessions": self = .session(id: String(parts[3]))
        case (5, "v1") where parts[2] == "sessions" && parts[4] == "viewport": self = .sessionViewport(id: String(parts[3]))
        case (5, "v1") where parts[2] == "sessions" && parts[4] == "layout": self = .sessionLayout(id: String(parts[3]))
        default: return nil
        }
    }

    /// The path template, used as the metrics label.
    var template: String {
        switch self {
        case .healthz: return "/healthz"
        case .metrics: return "/metrics"
        case .openapi: return "/openapi.json"
        case .layouts: return "/v1/layouts"
        case .layout: return "/v1/layouts/{id}"
        case .sessions: return "/v1/sessions"
        case .session: return "/v1/sessions/{id}"
        case .sessionViewport: return "/v1/sessions/{id}/viewport"
        case .sessionLayout: return "/v1/sessions/{id}/layout"
        }
    }

    /// Methods the path answers, for 405's `Allow`.
    var allowedMethods: [String] {
        switch self {
        case .healthz, .metrics, .openapi, .layout: return ["GET"]
        case .layouts, .sessions, .sessionViewport: return ["POST"]
        case .session: return ["GET", "DELETE"]
        case .sessionLayout: return ["PUT"]
        }
    }
}
