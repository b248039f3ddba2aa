import Foundation
import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// A store that answers but refuses viewportd's commands counts as unavailable (an audit found
/// `/readyz` at 200 while every request answered 503 NOAUTH), and the ACL line
/// docs/operations/store.md gives is all a cluster needs.
@Suite(.serialized)
struct StoreRefusalTests {
    @Test func aStoreThatRefusesTheClientIsNotReady() throws {
        let redis = try RedisTestServer(arguments: ["--requirepass", "admin"])
        defer { redis.stop() }
        let service = try TestService { c in
            c.store.url = redis.url  // no password
            c.store.flushInterval = .milliseconds(50)
        }
        defer { service.stop() }
        let client = try service.connect()
        let layout = try client.post("/v1/layouts", layoutJSON(listItems(3)))
        #expect((layout.problem(503)["detail"] as? String)?.contains("NOAUTH") == true, "\(layout.text)")
        #expect(layout.header("Retry-After") != nil)
        #expect(try eventually(within: 2) { try client.get("/readyz").status == 503 })
        #expect(try client.get("/healthz").json["store"] as? String == "unavailable")
    }

    /// The `ACL SETUSER` line of docs/operations/store.md, with `password`.
    static func documentedACL(password: String) throws -> [String] {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/operations/store.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("ACL SETUSER ") })
        return line.split(separator: " ").map { $0 == ">PASSWORD" ? ">\(password)" : String($0) }
    }

    @Test func theDocumentedACLIsEnoughForEverythingAClusterDoes() throws {
        let redis = try RedisTestServer(arguments: ["--requirepass", "admin"])
        defer { redis.stop() }
        let admin = RedisPool(endpoint: RedisEndpoint(host: "127.0.0.1", port: redis.port, password: "admin"), connectTimeout: 2, commandTimeout: 2, capacity: 1)
        let acl = try Self.documentedACL(password: "app-pw")
        let set = try admin.send(RedisCommand(acl[0], arguments: Array(acl.dropFirst())))
        #expect(set == .status("OK"), "\(set)")
        let url = "redis://viewportd:app-pw@127.0.0.1:\(redis.port)"
        func instance() throws -> TestService {
            try TestService { c in
                c.store.url = url
                c.store.flushInterval = .milliseconds(50)
            }
        }
        let a = try instance()
        let b = try instance()
        let items = listItems(500, height: 50, reuses: ["row"])
        let clientA = try a.connect()
        let layout = try clientA.postLayout(layoutJSON(items))
        let (id, _) = try clientA.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#)
        #expect(try clientA.update(id, #"{"offset":[0,500],"seq":1}"#).status == 200)
        // Handed over to b, then back to a; PATCH, GET and the writer in between.
        let clientB = try b.connect()
        #expect(try clientB.update(id, #"{"offset":[0,900],"seq":2}"#).status == 200)
        #expect(try clientB.get("/v1/sessions/\(id)/layout").status == 200)
        usleep(200_000)
        #expect(try clientA.update(id, #"{"offset":[0,1300],"seq":3}"#).status == 200)
        #expect(try clientB.get("/readyz").status == 200)
        // b stops (its inbox read in one transaction), a continues, then stops and releases.
        b.stop()
        #expect(try clientA.update(id, #"{"offset":[0,1700],"seq":4}"#).status == 200)
        a.stop()
        let log = try admin.send(RedisCommand("ACL", "LOG"))
        #expect(log.array?.isEmpty == true, "refused: \(log)")
        // The session survived it all, at seq 4.
        let c = try instance()
        defer { c.stop() }
        #expect(try c.connect().state(id).int("seq") == 4)
    }

    @Test func anOwnerWhoseWritesAreRefusedStopsAnsweringChangesItCannotStore() throws {
        // Renewals get through, writes are refused (here: HSET taken from the ACL user; in an
        // audit: OOM under memory pressure). The owner answered every update from memory for as
        // long as its lease held, which renewals extended without end: everything it answered
        // was lost when another instance took the session. Now changes wait at most
        // flushInterval + timeout to be written, then 503.
        let redis = try RedisTestServer(arguments: ["--requirepass", "admin"])
        defer { redis.stop() }
        let admin = RedisPool(endpoint: RedisEndpoint(host: "127.0.0.1", port: redis.port, password: "admin"), connectTimeout: 2, commandTimeout: 2, capacity: 1)
        let acl = try Self.documentedACL(password: "app-pw")
        #expect(try admin.send(RedisCommand(acl[0], arguments: Array(acl.dropFirst()))) == .status("OK"))
        let service = try TestService { c in
            c.store.url = "redis://viewportd:app-pw@127.0.0.1:\(redis.port)"
            c.store.flushInterval = .milliseconds(50)
            c.store.timeout = .milliseconds(300)
        }
        defer { service.stop() }
        let client = try service.connect()
        let items = listItems(2000, height: 50, reuses: ["row"])
        let (id, opened) = try client.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,667]}"#)
        var model = ClientModel(items: items, viewport: [375, 667])
        model.open(opened.object("plan"))
        var details: Set<String> = []
        func step() throws -> Int {
            let y = Double(model.seq + 1) * 97
            let reply = try client.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(model.seq + 1)}"#)
            if reply.status == 200 { model.apply(reply.json, offset: [0, y]) }
            if reply.status == 503 { details.insert(reply.json["detail"] as? String ?? reply.text) }
            return reply.status
        }
        #expect(try step() == 200)
        usleep(200_000)
        #expect(try admin.send(RedisCommand("ACL", "SETUSER", "viewportd", "-hset")) == .status("OK"))
        let revoked = Date()
        // When the first update after the revocation was answered (its change, unwritten since
        // no later than that), and when the last one answered 200 was sent.
        var firstAnswered: Double?
        var lastSent = 0.0
        var refused = 0
        while Date().timeIntervalSince(revoked) < 2.5 {
            let sent = Date().timeIntervalSince(revoked)
            switch try step() {
            case 200:
                firstAnswered = firstAnswered ?? Date().timeIntervalSince(revoked)
                lastSent = sent
            case 503: refused += 1
            case let status: Issue.record("status \(status)")
            }
            usleep(40_000)
        }
        #expect(refused > 0, "changes the store refuses are answered without end")
        // The 503 says why: changes unwritten for too long, and the store refusing the write.
        #expect(details.contains { $0.contains("changes answered from memory have not been written to the shared store for too long") && $0.contains("refused the write") }, "\(details)")
        #expect(details.allSatisfy { !$0.contains("view handles must be reserved") }, "\(details)")
        // A change is answered from memory only while the first unwritten one is less than
        // flushInterval + timeout = 0.35 s old: measured from that change's answer, which a
        // loaded machine cannot delay past the change itself.
        let answeredFor = lastSent - (firstAnswered ?? lastSent)
        #expect(answeredFor < 0.6, "answered updates sent \(answeredFor) s after the first unwritten change (0.35 s allowed)")
        // Renewals and heartbeats get through, writes do not: not ready (an audit saw 200). Each
        // refused writer round holds it down for a second; on a loaded machine a round can come
        // later than that, so the check may take one more round.
        #expect(try eventually(within: 2) { try client.get("/readyz").status == 503 })
        #expect(try client.get("/healthz").json["store"] as? String == "unavailable")
        // Writes allowed again: everything answered is written, the session goes on.
        #expect(try admin.send(RedisCommand("ACL", "SETUSER", "viewportd", "+hset")) == .status("OK"))
        #expect(try eventually(within: 5) { try step() == 200 })
        let other = try TestService { c in
            c.store.url = "redis://viewportd:app-pw@127.0.0.1:\(redis.port)"
            c.store.flushInterval = .milliseconds(50)
        }
        defer { other.stop() }
        model.check(state: try other.connect().state(id))
    }
}
