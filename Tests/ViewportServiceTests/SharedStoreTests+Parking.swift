import Foundation
import Synchronization
import Testing
import ViewportRedis
@testable import ViewportService
import ViewportTestSupport

/// Parking (`store.parkAfter`): a session idle for that long is written and released to the store
/// and leaves memory, so that its lease costs no more renewals; its next request, here or on any
/// instance, takes it back at once and goes on where it was.
extension SharedStoreTests {
    static func parking(_ configuration: inout ServiceConfiguration) {
        configuration.store.leaseTimeout = .seconds(1)
        configuration.store.parkAfter = .seconds(1)
    }

    static func parked(_ client: Client) throws -> Int {
        Int(metric(#"viewportd_store_handovers_total{kind="parked"}"#, in: try client.get("/metrics").text) ?? 0)
    }

    @Test func anIdleSessionIsParkedAndItsNextRequestHereOrElsewhereGoesOn() throws {
        try withCluster(2, configure: { Self.parking(&$0) }) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect()
            let items = listItems(2000, height: 50, reuses: ["row", "ad"])
            var model = ClientModel(items: items, viewport: [375, 667])
            let (id, opened) = try a.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,667]}"#)
            model.open(opened.object("plan"))
            var y = 0.0
            func step(_ client: Client, _ label: String) throws {
                y += 640
                let started = Date()
                let reply = try client.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(model.seq + 1)}"#)
                let took = Date().timeIntervalSince(started)
                #expect(reply.status == 200, "\(label): \(reply.text)")
                guard reply.status == 200 else { return }
                model.apply(reply.json, offset: [0, y])
                // Taken back at once: no lease to wait for, no grace.
                #expect(took < 0.5, "\(label) took \(took) s")
            }
            try step(a, "before parking")
            let keys = StoreKeys(prefix: cluster[0].server.configuration.store.keyPrefix)
            let store = try cluster.storeClient()
            // Parked: counted, out of A's memory, no lease left in the store.
            #expect(try eventually(within: 5) { try Self.parked(a) == 1 }, "parked within the idle time and a renewal scan")
            #expect(metric("viewportd_sessions", in: try a.get("/metrics").text) == 0)
            #expect(try store.send(RedisCommand("EXISTS", keys.lease(id))).integer == 0)
            #expect(try store.send(RedisCommand("HGET", keys.session(id), "free")).text == "1")
            // Its next request on A takes it back and continues the plan.
            try step(a, "back on A")
            #expect(metric("viewportd_sessions", in: try a.get("/metrics").text) == 1)
            // Parked again, then taken by B without waiting for anyone.
            #expect(try eventually(within: 5) { try Self.parked(a) == 2 })
            try step(b, "on B after A parked it")
            for _ in 0..<5 { try step(b, "on B") }
            model.check(state: try a.state(id))
            #expect(try Self.parked(b) == 0, "B's session was not idle")
        }
    }

    /// A parked session is gone when its idle timeout ends, as one held in memory would be: its
    /// record in the store lives for the rest of that timeout, not a whole one more.
    @Test func aParkedSessionIsGoneWhenItsIdleTimeoutEnds() throws {
        try withCluster(2, configure: {
            Self.parking(&$0)
            $0.sessions.idleTimeout = .seconds(3)
        }) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect()
            let layout = try a.postLayout(layoutJSON(listItems(300)))
            let id = try a.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#).id
            #expect(try eventually(within: 3) { try Self.parked(a) == 1 })
            let store = try cluster.storeClient()
            let key = StoreKeys(prefix: cluster[0].server.configuration.store.keyPrefix).session(id)
            let left = try store.send(RedisCommand("PTTL", key)).integer ?? -1
            #expect(left > 0 && left <= 2_050, "parked after 1 s idle of 3: \(left) ms left")
            // Still there before its idle timeout; the read (on B) starts it again.
            #expect(try b.get("/v1/sessions/\(id)").status == 200)
            let read = Date()
            // Nothing reads it now (a read would keep it): B parks it after 1 s, then it expires.
            usleep(3_500_000)
            #expect(Date().timeIntervalSince(read) < 4.5, "checked before a sweep could have caught it anyway")
            #expect(try b.get("/v1/sessions/\(id)").status == 404)
            #expect(try a.get("/v1/sessions/\(id)").status == 404)
            #expect(try Self.parked(b) == 1)
        }
    }

    /// Requests that come while their sessions are being parked: each is answered 200 with a
    /// plan that follows every rule, and no session counts twice in memory.
    @Test func requestsRacingTheirSessionsParkingAreAllAnswered() throws {
        try withCluster(2, configure: { Self.parking(&$0) }) { cluster in
            let a = try cluster[0].connect()
            let items = listItems(2000, height: 50, reuses: ["row", "ad"])
            let layout = try a.postLayout(layoutJSON(items))
            let sessions = try (0..<8).map { _ in
                var model = ClientModel(items: items, viewport: [375, 667])
                let (id, opened) = try a.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#)
                model.open(opened.object("plan"))
                return (id, model)
            }
            let port = cluster[0].port
            let failures = Mutex<[String]>([])
            // Pauses around the park time (1 s and up to a renewal scan of 1/8 s later).
            let finished = onThreads(sessions.count, timeout: 60) { k in
                var (id, model) = sessions[k]
                var rng = SystemRandomNumberGenerator()
                guard let client = try? Client(HTTPTestClient.connect(port: port, timeout: 5), token: nil) else {
                    failures.withLock { $0.append("session \(k): no connection") }
                    return
                }
                var y = 0.0
                for _ in 0..<6 {
                    usleep(UInt32.random(in: 950_000...1_250_000, using: &rng))
                    y += 480
                    guard let reply = try? client.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(model.seq + 1)}"#), reply.status == 200 else {
                        failures.withLock { $0.append("session \(k): not answered 200") }
                        return
                    }
                    model.apply(reply.json, offset: [0, y])
                }
            }
            #expect(finished)
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            // A new connection: the first sat idle past the server's connection timeout.
            let fresh = try cluster[0].connect()
            let parked = try Self.parked(fresh)
            print("8 sessions paused around their parking: \(parked) parked")
            #expect(parked > 0, "some were parked between their requests")
            // Every one idle now: each parked, and the count of sessions in memory back to 0.
            #expect(try eventually(within: 5) { metric("viewportd_sessions", in: try fresh.get("/metrics").text) == 0 })
        }
    }
}
