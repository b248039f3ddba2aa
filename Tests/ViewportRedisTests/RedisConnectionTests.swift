import Foundation
import Testing
import ViewportRedis
import ViewportTestSupport

/// The hiredis-based client against a real redis-server started for each test.
@Suite(.serialized)
struct RedisConnectionTests {
    static func connection(_ server: RedisTestServer, timeout: Double = 0.3) -> RedisConnection {
        RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port), connectTimeout: timeout, commandTimeout: timeout)
    }

    static func elapsed(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    /// A call on `pool` fails with ``RedisError/unavailable(_:)`` at once: within 0.3 s, where
    /// a call that asked the server would wait its timeout (1 s in these tests).
    static func expectUnavailableAtOnce(_ pool: RedisPool, sourceLocation: SourceLocation = #_sourceLocation) {
        let took = elapsed {
            #expect(sourceLocation: sourceLocation) {
                try pool.send(RedisCommand("GET", "a"))
            } throws: { error in
                if case .unavailable = error as? RedisError { return true }
                return false
            }
        }
        #expect(took < 0.3, "failed after \(took) s", sourceLocation: sourceLocation)
    }

    @Test func argumentsAndRepliesAreBinarySafe() throws {
        let server = try RedisTestServer()
        let c = Self.connection(server)
        let every = (0...255).map { UInt8($0) } + [0, 13, 10, 0]
        #expect(try c.send(RedisCommand("SET", Array("k\u{0}\r\n".utf8), every)) == .status("OK"))
        #expect(try c.send(RedisCommand("GET", Array("k\u{0}\r\n".utf8))) == .string(every))
        #expect(try c.send(RedisCommand("SET", "empty", [UInt8]())) == .status("OK"))
        #expect(try c.send(RedisCommand("GET", "empty")) == .string([]))
        #expect(try c.send(RedisCommand("GET", "missing")) == .null)
        #expect(try c.send(RedisCommand("INCRBY", "n", 41)) == .integer(41))
        #expect(try c.send(RedisCommand("RPUSH", "l", "a", "b")) == .integer(2))
        #expect(try c.send(RedisCommand("LRANGE", "l", 0, -1)) == .array([.string(Array("a".utf8)), .string(Array("b".utf8))]))
        // An error reply is a reply: the connection stays usable.
        let wrong = try c.send(RedisCommand("INCR", "l"))
        #expect(wrong.errorMessage?.hasPrefix("WRONGTYPE") == true)
        #expect(try c.send(RedisCommand("PING")) == .status("PONG"))
    }

    @Test func aPipelineIsOneRoundTripWithEveryReplyInOrder() throws {
        let server = try RedisTestServer()
        let c = Self.connection(server)
        let replies = try c.pipeline((0..<5000).map { _ in RedisCommand("INCR", "counter") })
        #expect(replies == (1...5000).map { RedisReply.integer(Int64($0)) })
        // A large value in a pipeline (several socket buffers).
        let big = [UInt8](repeating: 7, count: 8 << 20)
        let mixed = try c.pipeline([RedisCommand("SET", "big", big), RedisCommand("STRLEN", "big"), RedisCommand("GET", "big")])
        #expect(mixed[1] == .integer(Int64(big.count)) && mixed[2] == .string(big))
    }

    @Test func scriptsRunByShaAndAreSentAgainWhenTheServerForgotThem() throws {
        let server = try RedisTestServer()
        let c = Self.connection(server)
        let script = RedisScript("return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}")
        #expect(script.sha1.count == 40)
        let first = try c.send(.evalsha(script, keys: ["k"], arguments: ["x"]))
        #expect(first == .array([.string(Array("k".utf8)), .string(Array("x".utf8)), .integer(1)]))
        #expect(try server.cli(["SCRIPT", "EXISTS", script.sha1]) == "1")
        #expect(try c.send(RedisCommand("SCRIPT", "FLUSH")) == .status("OK"))
        let replies = try c.pipeline([.evalsha(script, keys: ["k"], arguments: ["y"]), RedisCommand("PING"), .evalsha(script, keys: ["k"], arguments: ["z"])])
        #expect(replies[0].array?.last == .integer(2))
        #expect(replies[1] == .status("PONG"))
        #expect(replies[2].array?.last == .integer(3))
    }

    @Test func aPausedServerTimesOutAndTheConnectionRecoversWhenItResumes() throws {
        let server = try RedisTestServer()
        let c = Self.connection(server, timeout: 0.3)
        #expect(try c.send(RedisCommand("SET", "a", "1")) == .status("OK"))
        server.pause()
        defer { server.resume() }
        var caught: RedisError?
        let took = Self.elapsed {
            do { _ = try c.send(RedisCommand("GET", "a")) } catch { caught = error as? RedisError }
        }
        #expect(caught != nil, "a command to a stopped server must fail")
        #expect(took < 1.0, "failed after \(took) s, the timeout is 0.3 s")
        #expect(!c.isConnected)
        // A new connection to a stopped server: the kernel accepts it, the first command times out.
        let fresh = Self.connection(server, timeout: 0.3)
        let took2 = Self.elapsed { #expect(throws: RedisError.self) { try fresh.send(RedisCommand("PING")) } }
        #expect(took2 < 1.0)
        server.resume()
        #expect(try c.send(RedisCommand("GET", "a")) == .string(Array("1".utf8)))
    }

    @Test func aRefusedConnectFailsAtOnce() throws {
        let port = ChildProcess.freePort()
        // A connect timeout well past the bound: a refusal waited out would fail it.
        let c = RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: port), connectTimeout: 2, commandTimeout: 2)
        let took = Self.elapsed {
            #expect {
                try c.send(RedisCommand("PING"))
            } throws: { error in
                if case .connect = error as? RedisError { return true }
                return false
            }
        }
        #expect(took < 0.5)
    }

    @Test func thePoolReplacesAConnectionTheServerClosedAndFailsFastAfterATimeout() throws {
        let server = try RedisTestServer()
        let pool = RedisPool(endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port), connectTimeout: 1, commandTimeout: 1, capacity: 2, retryInterval: 0.5)
        #expect(try pool.send(RedisCommand("SET", "a", "1")) == .status("OK"))
        // The server closes every client (as a restart would): the pooled one is replaced silently.
        _ = try server.cli(["CLIENT", "KILL", "TYPE", "normal"])
        #expect(try pool.send(RedisCommand("GET", "a")) == .string(Array("1".utf8)))
        server.pause()
        defer { server.resume() }
        #expect(throws: RedisError.self) { try pool.send(RedisCommand("GET", "a")) }
        #expect(pool.isFailingFast)
        // While failing fast, calls answer at once.
        Self.expectUnavailableAtOnce(pool)
        server.resume()
        let deadline = Date().addingTimeInterval(3)
        var recovered = false
        while Date() < deadline && !recovered {
            recovered = (try? pool.send(RedisCommand("GET", "a"))) == .string(Array("1".utf8))
            if !recovered { usleep(50_000) }
        }
        #expect(recovered)
    }

    @Test func aPoolThatReconnectsInTheBackgroundHasNoCallerConnectAndIsBackWithinItsInterval() throws {
        let server = try RedisTestServer()
        let pool = RedisPool(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port), connectTimeout: 3, commandTimeout: 1, capacity: 2,
            retryInterval: 0.1, reconnectsInBackground: true)
        #expect(try pool.send(RedisCommand("SET", "a", "1")) == .status("OK"))
        server.stop()
        #expect(throws: RedisError.self) { try pool.send(RedisCommand("GET", "a")) }
        // Past the retry interval too, a call without an idle connection fails at once: the
        // attempts run in the background, none on a caller's thread.
        usleep(250_000)
        Self.expectUnavailableAtOnce(pool)
        try server.restart()
        let restarted = Date()
        var back: Double?
        while back == nil && Date().timeIntervalSince(restarted) < 3 {
            if (try? pool.send(RedisCommand("PING"))) == .status("PONG") { back = Date().timeIntervalSince(restarted) } else { usleep(5_000) }
        }
        // A background attempt starts every 0.1 s and connects at once, and calls fail fast for
        // 0.1 s after the last failure: back within two intervals, far from `connectTimeout` (3 s).
        #expect((back ?? 99) < 1, "answered again \(back ?? -1) s after the server came back")
    }

    @Test func aPasswordAndADatabaseFromTheURLAreUsed() throws {
        let server = try RedisTestServer(arguments: ["--requirepass", "s3cr/t"])
        let endpoint = try RedisEndpoint(url: "redis://:s3cr%2Ft@127.0.0.1:\(server.port)/3")
        #expect(endpoint.password == "s3cr/t" && endpoint.database == 3)
        #expect(!endpoint.description.contains("s3cr"))
        let c = RedisConnection(endpoint: endpoint, connectTimeout: 0.5, commandTimeout: 0.5)
        #expect(try c.send(RedisCommand("SET", "x", "in-db-3")) == .status("OK"))
        #expect(try server.cli(["-a", "s3cr/t", "--no-auth-warning", "-n", "3", "GET", "x"]) == "in-db-3")
        let wrong = RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port, password: "nope"), connectTimeout: 0.5, commandTimeout: 0.5)
        #expect(throws: RedisError.self) { try wrong.send(RedisCommand("PING")) }
    }
}

