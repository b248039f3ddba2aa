import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Connections to one server for many threads: a thread takes an idle connection (or a new one),
/// uses it alone, and gives it back. At most `capacity` idle connections are kept: size it for
/// the threads that talk to the server at once (the HTTP workers plus the background ones).
///
/// When a connection breaks (a timeout, a refused connect), the pool fails fast for
/// `retryInterval`: callers get ``RedisError/unavailable(_:)`` at once instead of each waiting
/// for its own timeout on a server that does not answer; the first call after the interval tries
/// again. A pooled connection the server closed (it restarted) is replaced and the command sent
/// once more, since the server never saw it.
public final class RedisPool: RedisClient {
    public let endpoint: RedisEndpoint
    public let connectTimeout: Double
    public let commandTimeout: Double
    public let capacity: Int
    public let retryInterval: Double
    private let idle = Mutex<[RedisConnection]>([])
    /// Monotonic nanoseconds before which calls fail fast, and why.
    private let down = Mutex<(until: Int64, reason: String)>((0, ""))

    public init(endpoint: RedisEndpoint, connectTimeout: Double, commandTimeout: Double, capacity: Int, retryInterval: Double = 0.25) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.capacity = max(1, capacity)
        self.retryInterval = retryInterval
    }

    /// Whether calls fail fast now (a recent error).
    public var isFailingFast: Bool { down.withLock { $0.until > Self.now() } }

    /// Runs `body` with a connection of its own.
    public func withConnection<R>(_ body: (RedisConnection) throws(RedisError) -> R) throws(RedisError) -> R {
        let (until, reason) = down.withLock { ($0.until, $0.reason) }
        if until > Self.now() { throw .unavailable(reason) }
        let connection = idle.withLock { $0.popLast() } ?? RedisConnection(
            endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
        let reused = connection.isConnected && connection.hasBeenUsed
        do {
            let result = try body(connection)
            checkIn(connection)
            return result
        } catch {
            if case .closed = error, reused {
                // The server closed it while it sat idle: one fresh connection, once.
                do {
                    let result = try body(connection)
                    checkIn(connection)
                    return result
                } catch {
                    return try failed(error, connection)
                }
            }
            return try failed(error, connection)
        }
    }

    /// One command on a pooled connection.
    public func send(_ command: RedisCommand) throws(RedisError) -> RedisReply {
        try withConnection { (connection) throws(RedisError) in try connection.send(command) }
    }

    /// A pipeline on a pooled connection.
    public func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        try withConnection { (connection) throws(RedisError) in try connection.pipeline(commands) }
    }

    /// One blocking command on a pooled connection, whose reads may wait `timeout` seconds.
    public func send(_ command: RedisCommand, timeout: Double) throws(RedisError) -> RedisReply {
        try withConnection { (connection) throws(RedisError) in
            let normal = connection.commandTimeout
            connection.setCommandTimeout(timeout)
            defer { connection.setCommandTimeout(normal) }
            return try connection.send(command)
        }
    }

    private func failed<R>(_ error: RedisError, _ connection: RedisConnection) throws(RedisError) -> R {
        if error.brokeTheConnection {
            connection.close()
            let until = Self.now() + Int64(retryInterval * 1e9)
            down.withLock { $0 = (until, error.description) }
        } else {
            checkIn(connection)
        }
        throw error
    }

    /// Forgets a recent error: the next call tries the server again.
    public func resetFailFast() { down.withLock { $0 = (0, "") } }

    private func checkIn(_ connection: RedisConnection) {
        guard connection.isConnected else { return }
        let kept = idle.withLock { idle in
            guard idle.count < capacity else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes the idle connections.
    public func closeAll() {
        let all = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        for connection in all { connection.close() }
    }

    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
