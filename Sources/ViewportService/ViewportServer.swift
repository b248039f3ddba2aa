import Foundation
import Logging
import Synchronization
import ViewportHTTP

/// viewportd: the stores, the API handler and the HTTP server, plus a sweeper that expires idle
/// sessions and unused layouts.
public final class ViewportServer: Sendable {
    public let configuration: ServiceConfiguration
    let layouts: any LayoutRepository
    let sessions: any SessionRepository
    let metrics = ServiceMetrics()
    /// What the HTTP layer calls for each request: tests drive it in process through
    /// ``HTTPHandler``, as the layer does, without a socket.
    package let handler: any HTTPHandler
    private let http: HTTPServer
    private let logger: Logger
    private let sweeping = Atomic<Bool>(false)

    public init(configuration: ServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        let handler = APIHandler(configuration: configuration, metrics: metrics, logger: logger)
        layouts = handler.layouts
        sessions = handler.sessions
        self.handler = handler
        let http = configuration.http
        self.http = HTTPServer(
            configuration: HTTPServerConfiguration(
                host: http.host, port: http.port, threads: http.threads,
                connectionTimeout: Int(ServiceConfiguration.seconds(http.connectionTimeout).rounded(.up)),
                connectionLimit: http.connectionLimit, connectionMemoryLimit: http.connectionMemoryLimit,
                drainTimeout: ServiceConfiguration.seconds(http.drainTimeout),
                maxBufferedBodyBytes: http.maxBufferedBodyBytes),
            handler: handler,
            log: { [logger] message in logger.info("\(message)") })
    }

    /// The bound port (after `start`).
    public var port: Int { http.port }

    /// Bytes of request bodies being received now, held against `http.maxBufferedBodyBytes`
    /// (tests wait on it instead of polling with requests).
    public var bufferedBodyBytes: Int { http.bufferedBodyBytes }

    /// Binds and starts serving; logs `listening on http://HOST:PORT`.
    public func start() throws {
        sessions.start()
        try http.start()
        // API.md: "On start it logs one line containing `listening on http://HOST:PORT`", which
        // the HTTP layer logs at info; a `log.level` above info would hide it from whoever waits
        // for it, so it is logged again at that level, where it shows.
        if logger.logLevel > .info { logger.log(level: logger.logLevel, "listening on \(http.url)") }
        sweeping.store(true, ordering: .relaxed)
        let interval = min(1.0, max(0.05, ServiceConfiguration.seconds(configuration.sessions.idleTimeout) / 4))
        Thread.detachNewThread { [self] in
            while sweeping.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: interval)
                sessions.sweep()
                layouts.sweep()
            }
        }
    }

    /// Graceful stop: new requests get 503, in-flight ones finish, then the port closes; with a
    /// shared store, every session is then written and released, so the next request on any
    /// instance continues it (another instance's request for one of them meanwhile is handed
    /// over at once).
    public func stop() {
        sweeping.store(false, ordering: .relaxed)
        http.stop()
        sessions.shutdown()
    }
}
