import Foundation
import Logging
import Testing
import ViewportService
import ViewportTestSupport

// Helpers for the service tests: a real `ViewportServer` on a free loopback port, spoken to
// through its handler in process or, for tests tagged `.live`, over real HTTP with
// `HTTPTestClient` (see `TestTransport`); JSON parsed with Foundation.

/// A test server: started on 127.0.0.1, port 0, with `configure` applied; stopped by `stop()`
/// (``withService(_:_:)`` does it in a `defer`).
final class TestService: @unchecked Sendable {
    let server: ViewportServer
    let port: Int
    let token: String?
    /// How ``connect(timeout:)``'s clients reach the server (the running test's transport).
    let transport = TestTransport.current

    init(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        var c = ServiceConfiguration()
        c.http.host = "127.0.0.1"
        c.http.port = 0
        c.http.threads = 2
        // The product's default: a client connected at a test's start may idle through a long
        // set-up on a loaded machine (a big layout, a store failover) before its first request;
        // a shorter idle timeout closes it under the test. Tests of the timeout set their own.
        c.http.connectionTimeout = .seconds(30)
        c.http.drainTimeout = .seconds(5)
        configure(&c)
        token = c.authToken
        server = ViewportServer(configuration: c, logger: Logger(label: "viewportd-test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try server.start()
        port = server.port
    }

    func stop() { server.stop() }

    /// A new keep-alive connection, or in process a client of the server's handler.
    func connect(timeout: Double = 5) throws -> Client {
        switch transport {
        case .live: Client(try HTTPTestClient.connect(port: port, timeout: timeout), token: token)
        case .inProcess: Client(HandlerRequest(handler: server.handler), token: token)
        }
    }
}

/// Starts a service, runs `body`, stops it.
@discardableResult
func withService<T>(_ configure: (inout ServiceConfiguration) -> Void = { _ in }, _ body: (TestService) throws -> T) throws -> T {
    let service = try TestService(configure)
    defer { service.stop() }
    return try body(service)
}

/// A response with its body parsed as JSON when it is JSON.
struct Reply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as a JSON object (records an issue when it is not one).
    var json: [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) as? [String: Any] else {
            Issue.record("body is not a JSON object: \(text)")
            return [:]
        }
        return object
    }

    /// NDJSON lines, each parsed as an object.
    var lines: [[String: Any]] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                Issue.record("line is not a JSON object: \(line)")
                return [:]
            }
            return object
        }
    }

    /// Checks the problem+json shape and returns the problem.
    func problem(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        #expect(self.status == status, "expected \(status), got \(self.status): \(text)", sourceLocation: sourceLocation)
        #expect(header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
        let object = json
        #expect(object["status"] as? Int == status, sourceLocation: sourceLocation)
        #expect(object["type"] is String && object["title"] is String && object["detail"] is String, sourceLocation: sourceLocation)
        return object
    }

    /// The problem's `detail`.
    var detail: String { json["detail"] as? String ?? "" }
}

/// Whether a problem's `detail` names `field` the way the service names fields: it begins with
/// the field's path (`items[1].id: …`, `paging.size: …`, `items[0].rect (id "a"): …`), or quotes
/// it as an unknown or missing field (`unknown field "bufer"`, `missing field "items"`). Merely
/// containing the letters somewhere (`"a"` is in almost every sentence) is not naming it.
func names(_ problem: [String: Any], _ field: String) -> Bool {
    let detail = problem["detail"] as? String ?? ""
    return detail.hasPrefix(field + ":") || detail.hasPrefix(field + " (") || detail.contains("field \"\(field)\"")
}

/// Whether a problem's `detail` names `field` and quotes the refused `value` (an enumeration
/// value, an unknown id).
func names(_ problem: [String: Any], _ field: String, value: String) -> Bool {
    names(problem, field) && (problem["detail"] as? String ?? "").contains("\"\(value)\"")
}

/// One connection (keep-alive) that adds the bearer token when the service has one. Like any
/// HTTP client it opens a new connection after an answer that closed its own (`Connection: close`,
/// as a live NDJSON answer does). In process it hands each request to the server's handler.
final class Client {
    private enum Connection {
        case socket(HTTPTestClient)
        case handler(HandlerRequest)
    }

    private var connection: Connection
    let token: String?
    private var closedByServer = false

    init(_ raw: HTTPTestClient, token: String?) {
        connection = .socket(raw)
        self.token = token
    }

    init(_ handler: HandlerRequest, token: String?) {
        connection = .handler(handler)
        self.token = token
    }

    deinit {
        if case .socket(let raw) = connection { raw.close() }
    }

    /// The socket, for bytes the client methods do not send (live tests only).
    var raw: HTTPTestClient {
        get throws {
            guard case .socket(let raw) = connection else { throw HandlerRequestError.needsSocket("a raw socket") }
            return raw
        }
    }

    func send(
        _ method: String, _ path: String, body: [UInt8]? = nil, contentType: String? = "application/json",
        headers: [(name: String, value: String)] = [], auth: Bool = true
    ) throws -> Reply {
        var all = headers
        if auth, let token { all.append(("Authorization", "Bearer \(token)")) }
        if body != nil, let contentType { all.append(("Content-Type", contentType)) }
        switch connection {
        case .handler(let handler):
            return try handler.send(method: method, target: path, headers: all, body: body)
        case .socket(var raw):
            if closedByServer {
                raw.close()
                raw = try HTTPTestClient.connect(host: raw.host, port: raw.port, timeout: raw.timeout)
                connection = .socket(raw)
                closedByServer = false
            }
            let r = try raw.send(method: method, path: path, headers: all, body: body)
            closedByServer = r.closesConnection
            return Reply(status: r.status, headers: r.headers, body: r.body)
        }
    }

