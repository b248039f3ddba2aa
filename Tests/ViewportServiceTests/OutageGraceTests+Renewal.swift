import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// Lease renewals of several sessions in one round (``StoreScripts/renew``, one script call for
/// all of them on one server): each session is answered on its own.
extension OutageGraceTests {
    /// Script calls the server ran since its statistics were reset (an `EVALSHA` refused with
    /// `NOSCRIPT` is sent again as `EVAL`: one call).
    func scriptCalls() throws -> Int {
        let stats = try raw.send(RedisCommand("INFO", "commandstats")).text ?? ""
        func field(_ command: String, _ name: String) -> Int {
            // `cmdstat_<command>:calls=N,usec=N,…,failed_calls=N`
            guard let line = stats.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(command):") }) else { return 0 }
            let pairs = line.drop { $0 != ":" }.dropFirst().split(separator: ",").map { $0.split(separator: "=") }
            return pairs.first { $0.first.map(String.init) == name }.flatMap { $0.last }.flatMap { Int($0) } ?? 0
        }
        return field("evalsha", "calls") - field("evalsha", "failed_calls") + field("eval", "calls")
    }

    @Test func eachSessionOfARoundsRenewalsIsAnsweredOnItsOwn() throws {
        defer { redis.stop() }
        let owner = instance("owner")
        let ids = ["kept", "lapsed", "taken", "gone", "read"]
        for id in ids { #expect(open(id, on: owner) == .ok) }
        // The lease of one lapsed (nobody took the session), another instance took one (a newer
        // epoch), the store lost one, and one was read since its last renewal.
        _ = try raw.send(RedisCommand("DEL", keys.lease("lapsed")))
        _ = try raw.send(RedisCommand("HSET", keys.session("taken"), "epoch", "2"))
        _ = try raw.send(RedisCommand("SET", keys.lease("taken"), "other|2", "PX", 2000))
        _ = try raw.send(RedisCommand("DEL", keys.session("gone"), keys.lease("gone")))
        _ = try raw.send(RedisCommand("PEXPIRE", keys.session("read"), 5000))
        _ = try raw.send(RedisCommand("PEXPIRE", keys.session("kept"), 5000))
        _ = try raw.send(RedisCommand("CONFIG", "RESETSTAT"))
        let outcomes = owner.round(renewals: ids.map { ($0, 1, $0 == "read", []) }).renewals
        #expect(outcomes == [.ok, .ok, .lost, .missing, .ok])
        // The lapsed lease is this owner's again; the other instance's lease is untouched.
        #expect(try raw.send(RedisCommand("GET", keys.lease("lapsed"))).text == "owner|1")
        #expect(try raw.send(RedisCommand("GET", keys.lease("taken"))).text == "other|2")
        #expect((try raw.send(RedisCommand("PTTL", keys.lease("kept"))).integer ?? 0) > 1000)
        // Only the session read since its last renewal lives on for a session's lifetime.
        #expect((try raw.send(RedisCommand("PTTL", keys.session("read"))).integer ?? 0) > 50_000)
        #expect((try raw.send(RedisCommand("PTTL", keys.session("kept"))).integer ?? 0) <= 5000)
        // One script call for the five.
        #expect(try scriptCalls() == 1)
    }
}
