import Foundation
import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// The store's scripts after an outage of the store itself (``StoreScripts/heartbeat``): when no
/// instance's heartbeat reached the store for half a lease, every owner was cut off, not one
/// dead; for a lease after that, a session its owner did not release is not taken from it, so the
/// owner writes back what it answered while the store was away. Driven key by key on a real
/// redis-server, so that each case is exact (the end-to-end race is in `StoreOutageTests`).
@Suite(.serialized)
struct OutageGraceTests {
    let redis: RedisTestServer
    let raw: RedisPool
    let keys = StoreKeys(prefix: "test:")

    init() throws {
        redis = try RedisTestServer()
        raw = RedisPool(endpoint: try RedisEndpoint(url: redis.url), connectTimeout: 2, commandTimeout: 2, capacity: 2)
    }

    func instance(_ name: String) -> RedisStateStore {
        RedisStateStore(
            pool: RedisPool(endpoint: raw.endpoint, connectTimeout: 2, commandTimeout: 2, capacity: 2), keys: keys, instance: name,
            leaseMilliseconds: 2000, sessionMilliseconds: 60_000, layoutMilliseconds: 120_000, handoverWait: 1, handleBlock: 1024,
            metrics: ServiceMetrics(), health: StoreHealth())
    }

    /// The store's clock, in milliseconds.
    func storeNow() throws -> Int64 {
        let time = try raw.send(RedisCommand("TIME")).array ?? []
        return (Int64(time.first?.text ?? "") ?? 0) * 1000 + (Int64(time.last?.text ?? "") ?? 0) / 1000
    }

    /// What an outage of the store longer than a lease leaves: no lease, no heartbeats, the last
    /// heartbeat `silence` ms ago.
    func simulateOutage(of sessions: [String], owner: String, silence: Int64 = 3000) throws {
        for id in sessions { _ = try raw.send(RedisCommand("DEL", keys.lease(id))) }
        _ = try raw.send(RedisCommand("DEL", keys.instance(owner), keys.prefix + "grace"))
        _ = try raw.send(RedisCommand("SET", keys.prefix + "beat", String(try storeNow() - silence)))
    }

    /// Creates a session record owned by `store` at epoch 1.
    func open(_ id: String, on store: RedisStateStore, version: UInt64 = 1) -> RedisStateStore.Outcome {
        let ticket = SessionOwnership.WriteTicket(epoch: 1, version: version, handleLimit: 1024, create: true, sentAt: 0)
        return store.write([RedisStateStore.Write(session: id, ticket: ticket, snapshot: Array("v\(version)".utf8), layouts: [])]).first ?? .failed
    }

    @Test func anOwnerCutOffWithEveryOtherInstanceKeepsItsSessionsForALease() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let asker = instance("asker")
        try owner.heartbeat()
        try asker.heartbeat()
        let held = "0123456789abcdef0123456789abcdef"
        let released = "fedcba9876543210fedcba9876543210"
        #expect([.ok, .layoutMissing].contains(open(held, on: owner)))
        #expect([.ok, .layoutMissing].contains(open(released, on: owner)))
        // `released` was handed over (a shutdown, a handover) before the outage.
        let release = RedisStateStore.Write(
            session: released, ticket: .init(epoch: 1, version: 2, handleLimit: 1024, create: false, sentAt: 0),
            snapshot: Array("v2".utf8), layouts: [], release: true)
        #expect([.ok, .layoutMissing].contains(owner.write([release]).first ?? .failed))

        try simulateOutage(of: [held], owner: "owner")
        // The first instance back finds every heartbeat silent: the held session is not taken…
        let reply = keys.reply(RedisStateStore.nonce())
        guard case .outage(let left) = try asker.acquire(held, replyKey: reply) else {
            Issue.record("a session whose owner was cut off with everyone else was taken from it")
            return
        }
        #expect(left > 0 && left <= 2000)
        // …a released one is (its owner has nothing more to write)…
        guard case .acquired(_, _, _, let snapshot, let stolen) = try asker.acquire(released, replyKey: reply) else {
            Issue.record("a released session waits for a grace it does not need")
            return
        }
        #expect(snapshot == Array("v2".utf8) && !stolen)
        // …and the owner, back too, writes what it answered meanwhile, taking its lapsed lease back.
        try owner.heartbeat()
        let writeBack = RedisStateStore.Write(
            session: held, ticket: .init(epoch: 1, version: 5, handleLimit: 1024, create: false, sentAt: 0),
            snapshot: Array("v5".utf8), layouts: [])
        #expect([.ok, .layoutMissing].contains(owner.write([writeBack]).first ?? .failed))
        guard case .owned(let by, _) = try asker.acquire(held, replyKey: reply) else {
            Issue.record("the owner wrote back and holds its lease again: the asker must ask it")
            return
        }
        #expect(by == "owner")
    }

    @Test func oneDeadInstanceLosesItsSessionsAfterItsLeaseAsBefore() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let asker = instance("asker")
        try owner.heartbeat()
        let id = "00112233445566778899aabbccddeeff"
        #expect([.ok, .layoutMissing].contains(open(id, on: owner, version: 3)))
        // The owner died: its lease and heartbeat expired while the asker's heartbeats went on.
        try simulateOutage(of: [id], owner: "owner", silence: 0)
        try asker.heartbeat()
        guard case .acquired(let epoch, _, let version, let snapshot, _) = try asker.acquire(id, replyKey: keys.reply("r")) else {
            Issue.record("a dead owner's session must move after its lease")
            return
        }
        #expect(epoch == 2 && version == 3 && snapshot == Array("v3".utf8))
        #expect(try raw.send(RedisCommand("PTTL", keys.prefix + "grace")).integer == -2)
    }

    @Test func aHeartbeatAfterASilenceOfEveryInstanceStartsTheGrace() throws {
        defer { redis.stop() }
        let asker = instance("asker")
        try asker.heartbeat()
        #expect(try raw.send(RedisCommand("PTTL", keys.prefix + "grace")).integer == -2, "no grace at the first heartbeat")
        // Shorter than half a lease: no grace.
        _ = try raw.send(RedisCommand("SET", keys.prefix + "beat", String(try storeNow() - 800)))
        try asker.heartbeat()
        #expect(try raw.send(RedisCommand("PTTL", keys.prefix + "grace")).integer == -2)
        // Longer: a lease of grace.
        _ = try raw.send(RedisCommand("SET", keys.prefix + "beat", String(try storeNow() - 1200)))
        try asker.heartbeat()
        let grace = try raw.send(RedisCommand("PTTL", keys.prefix + "grace")).integer ?? -2
        #expect(grace > 1500 && grace <= 2000)
    }
}
