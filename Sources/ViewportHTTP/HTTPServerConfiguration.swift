/// Settings of an ``HTTPServer``: where it listens and how much it accepts.
public struct HTTPServerConfiguration: Sendable, Equatable {
    /// Address to bind: an IPv4 or IPv6 literal, `"localhost"` (127.0.0.1), or a host name;
    /// `"0.0.0.0"` binds all IPv4 interfaces, `"::"` all IPv6 ones.
    public var host: String
    /// TCP port; 0 picks a free port (read it back from ``HTTPServer/port`` after start).
    public var port: Int
    /// Worker threads of MHD's epoll thread pool.
    public var threads: Int
    /// Seconds an idle connection is kept open (never 0: values below 1 become 1).
    public var connectionTimeout: Int
    /// Most connections open at once; further ones are refused by MHD.
    public var connectionLimit: Int
    /// Bytes of MHD memory per connection (request line, headers and read buffer must fit).
    public var connectionMemoryLimit: Int
    /// Seconds ``HTTPServer/stop()`` waits for in-flight requests before closing everything.
    public var drainTimeout: Double
    /// Most body bytes that `.collect` requests, and WebSocket messages still arriving, may hold
    /// at once, all connections together: a request that would pass it is answered
    /// ``HTTPHandler/busy(_:)`` (503) at once; a WebSocket closes with 1013.
    public var maxBufferedBodyBytes: Int
    /// Threads that run deferred answers (``HTTPAnswer/deferred(_:)``), off the MHD workers;
    /// 0: none (every deferred answer is refused with ``HTTPHandler/deferredWorkRefused(_:)``).
    public var deferredThreads: Int
    /// Deferred answers that may wait for one of those threads; more are refused (503).
    public var deferredQueueLimit: Int

    /// Creates a configuration; every parameter has a production-ready default.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threads: Int = 2,
        connectionTimeout: Int = 30,
        connectionLimit: Int = 1024,
        connectionMemoryLimit: Int = 16 * 1024,
        drainTimeout: Double = 10,
        maxBufferedBodyBytes: Int = 1 << 30,
        deferredThreads: Int = 0,
        deferredQueueLimit: Int = 256
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionTimeout = connectionTimeout
        self.connectionLimit = connectionLimit
        self.connectionMemoryLimit = connectionMemoryLimit
        self.drainTimeout = drainTimeout
        self.maxBufferedBodyBytes = maxBufferedBodyBytes
        self.deferredThreads = deferredThreads
        self.deferredQueueLimit = deferredQueueLimit
    }
}
