import Foundation
import Testing
import ViewportRedis
@testable import ViewportService
import ViewportTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Real viewportd processes on a real Redis Cluster (3 primaries, 3 replicas, on loopback):
/// sessions spread over every shard move between instances; a session's slot moved (through
/// `ASK`, then `MOVED`) keeps it; a resharding under load and a primary killed under load lose
/// nothing answered 200.
@Suite(.serialized, .tags(.live))
struct StoreClusterTests {
    static let keys = StoreKeys(prefix: "viewportd:")

    static func environment(_ cluster: RedisTestCluster) -> [String: String] {
        // Every primary as a seed (any one would do). The store timeout is the default's half
        // second: with less, a live shard's round trip slowed by a loaded machine answers a 503
        // of the kind these tests count as the shards not being independent.
        let seeds = cluster.primaryPorts().map { "127.0.0.1:\($0)" }.joined(separator: ",")
        return [
            "STORE_URL": "redis://" + seeds, "STORE_FLUSH_INTERVAL": "0.05", "STORE_LEASE_TIMEOUT": "1", "STORE_TIMEOUT": "0.5",
            "HTTP_DRAIN_TIMEOUT": "5", "HTTP_CONNECTION_TIMEOUT": "10",
        ]
    }

    static let items = listItems(2000, height: 50, reuses: ["row", "ad", "row"])

    /// A 3 + 3 cluster and two viewportd processes on it for `body`, all stopped after.
    static func withTwoInstances(_ body: (RedisTestCluster, ViewportdProcess, ViewportdProcess) throws -> Void) throws {
        let cluster = try RedisTestCluster()
        defer { cluster.stop() }
        let a = try ViewportdProcess(environment: environment(cluster))
        let b = try ViewportdProcess(environment: environment(cluster))
        defer {
            a.process.stop()
            b.process.stop()
        }
        try body(cluster, a, b)
    }

