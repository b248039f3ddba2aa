import Foundation
import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// The wait an outage reply reports (``StoreScripts/acquire``): how long until a take passes the
/// grace's checks, not the grace's whole length. With the default timings (a 2 s lease, a
/// comeback window of 0.85 s) a dead owner's session is taken a comeback window after the first
/// take started the grace, and a client told to retry then gets it.
extension OutageGraceTests {
    /// An instance with the default timings of a deployment: `store.timeout` 0.5 s, so its
    /// comeback window (0.1 + 0.25 + 0.5 s) is shorter than the grace (a lease).
    func quickInstance(_ name: String) -> RedisStateStore {
        RedisStateStore(
            pool: RedisPool(endpoint: raw.endpoint, connectTimeout: 0.5, commandTimeout: 0.5, capacity: 2), keys: keys, instance: name,
            leaseMilliseconds: 2000, sessionMilliseconds: 60_000, layoutMilliseconds: 120_000, handoverWait: 0.5, handleBlock: 1024,
            metrics: ServiceMetrics(), health: StoreHealth(), flushInterval: 0.1)
    }

    @Test func aDeadOwnersSessionIsTakenAComebackWindowAfterTheGraceStarts() throws {
        defer { redis.stop() }
        let asker = quickInstance("asker")
        let id = "88888888888888888888888888888888"
        #expect(asker.comebackMilliseconds == 850)
        #expect([.ok, .layoutMissing].contains(open(id, on: instance("killed"))))
        // Killed: its lease lapsed, nobody beats the cell any more (its pulse is gone).
        try simulateOutage(of: [id], owner: "killed")
        guard case .outage(let left) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("the first take after the silence starts the grace and waits")
            return
        }
        #expect(try graceLeft(id) > 1500, "the grace is a lease")
        #expect(left > 850 - 200 && left <= 850, "the wait is the comeback window, not the grace: \(left) ms")
        // A tenth of the window later (the rest of it is headroom for a late wake-up).
        Thread.sleep(forTimeInterval: Double(left) / 10_000)
        guard case .outage(let rest) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a take before the comeback window ends still waits")
            return
        }
        #expect(rest > 0 && rest <= left - left / 10, "\(rest) ms")
        Thread.sleep(forTimeInterval: Double(rest + 1) / 1000)
        guard case .acquired(_, _, _, let snapshot, let stolen) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a take after the reported wait succeeds")
            return
        }
        #expect(snapshot == Array("v1".utf8) && stolen)
        #expect(try graceLeft(id) > 0, "taken within the grace, not at its end")
    }

    @Test func anOwnerHeardFromIsWaitedForUntilItsLeaseSinceThen() throws {
        defer { redis.stop() }
        let asker = quickInstance("asker")
        let id = "99999999999999999999999999999999"
        #expect([.ok, .layoutMissing].contains(open(id, on: instance("owner"))))
        try simulateOutage(of: [id], owner: "owner")
        // Heard from 800 ms ago in the cell: alive for 1.2 s more, past the comeback window
        // (0.85 s), and that far before the grace's end (2 s after the take below starts it).
        let before = try storeNow()
        let heard = before - 800
        _ = try raw.send(RedisCommand("HSET", keys.seen(of: id), "owner", String(heard)))
        guard case .outage(let left) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("an owner heard from is waited for")
            return
        }
        let grace = try graceLeft(id)
        // The store's clock moved on by at most `took` between `heard` and the take.
        let took = try storeNow() - before
        #expect(left >= 1200 - took && left <= 1200, "until its lease since it was heard from: \(left) ms (\(took) ms on the store)")
        #expect(grace > left, "before the grace's end")
        // Not heard from again: taken once that wait is over, inside the grace.
        Thread.sleep(forTimeInterval: Double(left + 1) / 1000)
        guard case .acquired(_, _, _, _, let stolen) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("an owner silent for a lease is taken as dead once the reported wait is over")
            return
        }
        #expect(stolen)
        #expect(try graceLeft(id) > 0)
    }

    @Test func theWaitNeverOutlastsTheGrace() throws {
        // A comeback window longer than the grace (a 2 s store timeout): the grace's end.
        defer { redis.stop() }
        let asker = instance("asker")
        let id = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        #expect([.ok, .layoutMissing].contains(open(id, on: instance("killed"))))
        try simulateOutage(of: [id], owner: "killed")
        let started = try storeNow()
        guard case .outage(let left) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("the first take after the silence waits")
            return
        }
        let grace = try graceLeft(id)
        // The grace's rest, read one round trip after the take: less by at most that trip.
        let took = try storeNow() - started
        #expect(left <= 2000 && left >= grace && left - grace <= took, "\(left) ms, grace \(grace) ms, \(took) ms on the store")
    }
}