    func send(
        _ method: String, _ path: String, json: String, contentType: String? = "application/json",
        headers: [(name: String, value: String)] = [], auth: Bool = true
    ) throws -> Reply {
        try send(method, path, body: Array(json.utf8), contentType: contentType, headers: headers, auth: auth)
    }

    func get(_ path: String) throws -> Reply { try send("GET", path) }
    func delete(_ path: String) throws -> Reply { try send("DELETE", path) }
    func post(_ path: String, _ json: String) throws -> Reply { try send("POST", path, json: json) }

    // MARK: API shortcuts (they expect success)

    /// Posts a layout; returns its id.
    func postLayout(_ layout: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let reply = try post("/v1/layouts", layout)
        #expect([200, 201].contains(reply.status), "\(reply.text)", sourceLocation: sourceLocation)
        return try #require(reply.json["layout"] as? String, sourceLocation: sourceLocation)
    }

    /// Opens a session; returns its id and the whole answer.
    func openSession(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (id: String, json: [String: Any]) {
        let reply = try post("/v1/sessions", body)
        #expect(reply.status == 201, "\(reply.text)", sourceLocation: sourceLocation)
        let json = reply.json
        return (try #require(json["session"] as? String, sourceLocation: sourceLocation), json)
    }

    /// Sends one viewport update; returns the reply.
    func update(_ session: String, _ json: String) throws -> Reply {
        try post("/v1/sessions/\(session)/viewport", json)
    }

    /// GET of a session's state (expects 200).
    func state(_ session: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let reply = try get("/v1/sessions/\(session)")
        #expect(reply.status == 200, "\(reply.text)", sourceLocation: sourceLocation)
        return reply.json
    }
}

// MARK: Layouts for tests

/// One test item.
struct TestItem {
    var id: String
    var rect: [Double]
    var reuse: String?
}

/// A vertical list: `count` rows of `height` points, 375 wide, reuse cycling through `reuses`.
func listItems(_ count: Int, height: Double = 100, reuses: [String?] = ["row"]) -> [TestItem] {
    (0..<count).map { i in
        TestItem(id: "item-\(i)", rect: [0, Double(i) * height, 375, height], reuse: reuses[i % reuses.count])
    }
}

/// A grid: `rows` × `columns` cells of `cell` points with ids "r/c", reuse "card" or "banner".
func gridItems(rows: Int, columns: Int, cell: Double = 100) -> [TestItem] {
    var items: [TestItem] = []
    for r in 0..<rows {
        for c in 0..<columns {
            items.append(TestItem(id: "\(r)/\(c)", rect: [Double(c) * cell, Double(r) * cell, cell, cell], reuse: (r + c) % 5 == 0 ? "banner" : "card"))
        }
    }
    return items
}

func number(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }

/// The layout JSON of `items` (and `contentSize` when given).
func layoutJSON(_ items: [TestItem], contentSize: [Double]? = nil) -> String {
    let list = items.map { item in
        var s = #"{"id":"\#(item.id)","rect":[\#(item.rect.map(number).joined(separator: ","))]"#
        if let reuse = item.reuse { s += #","reuse":"\#(reuse)""# }
        return s + "}"
    }.joined(separator: ",")
    var s = #"{"items":[\#(list)]"#
    if let contentSize { s += #","contentSize":[\#(contentSize.map(number).joined(separator: ","))]"# }
    return s + "}"
}

/// Brute force: the items materialized for this viewport, in layout order (docs/api.md "The materialized region").
func materialized(_ items: [TestItem], offset: [Double], viewport: [Double], buffer: Double) -> [String] {
    let minX = offset[0] - buffer, minY = offset[1] - buffer
    let maxX = offset[0] + viewport[0] + buffer, maxY = offset[1] + viewport[1] + buffer
    return items.filter { item in
        let r = item.rect
        return r[0] < maxX && r[0] + r[2] > minX && r[1] < maxY && r[1] + r[3] > minY
    }.map(\.id)
}

// MARK: JSON access

extension Dictionary where Key == String, Value == Any {
    /// `list` entries of a plan (absent = empty).
    func entries(_ list: String) -> [[String: Any]] { self[list] as? [[String: Any]] ?? [] }
    /// The ids of a plan list.
    func ids(_ list: String) -> [String] { entries(list).compactMap { $0["id"] as? String } }
    func int(_ key: String) -> Int? { self[key] as? Int }
    func doubles(_ key: String) -> [Double] { (self[key] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? [] }
    func object(_ key: String) -> [String: Any] { self[key] as? [String: Any] ?? [:] }
}


/// A lock-protected value for collecting results from threads.
final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func withLock<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var get: T { withLock { $0 } }
}

extension [String: Any] {
    /// A problem object's `detail`.
    var detail: String { self["detail"] as? String ?? "" }
}

/// The value of an unlabelled gauge or counter in a `/metrics` text (`viewportd_sessions 2.0`).
func metric(_ name: String, in text: String) -> Double? {
    for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
        return Double(line.dropFirst(name.count + 1))
    }
    return nil
}
