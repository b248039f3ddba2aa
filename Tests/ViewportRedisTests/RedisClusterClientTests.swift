import Foundation
import Synchronization
import Testing
import ViewportTestSupport

@testable import ViewportRedis

/// The cluster client against a real Redis Cluster (3 primaries, 3 replicas) on loopback, each
/// test with its own.
@Suite(.serialized)
struct RedisClusterClientTests {
    static func client(_ cluster: RedisTestCluster, timeout: Double = 1) throws -> RedisClusterClient {
        RedisClusterClient(seeds: try RedisEndpoint.seeds(url: cluster.seedURL), connectTimeout: timeout, commandTimeout: timeout, capacity: 4, retryInterval: 0.1)
    }

    static func text(_ s: String) -> RedisReply { .string(Array(s.utf8)) }

    /// Moves `slot` from the primary on `from` to the one on `to` as `redis-cli --cluster
    /// reshard` does, the keys listed in `migrate` first (all of the slot's keys when nil); with
    /// `finish` false the slot is left migrating.
    static func moveSlot(_ cluster: RedisTestCluster, _ slot: Int, from: Int, to: Int, migrate: [String]? = nil, finish: Bool = true) throws {
        let fromID = try cluster.nodeID(from)
        let toID = try cluster.nodeID(to)
        #expect(try cluster.cli(to, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", fromID]) == "OK")
        #expect(try cluster.cli(from, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", toID]) == "OK")
        let keys = try migrate ?? cluster.cli(from, ["CLUSTER", "GETKEYSINSLOT", String(slot), "1000"]).split(separator: "\n").map(String.init)
        if !keys.isEmpty {
            let answer = try cluster.cli(from, ["MIGRATE", "127.0.0.1", String(to), "", "0", "5000", "KEYS"] + keys)
            #expect(answer == "OK", "MIGRATE answered \(answer)")
        }
        guard finish else { return }
        for port in [to, from] + cluster.primaryPorts().filter({ $0 != to && $0 != from }) {
            #expect(try cluster.cli(port, ["CLUSTER", "SETSLOT", String(slot), "NODE", toID]) == "OK")
        }
    }

    @Test func keysAreRoutedToTheirSlotsOnEveryShard() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        let keys = (0..<300).map { "key:\($0)" }
        for key in keys { #expect(try client.send(RedisCommand("SET", key, "v-" + key)) == .status("OK")) }
        for key in keys { #expect(try client.send(RedisCommand("GET", key)) == Self.text("v-" + key)) }
        #expect(client.isCluster == true)
        // Each primary holds the keys of its slots, and the three hold them all.
        let primaries = cluster.primaryPorts()
        #expect(primaries.count == 3)
        let counts = try primaries.map { Int(try cluster.cli($0, ["DBSIZE"])) ?? -1 }
        #expect(counts.allSatisfy { $0 > 50 } && counts.reduce(0, +) == keys.count, "keys per primary: \(counts)")
        // A blocking command waits on the node of its key, with its own timeout.
        let list = try #require(keys.first { client.slotMap?.node(forSlot: RedisHashSlot.of($0)) != client.slotMap?.nodes.first }) + ":list"
        #expect(try client.send(RedisCommand("BLPOP", list, "0.2"), timeout: 1) == .null)
        #expect(try client.send(RedisCommand("RPUSH", list, "x")) == .integer(1))
        #expect(try client.send(RedisCommand("BLPOP", list, "1"), timeout: 2) == .array([Self.text(list), Self.text("x")]))
        // The slots agree with the server's.
        for key in keys.prefix(40) + ["{user1000}.following", "foo{{bar}}zap", "foo{}{bar}", "a{b}c{d}"] {
            #expect(try client.send(RedisCommand("CLUSTER", "KEYSLOT", key)) == .integer(Int64(RedisHashSlot.of(key))))
        }
    }

    @Test func aPipelineAcrossNodesAnswersInTheOrderOfItsCommands() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        let script = RedisScript("return {KEYS[1], redis.call('INCRBY', KEYS[1], ARGV[1])}")
        var commands: [RedisCommand] = []
        for k in 0..<200 {
            commands.append(RedisCommand("SET", "p:\(k)", String(k)))
            commands.append(.evalsha(script, keys: ["p:\(k)"], arguments: [1000]))
            if k % 50 == 0 { commands.append(RedisCommand("PING")) }
        }
        // A transaction goes to one node as a whole.
        commands += [RedisCommand("MULTI"), RedisCommand("RPUSH", "{q}list", "a"), RedisCommand("LRANGE", "{q}list", 0, -1), RedisCommand("DEL", "{q}list"), RedisCommand("EXEC")]
        let replies = try client.pipeline(commands)
        #expect(replies.count == commands.count)
        var r = 0
        for k in 0..<200 {
            #expect(replies[r] == .status("OK"))
            #expect(replies[r + 1] == .array([Self.text("p:\(k)"), .integer(Int64(k + 1000))]))
            r += 2
            if k % 50 == 0 {
                #expect(replies[r] == .status("PONG"))
                r += 1
            }
        }
        #expect(replies[r...].map(\.description) == ["OK", "QUEUED", "QUEUED", "QUEUED", "[1, [\"a\"], 1]"])
        // Every node forgot its scripts: each sends them again (NOSCRIPT, then EVAL).
        for port in cluster.primaryPorts() { _ = try cluster.cli(port, ["SCRIPT", "FLUSH"]) }
        let again = try client.pipeline((0..<200).map { RedisCommand.evalsha(script, keys: ["p:\($0)"], arguments: [1]) })
        #expect(again == (0..<200).map { RedisReply.array([Self.text("p:\($0)"), .integer(Int64($0 + 1001))]) })
    }

