#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The API's paths. Ids in paths are taken as they are (no percent-decoding: ids viewportd hands
/// out are plain hex).
enum Route: Equatable, Sendable {
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
    case layout(id: String)
    case sessions
    case session(id: String)
    case sessionViewport(id: String)
    case sessionLayout(id: String)
    /// `GET /v1/sessions/{id}/socket`: a WebSocket of viewport updates and their plans.
    case sessionSocket(id: String)
    /// `POST /v1/sessions/{id}/resync`: the session adopts the client's views.
    case sessionResync(id: String)

    /// Parses a request path. Runs on every request: it scans the UTF-8 bytes once and makes one
    /// string at most (the id).
    init?(path: String) {
        var path = path
        guard let route = path.withUTF8({ Route.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = route
    }

    private static func parse(_ p: UnsafeRawBufferPointer) -> Route? {
        // Up to four segments between "/"s; empty ones ("//", a trailing "/") are not a path of
        // ours. Kept in locals, not an array: this runs on every request.
        guard p.first == UInt8(ascii: "/") else { return nil }
        var segments = Segments()
        var start = 1
        for i in 1...p.count where i == p.count || p[i] == UInt8(ascii: "/") {
            guard i > start, segments.count < 4 else { return nil }
            segments.append(start..<i)
            start = i + 1
        }
        // A constant for the local functions below: capturing the variable boxed it, with a
        // dynamic exclusivity check (swift_beginAccess) on every read.
        let found = segments
        func segment(_ k: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: p[found[k]]) }
        func equals(_ k: Int, _ literal: StaticString) -> Bool {
            let bytes = segment(k)
            guard bytes.count == literal.utf8CodeUnitCount, let start = bytes.baseAddress else { return false }
            return memcmp(start, literal.utf8Start, bytes.count) == 0
        }
        func string(_ k: Int) -> String { String(decoding: segment(k), as: UTF8.self) }
        switch found.count {
        case 1:
            if equals(0, "healthz") { return .healthz }
            if equals(0, "readyz") { return .readyz }
            if equals(0, "metrics") { return .metrics }
            if equals(0, "openapi.json") { return .openapi }
            if equals(0, "demo") { return .demo }
            return nil
        case 2:
            if equals(0, "client") && equals(1, "viewportd.js") { return .clientModule }
            guard equals(0, "v1") else { return nil }
            if equals(1, "layouts") { return .layouts }
            if equals(1, "sessions") { return .sessions }
            return nil
        case 3:
            guard equals(0, "v1") else { return nil }
            if equals(1, "layouts") { return .layout(id: string(2)) }
            if equals(1, "sessions") { return .session(id: string(2)) }
            return nil
        case 4:
            guard equals(0, "v1"), equals(1, "sessions") else { return nil }
            if equals(3, "viewport") { return .sessionViewport(id: string(2)) }
            if equals(3, "layout") { return .sessionLayout(id: string(2)) }
            if equals(3, "socket") { return .sessionSocket(id: string(2)) }
            if equals(3, "resync") { return .sessionResync(id: string(2)) }
            return nil
        default:
            return nil
        }
    }

    /// Up to four segments of a path, in place rather than in an array (parsed on every request).
    private struct Segments {
        private(set) var count = 0
        private var ranges: (Range<Int>, Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0, 0..<0)

        mutating func append(_ range: Range<Int>) {
            switch count {
            case 0: ranges.0 = range
            case 1: ranges.1 = range
            case 2: ranges.2 = range
            default: ranges.3 = range
            }
            count += 1
        }

        subscript(k: Int) -> Range<Int> {
            switch k {
            case 0: ranges.0
            case 1: ranges.1
            case 2: ranges.2
            default: ranges.3
            }
        }
    }

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

    /// Whether `HEAD` is answered (as `GET` without the body): every path that answers `GET`
    /// but the WebSocket, whose `GET` is a handshake.
    var answersHead: Bool { allowedMethods.contains("GET") && !isSessionSocket }

    /// Methods the path answers, for 405's `Allow`.
    var allowedMethods: [String] {
        switch self {
        case .healthz, .readyz, .metrics, .openapi, .clientModule, .demo, .layout, .sessionSocket: return ["GET"]
        case .layouts, .sessions, .sessionViewport, .sessionResync: return ["POST"]
        case .session: return ["GET", "DELETE"]
        case .sessionLayout: return ["GET", "PUT", "PATCH"]
        }
    }
}
