import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// The reclaim script, driven key by key on a real redis-server like the grace: a release whose
/// answer was lost may or may not have run; the reclaim takes the session back at `epoch + 2`
/// either way (unless another instance took it meanwhile), and a release that lands after the
/// reclaim changes nothing.
extension OutageGraceTests {
    func write(_ id: String, on store: RedisStateStore, epoch: Int64, version: UInt64, create: Bool = false, release: Bool = false)
        -> RedisStateStore.Outcome
    {
        let ticket = SessionOwnership.WriteTicket(epoch: epoch, version: version, handleLimit: 1024, create: create, sentAt: 0)
        return store.write([RedisStateStore.Write(session: id, ticket: ticket, snapshot: Array("v\(version)".utf8), layouts: [], release: release)])
            .first ?? .failed
    }

    func field(_ id: String, _ name: String) throws -> String? { try raw.send(RedisCommand("HGET", keys.session(id), name)).text }

    func lease(_ id: String) throws -> String? { try raw.send(RedisCommand("GET", keys.lease(id))).text }

    @Test func aReleaseThatDidNotRunIsFencedByTheReclaim() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let id = "0123456789abcdef0123456789abcdef"
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 1, version: 1, create: true)))
        #expect(owner.reclaim([(id, 1)]) == [.ok(epoch: 3)])
        #expect(try lease(id) == "owner|3")
        #expect(try field(id, "epoch") == "3")
        // The release sent before, landing now: refused, the session stays the owner's.
        #expect(write(id, on: owner, epoch: 1, version: 2, release: true) == .lost)
        #expect(try lease(id) == "owner|3" && field(id, "free") == nil)
        // The same reclaim again (its answer was lost too): the same answer.
        #expect(owner.reclaim([(id, 1)]) == [.ok(epoch: 3)])
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 3, version: 3)))
    }

    @Test func aReleaseThatRanIsTakenBackWhileNobodyTookTheSession() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let id = "fedcba9876543210fedcba9876543210"
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 1, version: 1, create: true)))
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 1, version: 2, release: true)))
        #expect(try field(id, "free") == "1" && field(id, "epoch") == "2")
        #expect(owner.reclaim([(id, 1)]) == [.ok(epoch: 3)])
        #expect(try lease(id) == "owner|3" && field(id, "free") == nil && field(id, "snap") == "v2")
    }

    @Test func aSessionAnotherInstanceTookIsLostToTheReclaim() throws {
        defer { redis.stop() }
        let owner = instance("owner"), other = instance("other")
        try owner.heartbeat()
        try other.heartbeat()
        let id = "00112233445566778899aabbccddeeff"
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 1, version: 1, create: true)))
        #expect([.ok, .layoutMissing].contains(write(id, on: owner, epoch: 1, version: 2, release: true)))
        guard case .acquired(let epoch, _, _, _, _) = try other.acquire(id, replyKey: keys.reply("r", session: id)) else {
            Issue.record("a released session is taken")
            return
        }
        #expect(epoch == 3)
        #expect(owner.reclaim([(id, 1)]) == [.lost])
        #expect(try lease(id) == "other|3")
        // Taken and released again by the other instance: still not the owner's.
        #expect([.ok, .layoutMissing].contains(write(id, on: other, epoch: 3, version: 3, release: true)))
        #expect(owner.reclaim([(id, 1)]) == [.lost])
        // Deleted: a tombstone, not the owner's either.
        let deleted = "99887766554433221100ffeeddccbbaa"
        #expect([.ok, .layoutMissing].contains(write(deleted, on: owner, epoch: 1, version: 1, create: true)))
        #expect(try owner.delete(deleted, epoch: 1) == .ok)
        #expect(owner.reclaim([(deleted, 1)]) == [.lost])
        #expect(owner.reclaim([("abababababababababababababababab", 1)]) == [.missing])
    }
}
