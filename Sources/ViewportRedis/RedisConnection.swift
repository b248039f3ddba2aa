import CHiredis

#if canImport(Glibc)
import Glibc
#endif

/// One connection to a Redis-protocol server over hiredis' synchronous API: commands and
/// pipelines with binary-safe arguments, a connect timeout and a command timeout (so nothing
/// waits longer than that for a server that hangs), and a reconnect on the next command after
/// any error that broke the connection.
///
/// Not thread-safe: one thread uses it at a time (``RedisPool`` hands it out); it is `Sendable`
/// so that it can move between threads.
public final class RedisConnection: @unchecked Sendable {
    public let endpoint: RedisEndpoint
    public let connectTimeout: Double
    /// Seconds a read or write may block (`SO_RCVTIMEO`/`SO_SNDTIMEO` via `redisSetTimeout`).
    public private(set) var commandTimeout: Double
    private var context: UnsafeMutablePointer<redisContext>?
    /// Whether the last connect was reused for a later command (a pooled connection may have been
    /// closed by the server meanwhile).
    public private(set) var hasBeenUsed = false

    public init(endpoint: RedisEndpoint, connectTimeout: Double, commandTimeout: Double) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    deinit { close() }

    public var isConnected: Bool { context != nil }

    /// Closes the connection; the next command opens a new one.
    public func close() {
        if let context { redisFree(context) }
        context = nil
        hasBeenUsed = false
    }

    /// Connects (closing any previous connection), sets the timeouts, authenticates and selects
    /// the database.
    public func connect() throws(RedisError) {
        close()
        guard let c = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), Self.timeval(connectTimeout)) else {
            throw .connect("\(endpoint): cannot allocate a context")
        }
        guard c.pointee.err == 0 else {
            let message = Self.errorString(c)
            redisFree(c)
            throw .connect("\(endpoint): \(message)")
        }
        guard redisSetTimeout(c, Self.timeval(commandTimeout)) == viewport_redis_ok() else {
            let message = Self.errorString(c)
            redisFree(c)
            throw .connect("\(endpoint): cannot set the timeout: \(message)")
        }
        context = c
        if let password = endpoint.password {
            let auth = endpoint.user.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password)
            if case .error(let message) = try send(auth) {
                close()
                throw .connect("\(endpoint): AUTH refused: \(message)")
            }
        }
        if endpoint.database != 0, case .error(let message) = try send(RedisCommand("SELECT", endpoint.database)) {
            close()
            throw .connect("\(endpoint): SELECT \(endpoint.database) refused: \(message)")
        }
        hasBeenUsed = false
    }

    /// Changes the command timeout (for a blocking command such as `BLPOP`, which must wait longer
    /// than its own timeout); it applies to this connection and to its reconnects.
    public func setCommandTimeout(_ seconds: Double) {
        commandTimeout = seconds
        if let context { _ = redisSetTimeout(context, Self.timeval(seconds)) }
    }

    /// Sends one command and answers its reply (an error reply is a reply, not a throw).
    public func send(_ command: RedisCommand) throws(RedisError) -> RedisReply {
        try pipeline([command])[0]
    }

    /// Sends every command, then reads every reply (one round trip for all of them). An `EVALSHA`
    /// the server does not know (`NOSCRIPT`) is sent again as `EVAL`.
    public func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        var replies = try roundTrip(commands)
        let unknown = commands.indices.filter { commands[$0].script != nil && replies[$0].errorMessage?.hasPrefix("NOSCRIPT") == true }
        if !unknown.isEmpty {
            let again = try roundTrip(unknown.map { commands[$0].asEval })
            for (k, index) in unknown.enumerated() { replies[index] = again[k] }
        }
        return replies
    }

    private func roundTrip(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        if context == nil { try connect() }
        guard let c = context else { throw .connect("\(endpoint): not connected") }
        for command in commands {
            guard Self.append(command, to: c) else { throw fail(c) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(c, &raw) == viewport_redis_ok(), let raw else { throw fail(c) }
            replies.append(Self.convert(raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        hasBeenUsed = true
        return replies
    }

    /// The error of a failed call; the connection is closed.
    private func fail(_ c: UnsafeMutablePointer<redisContext>) -> RedisError {
        let code = c.pointee.err
        let message = "\(endpoint): \(Self.errorString(c))"
        close()
        switch code {
        case REDIS_ERR_EOF: return .closed(message)
        case REDIS_ERR_PROTOCOL: return .protocolError(message)
        default: return .io(message)
        }
    }

    private static func append(_ command: RedisCommand, to c: UnsafeMutablePointer<redisContext>) -> Bool {
        // One buffer for all arguments: stable pointers for the call (hiredis copies them).
        var joined: [UInt8] = []
        joined.reserveCapacity(command.arguments.reduce(0) { $0 + $1.count } + 1)
        var lengths: [Int] = []
        lengths.reserveCapacity(command.arguments.count)
        for argument in command.arguments {
            joined.append(contentsOf: argument)
            lengths.append(argument.count)
        }
        joined.append(0)
        return joined.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return false }
                var pointers: [UnsafePointer<CChar>?] = []
                pointers.reserveCapacity(lengths.count)
                var offset = 0
                for length in lengths {
                    pointers.append(base + offset)
                    offset += length
                }
                return pointers.withUnsafeMutableBufferPointer { argv in
                    lengths.withUnsafeBufferPointer { argvlen in
                        redisAppendCommandArgv(c, Int32(lengths.count), argv.baseAddress, argvlen.baseAddress) == viewport_redis_ok()
                    }
                }
            }
        }
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        func bytes() -> [UInt8] {
            guard let str = r.str, r.len > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: str, count: r.len))
        }
        switch r.type {
        case REDIS_REPLY_STRING: return .string(bytes())
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(r.elements)
            for k in 0..<r.elements {
                if let element = r.element[k] { elements.append(convert(element)) } else { elements.append(.null) }
            }
            return .array(elements)
        default: return .null
        }
    }

    private static func errorString(_ c: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: c.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "error \(c.pointee.err)" : String(decoding: bytes, as: UTF8.self)
        }
    }

    static func timeval(_ seconds: Double) -> Glibc.timeval {
        let clamped = max(0.001, min(seconds, 86_400))
        let whole = clamped.rounded(.down)
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int((clamped - whole) * 1_000_000))
    }
}
