// A round trip through the generated Swift client (scripts/swift-client.sh roundtrip starts a
// viewportd and runs this): post a layout, open a session, update with seq, read a 409 as a
// problem, read the state, end the session. Each answer must be the typed case its status
// documents.
//
// Usage: viewportd-client-roundtrip BASE_URL [TOKEN]
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import ViewportdClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds `Authorization: Bearer <token>` to every request.
struct BearerToken: ClientMiddleware {
    let token: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
}

func expect(_ condition: Bool, _ what: String) throws {
    guard condition else { throw Failure(description: "FAIL: \(what)") }
    print("swift-client: ok: \(what)")
}

@main
struct RoundTrip {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let base = URL(string: arguments[1]) else {
            print("usage: viewportd-client-roundtrip BASE_URL [TOKEN]")
            exit(2)
        }
        let middlewares: [any ClientMiddleware] = arguments.count > 2 ? [BearerToken(token: arguments[2])] : []
        let client = Client(serverURL: base, transport: URLSessionTransport(), middlewares: middlewares)
        do {
            try await run(client)
            print("swift-client: round trip passed")
        } catch {
            print("swift-client: \(error)")
            exit(1)
        }
    }

    static func run(_ client: Client) async throws {
        // 100 rows of 100 points: a 375 x 250 viewport with no buffer shows three.
        let items = (0..<100).map { k in
            Components.Schemas.LayoutItem(id: "row-\(k)", rect: [0, Double(100 * k), 375, 100], reuse: k == 50 ? nil : "row")
        }
        let stored = try await client.storeLayout(body: .json(.ItemsLayout(.init(items: items))))
        let layout: Components.Schemas.LayoutStored
        switch stored {
        case .created(let created): layout = try created.body.json
        case .ok(let ok): layout = try ok.body.json
        default: throw Failure(description: "POST /v1/layouts answered \(stored)")
        }
        try expect(layout.items == 100 && layout.contentSize == [375, 10000], "POST /v1/layouts -> LayoutStored \(layout.layout)")

        let info = try await client.getLayout(path: .init(id: layout.layout)).ok.body.json
        try expect(info.layout == layout.layout, "GET /v1/layouts/{id} -> LayoutInfo")

        let opened = try await client.openSession(
            body: .json(.SessionRequestAtOffset(.init(layout: .LayoutId(layout.layout), viewport: [375, 250], buffer: .BufferPoints(0), pool: .init(max: 4)))))
        let session = try opened.created.body.json
        try expect(session.plan.seq == 0 && session.plan.create?.map(\.id) == ["row-0", "row-1", "row-2"],
            "POST /v1/sessions -> 201 Session; the opening plan creates row-0 … row-2")

        let update = Components.Schemas.OffsetUpdate(offset: [0, 100], velocity: [0, 600], phase: .dragging, seq: 1)
        let plan = try await client.updateViewport(path: .init(id: session.session), body: .json(.OffsetUpdate(update))).ok.body.json
        try expect(plan.seq == 1, "update seq 1 -> 200 Plan seq 1")
        try expect(plan.recycle?.map { "\($0.id)/\($0.view)" } == ["row-0/1"], "row-0's view 1 is recycled")
        try expect(plan.reuse?.map { "\($0.id)/\($0.view)/\($0.rebind)" } == ["row-3/1/true"], "row-3 reuses view 1, rebind")

        let retry = try await client.updateViewport(path: .init(id: session.session), body: .json(.OffsetUpdate(update))).ok.body.json
        try expect(retry == plan, "a retry (seq 1 again) answers the same plan")

        let conflict = try await client.updateViewport(
            path: .init(id: session.session), body: .json(.OffsetUpdate(.init(offset: [0, 900], seq: 5))))
        guard case .conflict(let answer) = conflict else { throw Failure(description: "seq 5 answered \(conflict)") }
        let problem = try answer.body.applicationProblemJson
        try expect(problem.value1.status == 409 && problem.value2.seq == 1,
            "seq 5 -> 409 SequenceProblem, seq \(problem.value2.seq): \(problem.value1.detail)")

        let jump = try await client.updateViewport(
            path: .init(id: session.session), body: .json(.ScrollToUpdate(.init(scrollTo: .init(id: "row-60", align: .start), seq: 2))))
        try expect(try jump.ok.body.json.offset == [0, 6000], "scrollTo row-60 (start) -> offset [0, 6000]")

        let unknown = try await client.updateViewport(
            path: .init(id: session.session), body: .json(.ScrollToUpdate(.init(scrollTo: .init(id: "nope"), seq: 3))))
        guard case .unprocessableContent(let invalid) = unknown else { throw Failure(description: "unknown id answered \(unknown)") }
        try expect(try invalid.body.applicationProblemJson.value1.status == 422, "scrollTo an unknown id -> 422 Problem422")

        let state = try await client.getSession(path: .init(id: session.session)).ok.body.json
        try expect(state.seq == 2 && state.offset == [0, 6000] && state.visible.map(\.id) == ["row-60", "row-61", "row-62"],
            "GET state -> SessionState seq 2, visible row-60 … row-62")
        try expect(state.stats.updates == 2 && state.stats.created == 3 && state.stats.reused == 4,
            "stats: \(state.stats.updates) updates, \(state.stats.created) created, \(state.stats.reused) reused")

        let ended = try await client.closeSession(path: .init(id: session.session))
        guard case .noContent = ended else { throw Failure(description: "DELETE answered \(ended)") }
        try expect(true, "DELETE /v1/sessions/{id} -> 204")
        let gone = try await client.getSession(path: .init(id: session.session))
        guard case .notFound(let notFound) = gone else { throw Failure(description: "GET after DELETE answered \(gone)") }
        try expect(try notFound.body.applicationProblemJson.value1.status == 404, "then GET -> 404 Problem404")
    }
}
