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
///
/// With `reconnectsInBackground`, a broken connection also drops the idle ones (they went the
/// same way, most likely), and no caller connects itself until a connection is made again:
/// background attempts start every `retryInterval`, each waiting up to `connectTimeout`, and the
/// first that connects joins the idle connections; meanwhile a caller without an idle connection
/// fails fast. Over a link that drops packets, a connect caught in TCP's SYN retransmissions
/// (the first after a second) waits out its whole timeout even once the link is back; a fresh
/// attempt started after that connects within a round trip. So the server is heard again within
/// `retryInterval` and a round trip of the link coming back, not `connectTimeout`.
public final class RedisPool: RedisClient {
    public let endpoint: RedisEndpoint
    public let connectTimeout: Double
    public let commandTimeout: Double
    public let capacity: Int
    public let retryInterval: Double
    public let reconnectsInBackground: Bool
    private let idle = Mutex<[RedisConnection]>([])
    /// Whether background attempts run (``reconnectsInBackground``), and how many are under way.
    private let reconnecting = Mutex<(active: Bool, attempts: Int)>((false, 0))
    /// When a caller last asked for a connection (monotonic ns): background attempts stop after
    /// ``reconnectQuietLimit`` without one (the pool's user stopped).
    private let lastAsked = Atomic<Int64>(0)
    static let reconnectQuietLimit: Int64 = 5_000_000_000
    /// Monotonic nanoseconds before which calls fail fast, and why.
    private let down = Mutex<(until: Int64, reason: String)>((0, ""))

    public init(
        endpoint: RedisEndpoint, connectTimeout: Double, commandTimeout: Double, capacity: Int, retryInterval: Double = 0.25,
        reconnectsInBackground: Bool = false
    ) {
        self.reconnectsInBackground = reconnectsInBackground
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
        let now = Self.now()
        if until > now { throw .unavailable(reason) }
        let pooled = idle.withLock { $0.popLast() }
        if reconnectsInBackground {
            lastAsked.store(now, ordering: .relaxed)
            if pooled == nil, reconnecting.withLock({ $0.active }) { throw .unavailable(reason.isEmpty ? "reconnecting to \(endpoint)" : reason) }
        }
        let connection = pooled ?? RedisConnection(endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
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
            if reconnectsInBackground {
                closeAll()
                startReconnecting()
            }
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

    // MARK: Reconnecting in the background

    private func startReconnecting() {
        let start = reconnecting.withLock { state -> Bool in
            guard !state.active else { return false }
            state.active = true
            return true
        }
        guard start else { return }
        if !Self.detach({ [self] in reconnect() }) { reconnecting.withLock { $0.active = false } }
    }

    /// Starts an attempt every `retryInterval` (at most as many under way as fit in
    /// `connectTimeout`) until one connects, or no caller asked for a while.
    private func reconnect() {
        let limit = max(1, Int((connectTimeout / max(retryInterval, 0.001)).rounded(.up)) + 1)
        while reconnecting.withLock({ $0.active }) {
            if Self.now() - lastAsked.load(ordering: .relaxed) > Self.reconnectQuietLimit {
                reconnecting.withLock { $0.active = false }
                return
            }
            let launch = reconnecting.withLock { state -> Bool in
                guard state.attempts < limit else { return false }
                state.attempts += 1
                return true
            }
            if launch && !Self.detach({ [self] in attempt() }) { reconnecting.withLock { $0.attempts -= 1 } }
            var pause = timespec(tv_sec: Int(retryInterval), tv_nsec: Int((retryInterval - Double(Int(retryInterval))) * 1e9))
            _ = nanosleep(&pause, nil)
        }
    }

    /// One attempt: a connection made joins the idle ones and ends the reconnecting.
    private func attempt() {
        let connection = RedisConnection(endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
        let connected: Bool
        do {
            try connection.connect()
            connected = true
        } catch {
            connected = false
        }
        let first = connected && reconnecting.withLock { state -> Bool in
            defer { state.active = false }
            return state.active
        }
        if first {
            // Joins the idle ones; calls still fail fast until `retryInterval` after the last
            // failure, as without background attempts (a slow server is not asked at once again).
            checkIn(connection)
        } else {
            connection.close()
        }
        reconnecting.withLock { $0.attempts -= 1 }
    }

    private final class ThreadBody {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `body` on a detached thread of its own (256 KiB of stack: a connect); false if none
    /// could be started.
    private static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 256 * 1024)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, box)
        if result != 0 {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return false
        }
        return true
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
