import Testing

@testable import ViewportRedis

/// Slots, the slot map and redirections, without a server.
struct RedisHashSlotTests {
    @Test func crc16IsXmodemAsTheClusterSpecificationSays() {
        // The specification's test vector.
        #expect(RedisHashSlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(RedisHashSlot.crc16([]) == 0)
        #expect(RedisHashSlot.of("123456789") == 0x31C3 & 0x3FFF)
        // CLUSTER KEYSLOT's answers (Redis 7.0).
        #expect(RedisHashSlot.of("foo") == 12182)
        #expect(RedisHashSlot.of("bar") == 5061)
        #expect(RedisHashSlot.of("") == 0)
    }

    @Test func theFirstNonEmptyBracePairIsTheHashTag() {
        func slot(_ s: String) -> Int { RedisHashSlot.of(s) }
        #expect(slot("{user1000}.following") == slot("user1000"))
        #expect(slot("{user1000}.followers") == slot("user1000"))
        // The specification's edge cases: only the first `{` and the first `}` after it count;
        // an empty tag means the whole key.
        #expect(slot("foo{}{bar}") == Int(RedisHashSlot.crc16(Array("foo{}{bar}".utf8)) & 0x3FFF))
        #expect(slot("foo{{bar}}zap") == slot("{bar"))
        #expect(slot("foo{bar}{zap}") == slot("bar"))
        #expect(slot("{}") == Int(RedisHashSlot.crc16(Array("{}".utf8)) & 0x3FFF))
        #expect(slot("no}tag{") == Int(RedisHashSlot.crc16(Array("no}tag{".utf8)) & 0x3FFF))
        #expect(slot("a{b") == Int(RedisHashSlot.crc16(Array("a{b".utf8)) & 0x3FFF))
        #expect(slot("session:{abc}") == slot("lease:{abc}"))
    }

    @Test func everySlotHasAShortTag() {
        for s in 0..<RedisHashSlot.count {
            let tag = RedisHashSlot.tag(forSlot: s)
            #expect(!tag.isEmpty && tag.count <= 4)
            #expect(RedisHashSlot.of("beat:{\(tag)}") == s)
        }
    }

    @Test func commandsNameTheirKeys() {
        let script = RedisScript("return 1")
        #expect(RedisCommand.evalsha(script, keys: ["a", "b"], arguments: ["x"]).keys == [Array("a".utf8), Array("b".utf8)])
        #expect(RedisCommand.evalsha(script, keys: [], arguments: ["x"]).keys.isEmpty)
        #expect(RedisCommand("GET", "k").keys == [Array("k".utf8)])
        #expect(RedisCommand("MSET", "a", "1", "b", "2").keys == [Array("a".utf8), Array("b".utf8)])
        #expect(RedisCommand("BLPOP", "a", "b", "1").keys == [Array("a".utf8), Array("b".utf8)])
        #expect(RedisCommand("DEL", "a", "b").keys.count == 2)
        #expect(RedisCommand("PING").keys.isEmpty && RedisCommand("CLUSTER", "SLOTS").keys.isEmpty && RedisCommand("exec").keys.isEmpty)
    }

    static func node(_ port: Int) -> RedisReply {
        .array([.string(Array("127.0.0.1".utf8)), .integer(Int64(port)), .string(Array("id\(port)".utf8)), .array([])])
    }

    @Test func theSlotMapIsReadFromClusterSlots() throws {
        let queried = RedisSlotMap.Node(host: "10.0.0.9", port: 7000)
        let reply = RedisReply.array([
            .array([.integer(0), .integer(5460), Self.node(7000), Self.node(7003)]),
            .array([.integer(5461), .integer(10922), Self.node(7001)]),
            // A node that does not know its address answers an empty host: the queried node's.
            .array([.integer(10923), .integer(16383), .array([.string([]), .integer(7002), .string([])])]),
        ])
        let map = try RedisSlotMap.parse(slots: reply, queried: queried)
        #expect(map.coversEverySlot)
        #expect(map.node(forSlot: 0) == RedisSlotMap.Node(host: "127.0.0.1", port: 7000))
        #expect(map.node(forSlot: 5460)?.port == 7000 && map.node(forSlot: 5461)?.port == 7001)
        #expect(map.node(forSlot: 16383) == RedisSlotMap.Node(host: "10.0.0.9", port: 7002))
        #expect(map.nodes.count == 3)
        var moved = map
        moved.assign(slot: 5460, to: RedisSlotMap.Node(host: "127.0.0.1", port: 7001))
        #expect(moved.node(forSlot: 5460)?.port == 7001 && moved.nodes.count == 3)
        // A gap: uncovered slots have no node.
        let partial = try RedisSlotMap.parse(slots: .array([.array([.integer(0), .integer(99), Self.node(7000)])]), queried: queried)
        #expect(!partial.coversEverySlot && partial.node(forSlot: 100) == nil && partial.node(forSlot: 99)?.port == 7000)
        for bad: RedisReply in [.error("ERR x"), .array([.array([.integer(5), .integer(1), Self.node(1)])]), .array([.array([.integer(0), .integer(16384), Self.node(1)])])] {
            #expect(throws: RedisError.self) { try RedisSlotMap.parse(slots: bad, queried: queried) }
        }
    }

