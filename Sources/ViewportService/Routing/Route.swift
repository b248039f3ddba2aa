#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request path matched to one of the API's path patterns, with the id it names. Ids in paths
/// are taken as they are (no percent-decoding: ids viewportd hands out are plain hex).
struct Route: Sendable {
    let pattern: RoutePattern
    /// The `{id}` segment; empty for a pattern without one.
    let id: String

    init(_ pattern: RoutePattern, id: String = "") {
        self.pattern = pattern
        self.id = id
    }

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
            if equals(0, "healthz") { return Route(.healthz) }
            if equals(0, "readyz") { return Route(.readyz) }
            if equals(0, "metrics") { return Route(.metrics) }
            if equals(0, "openapi.json") { return Route(.openapi) }
            if equals(0, "demo") { return Route(.demo) }
            return nil
        case 2:
            if equals(0, "client") && equals(1, "viewportd.js") { return Route(.clientModule) }
            guard equals(0, "v1") else { return nil }
            if equals(1, "layouts") { return Route(.layouts) }
            if equals(1, "sessions") { return Route(.sessions) }
            return nil
        case 3:
            guard equals(0, "v1") else { return nil }
            if equals(1, "layouts") { return Route(.layout, id: string(2)) }
            if equals(1, "sessions") { return Route(.session, id: string(2)) }
            return nil
        case 4:
            guard equals(0, "v1"), equals(1, "sessions") else { return nil }
            if equals(3, "viewport") { return Route(.sessionViewport, id: string(2)) }
            if equals(3, "layout") { return Route(.sessionLayout, id: string(2)) }
            if equals(3, "socket") { return Route(.sessionSocket, id: string(2)) }
            if equals(3, "resync") { return Route(.sessionResync, id: string(2)) }
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
}