    @Test func keysOfDifferentSlotsInOneCommandAreRefusedBeforeSending() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        #expect(RedisHashSlot.of("a") != RedisHashSlot.of("b"))
        let script = RedisScript("return redis.call('MSET', KEYS[1], '1', KEYS[2], '2')")
        for command in [RedisCommand("MGET", "a", "b"), .evalsha(script, keys: ["a", "b"], arguments: [])] {
            #expect {
                try client.pipeline([RedisCommand("SET", "c", "1"), command])
            } throws: { error in
                guard case .crossSlot(let message) = error as? RedisError else { return false }
                return message.contains("\"a\"") && message.contains("\"b\"") && "\(error)".contains("hash tag")
            }
        }
        #expect(try client.send(RedisCommand("EXISTS", "c")) == .integer(0), "nothing of a refused pipeline is sent")
        #expect(try client.send(.evalsha(script, keys: ["{t}a", "{t}b"], arguments: [])) == .status("OK"))
        #expect(try client.send(RedisCommand("MGET", "{t}a", "{t}b")) == .array([Self.text("1"), Self.text("2")]))
    }

    @Test func aKeyWrittenBeforeItsSlotMovedIsReadAfterThroughMoved() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        let keys = ["{moving}a", "{moving}b", "{moving}c"]
        for key in keys { #expect(try client.send(RedisCommand("SET", key, "before-" + key)) == .status("OK")) }
        let slot = RedisHashSlot.of("moving")
        let from = try #require(client.slotMap?.node(forSlot: slot)?.port)
        let to = try #require(cluster.primaryPorts().first { $0 != from })
        try Self.moveSlot(cluster, slot, from: from, to: to)
        // The client's map still names the old owner: it answers MOVED, the client follows and
        // corrects its map.
        #expect(client.slotMap?.node(forSlot: slot)?.port == from)
        let replies = try client.pipeline(keys.map { RedisCommand("GET", $0) } + [RedisCommand("GET", "elsewhere")])
        #expect(replies == keys.map { Self.text("before-" + $0) } + [.null])
        #expect(client.slotMap?.node(forSlot: slot)?.port == to)
        #expect(try cluster.cli(to, ["GET", "{moving}a"]) == "before-{moving}a")
    }

    @Test func aMigratingSlotIsServedThroughAskWithoutChangingTheMap() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        let script = RedisScript("return redis.call('INCR', KEYS[1])")
        #expect(try client.pipeline([RedisCommand("SET", "{mig}moved", "10"), RedisCommand("SET", "{mig}stays", "20")]).allSatisfy { $0 == .status("OK") })
        let slot = RedisHashSlot.of("mig")
        let from = try #require(client.slotMap?.node(forSlot: slot)?.port)
        let to = try #require(cluster.primaryPorts().first { $0 != from })
        // Half-way: the slot migrates, one key is on the importing node already.
        try Self.moveSlot(cluster, slot, from: from, to: to, migrate: ["{mig}moved"], finish: false)
        let replies = try client.pipeline([
            RedisCommand("GET", "{mig}moved"), RedisCommand("GET", "{mig}stays"), .evalsha(script, keys: ["{mig}moved"], arguments: []),
            RedisCommand("SET", "{mig}new", "30"), RedisCommand("INCR", "{mig}stays"),
        ])
        #expect(replies == [Self.text("10"), Self.text("20"), .integer(11), .status("OK"), .integer(21)])
        // ASK leaves the map as it is; the new key went to the importing node.
        #expect(client.slotMap?.node(forSlot: slot)?.port == from)
        #expect(try cluster.cli(to, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]) == "2")
        #expect(try cluster.cli(from, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]) == "1")
        // The migration ends: the client follows MOVED from then on.
        try Self.moveSlot(cluster, slot, from: from, to: to, migrate: ["{mig}stays"], finish: true)
        #expect(try client.send(RedisCommand("MGET", "{mig}moved", "{mig}stays", "{mig}new")) == .array([Self.text("11"), Self.text("21"), Self.text("30")]))
        #expect(client.slotMap?.node(forSlot: slot)?.port == to)
    }

    @Test func aKilledPrimaryIsReplacedByItsReplicaAndTheClientContinues() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster, timeout: 0.5)
        let keys = (0..<60).map { "f:\($0)" }
        #expect(try client.pipeline(keys.map { RedisCommand("SET", $0, "v" + $0) }).allSatisfy { $0 == .status("OK") })
        let slot = RedisHashSlot.of(keys[0])
        let victim = try #require(client.slotMap?.node(forSlot: slot)?.port)
        // Every write reached the replicas before the kill.
        for port in cluster.primaryPorts() { #expect(try eventually(within: 10) { try cluster.cli(port, ["WAIT", "1", "1000"]) == "1" }) }
        let node = try #require(cluster.nodes.first { $0.port == victim })
        node.process.signal(SIGKILL)
        _ = node.process.waitForExit(timeout: 5)
        // A pipeline across every shard: the dead primary's commands fail, the others' are
        // answered (``RedisClusterClient/pipelineResults(_:)``); `pipeline` fails as a whole.
        let results = client.pipelineResults(keys.map { RedisCommand("GET", $0) })
        let onVictim = keys.map { client.slotMap?.node(forSlot: RedisHashSlot.of($0))?.port == victim }
        for ((key, result), dead) in zip(zip(keys, results), onVictim) {
            switch result {
            case .success(let reply): #expect(!dead && reply == Self.text("v" + key), "\(key): \(reply)")
            case .failure(let error): #expect(dead, "\(key) on a live primary failed: \(error)")
            }
        }
        #expect(onVictim.contains(true) && onVictim.contains(false))
        #expect(throws: RedisError.self) { try client.pipeline(keys.map { RedisCommand("GET", $0) }) }
        // Until the replica is promoted (cluster-node-timeout, then an election), commands for
        // its slots fail; then the client finds the new primary and every key is there.
        let started = Date()
        var failures = 0
        let recovered = eventually(within: 20, every: 0.05) {
            do {
                return try client.send(RedisCommand("GET", keys[0])) == Self.text("v" + keys[0])
            } catch {
                failures += 1
                return false
            }
        }
        let window = Date().timeIntervalSince(started)
        #expect(recovered, "no new primary after \(window) s")
        // With cluster-node-timeout 1 s the replica takes over in about 2 s.
        #expect(window < 10, "the failover took \(window) s")
        #expect(failures > 0, "the first command after the kill must find the primary gone")
        let promoted = try #require(client.slotMap?.node(forSlot: slot)?.port)
        #expect(promoted != victim)
        // The other primaries may still say CLUSTERDOWN until gossip tells them of the promotion.
        #expect(eventually(within: 10) {
            cluster.nodes.filter { $0.process.isRunning }.allSatisfy { (try? cluster.cli($0.port, ["CLUSTER", "INFO"]))?.contains("cluster_state:ok") == true }
        })
        #expect(try client.pipeline(keys.map { RedisCommand("GET", $0) }) == keys.map { Self.text("v" + $0) })
        #expect(try client.send(RedisCommand("SET", keys[0], "after")) == .status("OK"))
        #expect(try cluster.cli(promoted, ["GET", keys[0]]) == "after")
    }

    @Test func reshardingUnderLoadLosesAndRepeatsNoWrite() throws {
        let cluster = try RedisTestCluster()
        let client = try Self.client(cluster)
        let keys = (0..<64).map { "load:\($0)" }
        #expect(try client.send(RedisCommand("PING")) == .status("PONG"))
        let ports = cluster.primaryPorts()
        let from = try #require(client.slotMap.flatMap { map in ports.first { port in keys.contains { map.node(forSlot: RedisHashSlot.of($0))?.port == port } } })
        let to = try #require(ports.first { $0 != from })
        let ownersBefore = keys.map { client.slotMap?.node(forSlot: RedisHashSlot.of($0))?.port }
        let done = Atomic<Bool>(false)
        let acknowledged = Mutex([Int](repeating: 0, count: keys.count))
        let failures = Mutex<[String]>([])
        let writer = Thread {
            var round = 0
            while !done.load(ordering: .relaxed) && round < 100_000 {
                round += 1
                do {
                    let replies = try client.pipeline(keys.map { RedisCommand("INCR", $0) })
                    acknowledged.withLock { counts in
                        for (k, reply) in replies.enumerated() where reply.integer != nil { counts[k] += 1 }
                    }
                    if let bad = replies.first(where: { $0.integer == nil }) { failures.withLock { $0.append("\(bad)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        writer.start()
        let reshard = try ChildProcess(
            "redis-cli",
            ["--cluster", "reshard", "127.0.0.1:\(from)", "--cluster-from", try cluster.nodeID(from), "--cluster-to", try cluster.nodeID(to),
             "--cluster-slots", "2000", "--cluster-yes", "--cluster-pipeline", "5"])
        let status = reshard.waitForExit(timeout: 120)
        done.store(true, ordering: .relaxed)
        #expect(eventually(within: 10) { writer.isFinished })
        #expect(status == 0, "reshard: \(reshard.output.suffix(2000))")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        // Each key holds exactly the increments the client saw acknowledged.
        let counts = acknowledged.withLock { $0 }
        #expect(try client.pipeline(keys.map { RedisCommand("GET", $0) }) == counts.map { Self.text(String($0)) })
        #expect(counts.allSatisfy { $0 > 10 }, "rounds per key: \(counts)")
        #expect(cluster.waitUntilOK(timeout: 10))
        let ownersAfter = keys.map { client.slotMap?.node(forSlot: RedisHashSlot.of($0))?.port }
        #expect(try ownersAfter == keys.map { key in try cluster.owner(ofSlot: RedisHashSlot.of(key), asking: to) })
        #expect(zip(ownersBefore, ownersAfter).contains { $0 == from && $1 == to }, "some of the keys moved under load")
    }

    @Test func aServerWithoutClusterModeIsServedAsOneNodeWithItsDatabase() throws {
        let server = try RedisTestServer()
        let client = RedisClusterClient(seeds: try RedisEndpoint.seeds(url: server.url + "/2"), connectTimeout: 0.5, commandTimeout: 0.5, capacity: 2)
        #expect(try client.pipeline([RedisCommand("SET", "a", "1"), RedisCommand("SET", "b", "2"), RedisCommand("MGET", "a", "b")]).last == .array([Self.text("1"), Self.text("2")]))
        #expect(client.isCluster == false)
        #expect(try server.cli(["-n", "2", "GET", "b"]) == "2")
        #expect(try client.send(RedisCommand("BLPOP", "empty", "0.2"), timeout: 1) == .null)
    }
}