    static func map(_ pairs: [(String, RedisReply)]) -> RedisReply {
        .array(pairs.flatMap { [RedisReply.string(Array($0.0.utf8)), $0.1] })
    }

    @Test func theSlotMapIsReadFromClusterShards() throws {
        func node(_ port: Int, _ role: String) -> RedisReply {
            Self.map([("id", .string(Array("n\(port)".utf8))), ("port", .integer(Int64(port))), ("ip", .string(Array("127.0.0.1".utf8))),
                      ("endpoint", .string(Array("127.0.0.1".utf8))), ("role", .string(Array(role.utf8))), ("health", .string(Array("online".utf8)))])
        }
        let reply = RedisReply.array([
            Self.map([("slots", .array([.integer(0), .integer(99), .integer(200), .integer(16383)])), ("nodes", .array([node(7003, "replica"), node(7000, "master")]))]),
            Self.map([("slots", .array([.integer(100), .integer(199)])), ("nodes", .array([node(7001, "master")]))]),
            // A shard without slots (a new primary) names no slot.
            Self.map([("slots", .array([])), ("nodes", .array([node(7002, "master")]))]),
        ])
        let map = try RedisSlotMap.parse(shards: reply, queried: RedisSlotMap.Node(host: "x", port: 1))
        #expect(map.coversEverySlot && map.nodes.count == 2)
        #expect(map.node(forSlot: 50)?.port == 7000 && map.node(forSlot: 150)?.port == 7001 && map.node(forSlot: 16383)?.port == 7000)
    }

    @Test func redirectionsAreRead() {
        let here = RedisSlotMap.Node(host: "10.1.1.1", port: 7000)
        #expect(RedisRedirection(.error("MOVED 3999 127.0.0.1:6381"), from: here) == .moved(slot: 3999, to: .init(host: "127.0.0.1", port: 6381)))
        #expect(RedisRedirection(.error("ASK 3999 127.0.0.1:6381"), from: here) == .ask(slot: 3999, to: .init(host: "127.0.0.1", port: 6381)))
        #expect(RedisRedirection(.error("MOVED 1 :7002"), from: here) == .moved(slot: 1, to: .init(host: "10.1.1.1", port: 7002)))
        #expect(RedisRedirection(.error("MOVED 1 ::1:7002"), from: here) == .moved(slot: 1, to: .init(host: "::1", port: 7002)))
        #expect(RedisRedirection(.error("TRYAGAIN Multiple keys request during rehashing of slot"), from: here) == .tryAgain)
        #expect(RedisRedirection(.error("CLUSTERDOWN The cluster is down"), from: here) == .clusterDown("CLUSTERDOWN The cluster is down"))
        #expect(RedisRedirection(.error("MOVED 16384 h:1"), from: here) == nil)
        #expect(RedisRedirection(.error("ERR MOVED"), from: here) == nil)
        #expect(RedisRedirection(.string(Array("MOVED 1 h:1".utf8)), from: here) == nil)
    }

    @Test func seedURLsNameSeveralNodesWithOnePasswordAndDatabaseZero() throws {
        let seeds = try RedisEndpoint.seeds(url: "redis://app:pw@h1:7000,h2,[::1]:7002")
        #expect(seeds == [
            RedisEndpoint(host: "h1", port: 7000, user: "app", password: "pw"), RedisEndpoint(host: "h2", port: 6379, user: "app", password: "pw"),
            RedisEndpoint(host: "::1", port: 7002, user: "app", password: "pw"),
        ])
        #expect(try RedisEndpoint.seeds(url: "redis://h:1/0").count == 1)
        #expect(try RedisEndpoint.seeds(url: "redis://h:1,g:2/0").count == 2)
        #expect(try RedisEndpoint.seeds(url: "redis://h:1/4") == [RedisEndpoint(host: "h", port: 1, database: 4)])
        for (url, fragment) in [
            ("redis://h:1,g:2/3", "only database 0"), ("redis://h:1,", "host is empty"), ("redis://h:1,g:x", "port"), ("redis://,h:1", "host is empty"),
        ] {
            #expect {
                try RedisEndpoint.seeds(url: url)
            } throws: { error in
                (error as? RedisURLError)?.message.contains(fragment) == true
            }
        }
        // One server is expected where a single endpoint is asked for.
        #expect {
            try RedisEndpoint(url: "redis://h:1,g:2")
        } throws: { error in
            (error as? RedisURLError)?.message.contains("2 hosts") == true
        }
    }
}
