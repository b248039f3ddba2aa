import Dispatch
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import ViewportHTTP

/// viewportd: the stores, the API handler and the HTTP server, plus a sweeper that expires idle
/// sessions and unused layouts.
///
/// The process runs it as a `ServiceGroup` (``run()``); tests start and stop it in process
/// (``start()``, ``stop()``), with the same steps in the same order, the sweeper on a thread.
public final class ViewportServer: Sendable {
    public let configuration: ServiceConfiguration
    let layouts: any LayoutRepository
    let sessions: any SessionRepository
    let metrics = ServiceMetrics()
    let logger: Logger
    /// What the HTTP layer calls for each request: tests drive it in process through
    /// ``HTTPHandler``, as the layer does, without a socket.
    package let handler: any HTTPHandler
    private let http: HTTPServer
    private let sweeper: Sweeper
    /// Stops the sweeper's thread between ``start()`` and ``stop()``.
    private let sweeping = Mutex<DispatchSemaphore?>(nil)

    public init(configuration: ServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let handler = APIHandler(configuration: configuration, metrics: metrics, logger: logger)
        layouts = handler.layouts
        sessions = handler.sessions
        sweeper = Sweeper(sessions: sessions, layouts: layouts, idleTimeout: configuration.sessions.idleTimeout)
        self.handler = handler
        let http = configuration.http
        self.http = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: http.host, port: http.port, threads: http.threads,
                connectionTimeout: Int(ServiceConfiguration.seconds(http.connectionTimeout).rounded(.up)),
                connectionLimit: http.connectionLimit, connectionMemoryLimit: http.connectionMemoryLimit,
                drainTimeout: ServiceConfiguration.seconds(http.drainTimeout),
                maxBufferedBodyBytes: http.maxBufferedBodyBytes,
                // Requests that need the shared store run on threads of their own (none without one).
                deferredThreads: configuration.store.url == nil ? 0 : configuration.store.requestThreads,
                deferredQueueLimit: 64 * configuration.store.requestThreads),
            handler: handler,
            log: { [logger] message in logger.info("\(message)") })
    }

    /// The bound port (after `start`).
    public var port: Int { http.port }

    /// Bytes of request bodies being received now, held against `http.maxBufferedBodyBytes`
    /// (tests wait on it instead of polling with requests).
    public var bufferedBodyBytes: Int { http.bufferedBodyBytes }

    /// The services in start order; a graceful shutdown stops them last to first: the HTTP
    /// server drains, the sweeper ends, then the repository writes and releases its sessions.
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [.init(service: RepositoryService(sessions: sessions), serviceName: "sessions")]
            + sessions.backgroundServices.map { .init(service: $0) }
            + [.init(service: sweeper, serviceName: "sweeper"), .init(service: HTTPService(server: self), serviceName: "http")]
    }

    /// Runs every service until SIGTERM or SIGINT, then shuts them down gracefully in order
    /// (``services``). Throws when the server cannot start (its port is taken, say).
    public func run() async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    /// Binds and starts serving, and starts the sweeper; logs `listening on http://HOST:PORT`.
    public func start() throws {
        sessions.start()
        try startHTTP()
        sweeping.withLock { stop in
            stop?.signal()
            stop = sweeper.startThread()
        }
    }

    /// Graceful stop: new requests get 503, in-flight ones finish, then the port closes; with a
    /// shared store, every session is then written and released, so the next request on any
    /// instance continues it (another instance's request for one of them meanwhile is handed
    /// over at once).
    public func stop() {
        sweeping.withLock { $0.take() }?.signal()
        stopHTTP()
        sessions.shutdown()
    }

    func startHTTP() throws {
        try http.start()
        // API.md: "On start it logs one line containing `listening on http://HOST:PORT`", which
        // the HTTP layer logs at info; a `log.level` above info would hide it from whoever waits
        // for it, so it is logged again at that level, where it shows.
        if logger.logLevel > .info { logger.log(level: logger.logLevel, "listening on \(http.url)") }
    }

    /// New requests get 503, in-flight ones finish (for up to `http.drainTimeout`), then the port
    /// closes. Blocks until then.
    func stopHTTP() {
        http.stop()
    }
}
