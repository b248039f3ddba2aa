import Logging

/// Every setting of viewportd, with its default.
///
/// Loaded by ``load(arguments:environment:)`` from `config/viewportd.json`, environment
/// variables and command-line flags, each overriding the one before. Keys and their other
/// forms follow swift-configuration's conventions: `http.maxBodyBytes` is the environment
/// variable `HTTP_MAX_BODY_BYTES` and the flag `--http-max-body-bytes`.
public struct ServiceConfiguration: Sendable, Equatable {
    public struct HTTP: Sendable, Equatable {
        /// `http.host`: address to listen on.
        public var host = "0.0.0.0"
        /// `http.port`: TCP port (0 lets the system choose).
        public var port = 8080
        /// `http.threads`: request-handling threads.
        public var threads = 2
        /// `http.maxBodyBytes`: larger bodies answer 413. 128 MiB, so that a layout of a million
        /// items (60–100 MB of JSON) fits.
        public var maxBodyBytes = 134_217_728
        /// `http.connectionTimeout`: an idle connection is closed after this long.
        public var connectionTimeout: Duration = .seconds(30)
        /// `http.connectionLimit`: concurrent connections.
        public var connectionLimit = 1024
        /// `http.connectionMemoryLimit`: bytes of buffer per connection (headers, small bodies).
        public var connectionMemoryLimit = 16_384
        /// `http.drainTimeout`: on SIGTERM/SIGINT, how long in-flight requests may take to finish.
        public var drainTimeout: Duration = .seconds(10)
        /// `http.maxBufferedBodyBytes`: JSON bodies are read whole before they are parsed; this
        /// bounds the bytes all of them, and WebSocket messages still arriving, hold at once (a
        /// body that would pass it answers 503 with `Retry-After`, a socket closes with 1013). At
        /// least `http.maxBodyBytes`. 1 GiB.
        public var maxBufferedBodyBytes = 1_073_741_824

        public init() {}
    }

    public struct Sessions: Sendable, Equatable {
        /// `sessions.max`: open sessions at most.
        public var max = 10_000
        /// `sessions.idleTimeout`: a session idle for longer is gone (404).
        public var idleTimeout: Duration = .seconds(600)
        /// `sessions.maxViews`: items one session may materialize at once; an update, opening or
        /// layout change that would exceed it answers 422 and changes nothing.
        public var maxViews = 100_000

        public init() {}
    }

    public struct Layouts: Sendable, Equatable {
        /// `layouts.max`: distinct stored layouts at most.
        public var max = 1000
        /// `layouts.maxItems`: items per layout at most (more answers 413).
        public var maxItems = 2_000_000
        /// `layouts.maxTotalItems`: items across all stored layouts at most (~90 bytes each), the
        /// bound on layout memory (20M items ≈ 1.8 GB).
        public var maxTotalItems = 20_000_000

        public init() {}
    }

    /// A store shared by several instances (docs/api.md "Many instances, one store"); without
    /// `store.url`, sessions and layouts live in this process only.
    public struct Store: Sendable, Equatable {
        /// `store.url`: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` of a Redis-protocol server
        /// (Redis, Valkey); nil for none (the default: everything in this process).
        public var url: String? = nil
        /// `store.flushInterval`: how often changed sessions are written to the store. An instance
        /// that dies loses at most this much.
        public var flushInterval: Duration = .milliseconds(100)
        /// `store.leaseTimeout`: how long an instance's claim on a session lasts without renewal
        /// (renewed several times within it); after a crash, its sessions move after this long.
        public var leaseTimeout: Duration = .seconds(2)
        /// `store.timeout`: how long one round trip to the store may take (connect, command), and
        /// how long a request waits for another instance to hand a session over, before 503.
        public var timeout: Duration = .milliseconds(500)
        /// `store.parkAfter`: how long a session held here may go without a request before it is
        /// written, released and dropped from memory, so that its lease costs the store no more
        /// renewals; its next request takes it back from the store.
        public var parkAfter: Duration = .seconds(30)
        /// `store.requestThreads`: threads that run the requests that need a round trip to the
        /// store, off the HTTP workers (each waits at most `store.timeout` per round trip). Up to
        /// 64 more such requests per thread wait for one; more answer 503.
        public var requestThreads = 4
        /// `store.keyPrefix`: prepended to every key, so that several deployments can share one
        /// server.
        public var keyPrefix = "viewportd:"

        public init() {}
    }

    public var http = HTTP()
    public var sessions = Sessions()
    public var layouts = Layouts()
    public var store = Store()
    /// `auth.token`: when set, every path but `/healthz` and `/readyz` requires
    /// `Authorization: Bearer <token>`. A secret: never logged (see ``description``). An empty
    /// value means no token (and a warning in ``warnings``).
    public var authToken: String? = nil
    /// `log.level`: trace, debug, info, notice, warning, error or critical.
    public var logLevel: Logger.Level = .info
    /// The config file that was read, nil when the default file does not exist.
    public var configFile: String? = nil
    /// What loading accepted but an operator should hear of (logged as warnings at start): a
    /// setting given a value that turns its feature off, for instance an empty `auth.token`.
    public var warnings: [String] = []

    /// The defaults.
    public init() {}
}

extension ServiceConfiguration: CustomStringConvertible {
    /// All settings on one line, for the startup log; secrets are redacted.
    public var description: String {
        (Setting.all.map { "\($0.name)=\($0.show(self))" } + ["config=\(configFile ?? "none")"]).joined(separator: " ")
    }

    /// A duration in seconds, for logs and for APIs that take seconds.
    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A store URL with its password hidden.
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        let scheme = url.hasPrefix("redis://") ? "redis://" : ""
        return scheme + "<redacted>" + String(url[at...])
    }

    /// A duration as a number of seconds without a needless fraction (`30`, `0.1`).
    static func secondsText(_ duration: Duration) -> String {
        let value = seconds(duration)
        return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