struct RedisEndpointTests {
    @Test func urlsAreParsedAndBadOnesSayWhy() throws {
        #expect(try RedisEndpoint(url: "redis://cache:6380") == RedisEndpoint(host: "cache", port: 6380))
        #expect(try RedisEndpoint(url: "redis://10.0.0.5/2") == RedisEndpoint(host: "10.0.0.5", port: 6379, database: 2))
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/0") == RedisEndpoint(host: "::1", port: 7000))
        #expect(try RedisEndpoint(url: "redis://app:pw@h:1") == RedisEndpoint(host: "h", port: 1, user: "app", password: "pw"))
        // The last `@` ends the password: `/`, `@`, `?` and `#` in it need no escape.
        #expect(try RedisEndpoint(url: "redis://:pa/ss@h:1/2") == RedisEndpoint(host: "h", port: 1, database: 2, password: "pa/ss"))
        #expect(try RedisEndpoint(url: "redis://app:p@s?s#@h") == RedisEndpoint(host: "h", user: "app", password: "p@s?s#"))
        #expect(try RedisEndpoint(url: "redis://:100%25@h") == RedisEndpoint(host: "h", password: "100%"))
        for (url, fragment) in [
            ("redis://secret@h:1", "needs a \":\" before the password"), ("redis:///tmp/redis.sock", "Unix sockets"),
            ("http://h:1", "redis://"), ("rediss://h:1", "TLS"), ("redis://:1", "host is empty"), ("redis://h:0", "port"),
            ("redis://h:99999", "port"), ("redis://h:x", "port"), ("redis://h:1/-1", "database"), ("redis://h:1/a", "database"),
            ("redis://h:1?x=1", "query"), ("redis://[::1:1", "]"), ("redis://@h:1", "password"),
        ] {
            #expect {
                try RedisEndpoint(url: url)
            } throws: { error in
                (error as? RedisURLError)?.message.contains(fragment) == true
            }
        }
    }
}