    /// How many of viewportd's session records each primary holds.
    static func sessionsPerPrimary(_ cluster: RedisTestCluster) throws -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for port in cluster.primaryPorts() {
            counts[port] = try cluster.cli(port, ["--scan", "--pattern", "viewportd:session:*"]).split(separator: "\n").count
        }
        return counts
    }

    /// Drives every session on threads until `until`, half of them starting on each instance;
    /// what each saw, in the order of `sessions`.
    static func drive(_ sessions: [(String, ClientModel)], ports: [Int], until: Date, allowResync: Bool) -> [ProcessClusterTests.Outcome] {
        let outcomes = Locked<[ProcessClusterTests.Outcome?]>(Array(repeating: nil, count: sessions.count))
        let finished = onThreads(sessions.count, timeout: 90) { k in
            let (id, model) = sessions[k]
            let order = k % 2 == 0 ? ports : ports.reversed()
            let outcome = ProcessClusterTests.drive(session: id, model: model, ports: order, until: until, allowResync: allowResync)
            outcomes.withLock { $0[k] = outcome }
        }
        #expect(finished)
        return outcomes.get.compactMap { $0 }
    }

    static func summary(_ name: String, _ all: [ProcessClusterTests.Outcome]) -> String {
        let applied = all.map(\.applied).reduce(0, +)
        return "\(name): \(applied) updates answered 200, \(all.map(\.unavailable).reduce(0, +)) 503s from the store, \(all.map(\.conflicts).reduce(0, +)) conflicts (\(all.map(\.resyncs).reduce(0, +)) resyncs), \(all.flatMap(\.errors).count) errors"
    }

    @Test func sessionsOnEveryShardMoveBetweenInstances() throws {
        try Self.withTwoInstances { cluster, a, b in
            let sessions = try ProcessClusterTests.openSessions(24, on: a, items: Self.items)
            let counts = try Self.sessionsPerPrimary(cluster)
            #expect(counts.count == 3 && counts.values.allSatisfy { $0 > 0 }, "sessions on every primary: \(counts)")
            // Every other session's first update reaches the other instance: a handover per session.
            let all = Self.drive(sessions, ports: [b.port, a.port], until: Date().addingTimeInterval(3), allowResync: false)
            print(Self.summary("on a cluster", all))
            #expect(all.count == sessions.count)
            #expect(all.allSatisfy { $0.errors.isEmpty }, "\(all.flatMap(\.errors).prefix(3))")
            #expect(all.map(\.conflicts).reduce(0, +) == 0)
            #expect(all.map(\.unavailable).reduce(0, +) == 0, "\(all.flatMap(\.unavailableDetails).prefix(3))")
            #expect(all.allSatisfy { $0.applied > 5 })
            // Any instance answers every session's state.
            let other = try a.connect()
            for (id, _) in sessions {
                let reply = try other.get("/v1/sessions/\(id)")
                #expect(reply.status == 200, "\(reply.text)")
            }
        }
    }

    /// Moves `slot` from its primary to `target` the way `redis-cli --cluster reshard` does:
    /// importing, migrating, every key, then the new owner on every primary. Meanwhile a script
    /// of the slot's cell answers `TRYAGAIN` (its keys are split, or some it names do not exist
    /// yet), which the client retries for up to a command timeout.
    static func moveSlot(_ slot: Int, in cluster: RedisTestCluster, to target: Int) throws {
        let seed = cluster.primaryPorts()[0]
        guard let source = try cluster.owner(ofSlot: slot, asking: seed), source != target else { return }
        let sourceID = try cluster.nodeID(source), targetID = try cluster.nodeID(target)
        #expect(try cluster.cli(target, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID]) == "OK")
        #expect(try cluster.cli(source, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID]) == "OK")
        let keys = try cluster.cli(source, ["CLUSTER", "GETKEYSINSLOT", String(slot), "1000"]).split(separator: "\n").map(String.init)
        if !keys.isEmpty {
            let migrated = try cluster.cli(source, ["MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "KEYS"] + keys)
            #expect(migrated == "OK" || migrated == "NOKEY", "MIGRATE: \(migrated)")
        }
        #expect(try cluster.cli(target, ["CLUSTER", "SETSLOT", String(slot), "NODE", targetID]) == "OK")
        #expect(try cluster.cli(source, ["CLUSTER", "SETSLOT", String(slot), "NODE", targetID]) == "OK")
        for port in cluster.primaryPorts() where port != source && port != target {
            _ = try cluster.cli(port, ["CLUSTER", "SETSLOT", String(slot), "NODE", targetID])
        }
    }

    @Test func aSessionCreatedBeforeItsSlotMovedIsReadAfter() throws {
        try Self.withTwoInstances { cluster, a, b in
            let (id, initial) = try ProcessClusterTests.openSessions(1, on: a, items: Self.items)[0]
            var model = initial
            let clients = [try a.connect(), try b.connect()]
            var turn = 0
            /// Updated on each instance in turn (a handover each time, through the store), then read
            /// on both.
            func useIt(_ stage: String) throws {
                for _ in 0..<3 {
                    turn += 1
                    let y = Double(turn * 211)
                    let reply = try clients[turn % 2].update(id, #"{"offset":[0,\#(number(y))],"seq":\#(model.seq + 1)}"#)
                    #expect(reply.status == 200, "\(stage), update \(turn): \(reply.text)")
                    guard reply.status == 200 else { return }
                    model.apply(reply.json, offset: [0, y])
                }
                for client in clients { model.check(state: try client.state(id)) }
            }
            try useIt("before")
            let slot = RedisHashSlot.of(Self.keys.session(id))
            let primaries = cluster.primaryPorts()
            let source = try #require(try cluster.owner(ofSlot: slot, asking: primaries[0]))
            let target = try #require(primaries.first { $0 != source })
            // The instances still route the slot to `source`: their first command there is answered
            // `MOVED` (or `ASK` while the slot migrates).
            let moveStarted = Date()
            try Self.moveSlot(slot, in: cluster, to: target)
            print("slot \(slot) moved from \(source) to \(target) in \(String(format: "%.3f", Date().timeIntervalSince(moveStarted))) s")
            #expect(try cluster.owner(ofSlot: slot, asking: primaries[0]) == target)
            #expect(try cluster.cli(target, ["EXISTS", Self.keys.session(id)]) == "1", "the record moved with its slot")
            #expect(try cluster.cli(source, ["EXISTS", Self.keys.session(id)]).hasPrefix("MOVED"), "the old owner redirects")
            try useIt("after")
            #expect(turn == 6)
            // A third instance, which never saw the session, reads it from its new shard.
            let c = try ViewportdProcess(environment: Self.environment(cluster))
            defer { c.process.stop() }
            model.check(state: try c.connect().state(id))
        }
    }

    @Test func sessionsKeepWorkingWhileSlotsAreReshardedUnderLoad() throws {
        try Self.withTwoInstances { cluster, a, b in
            let sessions = try ProcessClusterTests.openSessions(24, on: a, items: Self.items)
            let primaries = cluster.primaryPorts()
            let from = try cluster.nodeID(primaries[0]), to = try cluster.nodeID(primaries[1])
            let reshard = Locked<String>("")
            let resharder = Thread {
                usleep(500_000)
                // A third of the slots, and so of the cells and sessions, from one primary to another.
                let child = try? ChildProcess(
                    "redis-cli",
                    ["--cluster", "reshard", "127.0.0.1:\(primaries[0])", "--cluster-from", from, "--cluster-to", to, "--cluster-slots", "3000",
                     "--cluster-yes"])
                let code = child?.waitForExit(timeout: 60)
                reshard.withLock { $0 = "exit \(code.map(String.init) ?? "none")" }
            }
            let started = Date()
            resharder.start()
            let all = Self.drive(sessions, ports: [a.port, b.port], until: started.addingTimeInterval(6), allowResync: false)
            #expect(eventually(within: 60) { !reshard.get.isEmpty })
            print(Self.summary("resharding 3000 slots under load (\(reshard.get))", all))
            #expect(reshard.get == "exit 0")
            #expect(cluster.waitUntilOK(timeout: 10))
            let counts = try Self.sessionsPerPrimary(cluster)
            print("sessions per primary after the resharding: \(counts)")
            #expect(all.allSatisfy { $0.errors.isEmpty }, "\(all.flatMap(\.errors).prefix(3))")
            #expect(all.map(\.conflicts).reduce(0, +) == 0)
            // Through ASK and MOVED: no 503 (a script whose keys a migration splits for longer than
            // the client's TRYAGAIN retries would answer one).
            #expect(all.map(\.unavailable).reduce(0, +) == 0, "\(all.flatMap(\.unavailableDetails).prefix(3))")
            #expect(all.allSatisfy { $0.applied > 5 })
        }
    }

    /// A primary killed under load: its replica takes over (`cluster-node-timeout` 1 s, then an
    /// election); nothing answered 200 is lost. Only the sessions of the cells on the killed
    /// primary wait for it (503 with `Retry-After`, re-confirmed before they answer again); the
    /// sessions on the other shards are served throughout, without one 503.
    @Test func aPrimaryKilledUnderLoadLosesNothingAnswered() throws {
        try Self.withTwoInstances { cluster, a, b in
            let sessions = try ProcessClusterTests.openSessions(24, on: a, items: Self.items)
            // Every replica has had its first sync (a replica that never had one cannot take over:
            // Redis takes its data as too old).
            for port in cluster.primaryPorts() { #expect(try eventually(within: 20) { try cluster.cli(port, ["WAIT", "1", "1000"]) == "1" }) }
            let victim = cluster.primaryPorts()[0]
            let onVictim = try sessions.map { try cluster.owner(ofSlot: RedisHashSlot.of(Self.keys.session($0.0)), asking: victim) == victim }
            let killedAt = Locked<Date?>(nil)
            let promotedAt = Locked<Date?>(nil)
            let killer = Thread {
                usleep(1_000_000)
                for node in cluster.nodes where node.port == victim {
                    node.process.signal(SIGKILL)
                    _ = node.process.waitForExit(timeout: 5)
                }
                let killed = Date()
                killedAt.withLock { $0 = killed }
                // The replica is promoted: three primaries again.
                while Date().timeIntervalSince(killed) < 20 {
                    if cluster.primaryPorts().count == 3 {
                        promotedAt.withLock { $0 = Date() }
                        return
                    }
                    usleep(20_000)
                }
            }
            let started = Date()
            killer.start()
            let all = Self.drive(sessions, ports: [a.port, b.port], until: started.addingTimeInterval(8), allowResync: true)
            let promoted = cluster.waitUntilOK(timeout: 60)
            if !promoted, let seed = cluster.primaryPorts().first { print("no new primary: \((try? cluster.cli(seed, ["CLUSTER", "NODES"])) ?? "?")") }
            let victims = zip(all, onVictim).filter(\.1).map(\.0)
            let others = zip(all, onVictim).filter { !$0.1 }.map(\.0)
            print(Self.summary("a primary killed under load, its \(victims.count) sessions", victims))
            print(Self.summary("  the \(others.count) sessions on the other shards", others))
            if let killed = killedAt.get, let promotion = promotedAt.get {
                print("  replica promoted \(String(format: "%.2f", promotion.timeIntervalSince(killed))) s after the kill")
            }
            for detail in victims.flatMap(\.unavailableDetails).prefix(3) { print("  store 503 at \(detail)") }
            for detail in others.flatMap(\.unavailableDetails).prefix(6) { print("  other shards' store 503 at \(detail)") }
            if let longest = victims.compactMap(\.failover).max() {
                print("  failover window of the killed primary's sessions (first 503 to the next 200): up to \(String(format: "%.2f", longest)) s")
            }
            #expect(killedAt.get != nil)
            #expect(promoted, "the replica took over")
            #expect(victims.count > 0 && others.count > 0, "sessions on the killed primary and on the others")
            #expect(all.allSatisfy { $0.errors.isEmpty }, "\(all.flatMap(\.errors).prefix(3))")
            // Every session goes on after the failover; one whose last writes the replica had not
            // got yet resyncs (a 409 with `resync`, as after an instance's crash), and only then.
            #expect(all.allSatisfy { $0.applied > 10 })
            #expect(victims.map(\.conflicts).reduce(0, +) <= victims.count)
            // The other shards' sessions: not one 503 from the kill on (before it, a first handover
            // that a busy machine slows past `store.handoverWait` may answer one), not one 409.
            let sinceKill = (killedAt.get ?? started).timeIntervalSince(started)
            let othersAfterKill = others.flatMap(\.unavailableAt).filter { $0 >= sinceKill }
            #expect(othersAfterKill.isEmpty, "\(othersAfterKill.count) 503s at \(othersAfterKill.prefix(5)) s: \(others.flatMap(\.unavailableDetails).prefix(3))")
            if !othersAfterKill.isEmpty {
                for (name, instance) in [("a", a), ("b", b)] {
                    for line in instance.process.output.split(separator: "\n") where line.contains(" warning ") || line.contains(" error ") {
                        print("  \(name): \(line.prefix(400))")
                    }
                }
            }
            #expect(others.map(\.conflicts).reduce(0, +) == 0)
        }
    }
}
