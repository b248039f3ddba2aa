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
            metrics: ServiceMetrics(), health: StoreHealth(), flushInterval: 0.1)
    }

    /// The store's clock, in milliseconds.
    func storeNow() throws -> Int64 {
        let time = try raw.send(RedisCommand("TIME")).array ?? []
        return (Int64(time.first?.text ?? "") ?? 0) * 1000 + (Int64(time.last?.text ?? "") ?? 0) / 1000
    }

    /// Runs `command(key)` for the key `key(cell)` of every cell: the tests act on the store as
    /// a whole, as an outage of one server does.
    func inEveryCell(_ key: (String) -> String, _ command: (String) -> RedisCommand) throws {
        _ = try raw.pipeline((0..<StoreKeys.cellCount).map { command(key(StoreKeys.cell($0))) })
    }

    /// The last heartbeat in every cell `silence` ms ago: `beat` then, and the pulse it renewed
    /// (it lives the outage gap, half a lease) gone or still there.
    func setBeat(silence: Int64) throws {
        let then = String(try storeNow() - silence)
        try inEveryCell(keys.beat(cell:)) { RedisCommand("SET", $0, then) }
        let gap = instance("fixture").outageGapMilliseconds
        try inEveryCell(keys.pulse(cell:)) { silence < gap ? RedisCommand("SET", $0, "1", "PX", gap - silence) : RedisCommand("DEL", $0) }
    }

    /// `owner` was not heard from (its heartbeat key expired, and every cell's record of it).
    func forget(_ owner: String) throws {
        _ = try raw.send(RedisCommand("DEL", keys.instance(owner)))
        try inEveryCell(keys.seen(cell:)) { RedisCommand("HDEL", $0, owner) }
    }

    /// What an outage of the store longer than a lease leaves: no lease, no heartbeats, the last
    /// heartbeat `silence` ms ago.
    func simulateOutage(of sessions: [String], owner: String, silence: Int64 = 3000) throws {
        for id in sessions { _ = try raw.send(RedisCommand("DEL", keys.lease(id))) }
        try forget(owner)
        try inEveryCell(keys.grace(cell:)) { RedisCommand("DEL", $0) }
        try setBeat(silence: silence)
    }

    /// The grace's time left in session `id`'s cell (or in every cell: the first's).
    func graceLeft(_ id: String? = nil) throws -> Int64 {
        try raw.send(RedisCommand("PTTL", id.map(keys.grace(of:)) ?? keys.grace(cell: StoreKeys.cell(0)))).integer ?? -2
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
        guard case .outage(let left) = try asker.acquire(held, replyKey: keys.reply("r", session: held)) else {
            Issue.record("a session whose owner was cut off with everyone else was taken from it")
            return
        }
        #expect(left > 0 && left <= 2000)
        // …a released one is (its owner has nothing more to write)…
        guard case .acquired(_, _, _, let snapshot, let stolen) = try asker.acquire(released, replyKey: keys.reply("r", session: released)) else {
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
        guard case .owned(let by, _) = try asker.acquire(held, replyKey: keys.reply("r", session: held)) else {
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
        guard case .acquired(let epoch, _, let version, let snapshot, _) = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a dead owner's session must move after its lease")
            return
        }
        #expect(epoch == 2 && version == 3 && snapshot == Array("v3".utf8))
        #expect(try graceLeft(id) == -2)
    }

    @Test func anOwnersHeartbeatAfterASilenceOfEveryInstanceStartsTheGrace() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let id = "44444444444444444444444444444444"
        try owner.heartbeat()
        #expect(try graceLeft(id) == -2, "no grace at the first heartbeat")
        // Its first session in the cell: the beat that goes with its first write finds the cell
        // idle, not cut off.
        try setBeat(silence: 5000)
        #expect([.ok, .layoutMissing].contains(open(id, on: owner)))
        #expect(try graceLeft(id) == -2)
        // Shorter than half a lease: no grace.
        try setBeat(silence: 800)
        try owner.heartbeat()
        #expect(try graceLeft(id) == -2)
        // Longer: a lease of grace.
        try setBeat(silence: 1200)
        try owner.heartbeat()
        let grace = try graceLeft(id)
        #expect(grace > 1500 && grace <= 2000)
        // An instance that holds no lease in a cell does not beat it: a silence there starts
        // nothing (nobody's session there is waited for).
        try inEveryCell(keys.grace(cell:)) { RedisCommand("DEL", $0) }
        try setBeat(silence: 1200)
        try instance("idle").heartbeat()
        #expect(try graceLeft(id) == -2)
    }

    @Test func anInstanceThatTookASessionCountsItsBeatsFromThen() throws {
        // A cell idle for long (its `beat` old): the instance that takes a session there starts
        // no grace with its first beat; once it is cut off with everyone else for longer than
        // the gap, its next beat does.
        defer { redis.stop() }
        let id = "55555555555555555555555555555555"
        #expect([.ok, .layoutMissing].contains(open(id, on: instance("first"))))
        let release = RedisStateStore.Write(
            session: id, ticket: .init(epoch: 1, version: 2, handleLimit: 1024, create: false, sentAt: 0), snapshot: Array("v2".utf8),
            layouts: [], release: true)
        #expect([.ok, .layoutMissing].contains(instance("first").write([release]).first ?? .failed))
        try setBeat(silence: 5000)
        let taker = instance("taker")
        guard case .acquired = try taker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a released session is taken")
            return
        }
        try taker.heartbeat()
        #expect(try graceLeft(id) == -2, "the cell was idle, not cut off")
        try setBeat(silence: 1200)
        try taker.heartbeat()
        #expect(try graceLeft(id) > 1500)
    }

    @Test func aPlainBeatNeverHidesASilence() throws {
        // The writer's beats of a cell it beat before are a plain PEXPIRE of the cell's pulse:
        // one that finds the pulse gone changes nothing, so a take still sees the silence, and
        // the owner's next round beats with the script, which notes the silence itself.
        defer { redis.stop() }
        let owner = instance("owner")
        let asker = instance("asker")
        let id = "66666666666666666666666666666666"
        func pulseLeft() throws -> Int64 { try raw.send(RedisCommand("PTTL", keys.pulse(of: id))).integer ?? -2 }
        #expect([.ok, .layoutMissing].contains(open(id, on: owner)))
        // A pulse about to end (half a second left, for the round to find it still there)...
        _ = try raw.send(RedisCommand("PEXPIRE", keys.pulse(of: id), 500))
        // ...lives the gap (1 s) from a beat: read later, less the store time since.
        var beaten = try storeNow()
        _ = owner.round(heartbeat: true)
        #expect(try pulseLeft() >= 1000 - (storeNow() - beaten), "the plain beat prolongs the pulse")
        // Every instance cut off for longer than a lease: the pulse and the lease are gone.
        try simulateOutage(of: [id], owner: "nobody")
        Thread.sleep(forTimeInterval: Double(owner.leaseMilliseconds) / 8 / 1000 + 0.02)
        _ = owner.round(heartbeat: true)
        #expect(try pulseLeft() == -2 && graceLeft(id) == -2, "a PEXPIRE brings no pulse back")
        guard case .outage = try asker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a take after the silence must wait for the owner")
            return
        }
        #expect(try graceLeft(id) > 1500)
        try inEveryCell(keys.grace(cell:)) { RedisCommand("DEL", $0) }
        beaten = try storeNow()
        _ = owner.round(heartbeat: true)
        #expect(try graceLeft(id) > 1500, "the owner's script beat notes the silence")
        #expect(try pulseLeft() >= 1000 - (storeNow() - beaten))
    }

    @Test func aNewInstancesPlainCheckCreatesNoBeatAndItsScriptCheckNoGrace() throws {
        // The coarse check is a plain EXISTS of `beat`; a cell without it gets the script in the
        // next round. A store that lost its keys answers 503 for missing sessions until then.
        defer { redis.stop() }
        let unknown = "77777777777777777777777777777777"
        let newcomer = instance("newcomer")
        _ = newcomer.round(heartbeat: true)
        guard case .outage = try newcomer.acquire(unknown, replyKey: keys.reply("r", session: unknown)) else {
            Issue.record("the EXISTS does not create `beat`")
            return
        }
        _ = newcomer.round(heartbeat: true)
        #expect(try newcomer.acquire(unknown, replyKey: keys.reply("r", session: unknown)) == .missing)
        #expect(try graceLeft(unknown) == -2)
    }

    @Test func aLeaseNeverOutlivesItsOwnersHeartbeatAfterTheStoreLostItsKeys() throws {
        // An audit: a store restarted empty; the owner wrote its session back, another instance
        // took it by handover and answered an update, and a third took it from that one before
        // its next heartbeat (a lease without a heartbeat is a dead owner's): the update was lost.
        // Taking, writing and renewing a session now also write the owner's heartbeat.
        defer { redis.stop() }
        let owner = instance("owner")
        let taker = instance("taker")
        let id = "abcdefabcdefabcdefabcdefabcdef01"
        func beats(_ name: String) throws -> Bool { try raw.send(RedisCommand("EXISTS", keys.instance(name))).integer == 1 }
        // Written back into an empty store: the write is the owner's heartbeat too.
        #expect([.ok, .layoutMissing].contains(open(id, on: owner)))
        #expect(try beats("owner"))
        _ = try raw.send(RedisCommand("DEL", keys.instance("owner")))
        #expect(owner.renew([(id, 1, false, [])]).first == .ok)
        #expect(try beats("owner"))
        // Released, then taken by an instance that never sent a heartbeat to this store.
        let release = RedisStateStore.Write(
            session: id, ticket: .init(epoch: 1, version: 2, handleLimit: 1024, create: false, sentAt: 0), snapshot: Array("v2".utf8),
            layouts: [], release: true)
        #expect([.ok, .layoutMissing].contains(owner.write([release]).first ?? .failed))
        guard case .acquired(let epoch, _, _, _, _) = try taker.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a released session is free")
            return
        }
        #expect(epoch == 3)
        // A lease is waited for, whether its owner's heartbeat reached the store yet or not: a
        // third instance asks the taker instead of taking the session from the record.
        guard case .owned(let by, _) = try instance("third").acquire(id, replyKey: keys.reply("r3", session: id)) else {
            Issue.record("the session was taken from a live owner")
            return
        }
        #expect(by == "taker")
    }

    @Test func duringTheGraceAnOwnerNotHeardFromSoonIsTakenAsDead() throws {
        // An audit: with every instance killed and restarted, sessions waited a whole lease of
        // grace after the restart, however long ago their leases had ended. An owner still alive
        // is heard from within `comebackMilliseconds` of the store answering again (its writer's
        // next round); one that is not, is dead.
        defer { redis.stop() }
        let owner = instance("owner")
        let asker = instance("asker")
        let dead = "11111111111111111111111111111111"
        let alive = "22222222222222222222222222222222"
        #expect([.ok, .layoutMissing].contains(open(dead, on: instance("crashed"))))
        #expect([.ok, .layoutMissing].contains(open(alive, on: owner)))
        try simulateOutage(of: [dead, alive], owner: "crashed")
        try forget("owner")
        // The first to reach the cell after the silence notes it: the grace starts now.
        guard case .outage = try asker.acquire(dead, replyKey: keys.reply("r", session: dead)) else {
            Issue.record("right after the store answers again, any owner may still come back")
            return
        }
        #expect(try graceLeft(dead) > 0)
        // Later in the grace (as if it had started `comeback` ago): the owner heard from again
        // (its heartbeat) is waited for; the one never heard from is dead.
        let started = try storeNow() - owner.comebackMilliseconds - 1
        try inEveryCell(keys.grace(cell:)) { RedisCommand("SET", $0, String(started), "PX", "1500") }
        try owner.heartbeat()
        guard case .outage = try asker.acquire(alive, replyKey: keys.reply("r", session: alive)) else {
            Issue.record("an owner heard from again gets the rest of the grace to write back")
            return
        }
        guard case .acquired(_, _, _, let snapshot, _) = try asker.acquire(dead, replyKey: keys.reply("r", session: dead)) else {
            Issue.record("an owner not heard from within comebackMilliseconds is taken as dead")
            return
        }
        #expect(snapshot == Array("v1".utf8))
        #expect(owner.comebackMilliseconds == 100 + 250 + 2000, "flushInterval + the pool's retry interval + its command timeout")
    }

    @Test func aSessionMissingFromAStoreThatLostItsKeysIsNotGoneYet() throws {
        // An audit: after FLUSHALL (or an empty restart) other instances answered 404 for live
        // sessions until their owners wrote them back, and a client that believes a 404 gives
        // its session up. While the store may have lost a session, it is an outage (503).
        defer { redis.stop() }
        let asker = instance("asker")
        let unknown = "33333333333333333333333333333333"
        try asker.heartbeat()
        #expect(try asker.acquire(unknown, replyKey: keys.reply("r", session: unknown)) == .missing)
        #expect(try asker.sessionExists(unknown) == false)
        _ = try raw.send(RedisCommand("FLUSHALL"))
        // Before any heartbeat reaches it again…
        guard case .outage = try asker.acquire(unknown, replyKey: keys.reply("r", session: unknown)) else {
            Issue.record("a store without `beat` has lost its keys: not a 404 yet")
            return
        }
        #expect(try asker.sessionExists(unknown))
        // …and for a lease after the first one, which knows it wrote `beat` before.
        try asker.heartbeat()
        let grace = try graceLeft(unknown)
        #expect(grace > 1500 && grace <= 2000)
        guard case .outage = try asker.acquire(unknown, replyKey: keys.reply("r", session: unknown)) else {
            Issue.record("during the grace a missing session may still be written back")
            return
        }
        try inEveryCell(keys.grace(cell:)) { RedisCommand("DEL", $0) }
        #expect(try asker.acquire(unknown, replyKey: keys.reply("r", session: unknown)) == .missing)
        #expect(try asker.sessionExists(unknown) == false)
        // A new instance's first heartbeat on a store without `beat` starts no grace.
        _ = try raw.send(RedisCommand("FLUSHALL"))
        try instance("newcomer").heartbeat()
        #expect(try graceLeft(unknown) == -2)
    }
}
