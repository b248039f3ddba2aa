import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on libmicrohttpd (epoll thread pool) that hands requests to an
/// ``HTTPHandler``.
///
/// Threading: every handler call, body sink call and response-stream call runs on one of
/// MHD's worker threads (`configuration.threads` of them, each owning its connections); all
/// calls for one request happen on the same thread, in order: `begin`, then body chunks
/// (`consume` / buffering), then `onBody` or `finish`, then the response (stream) is sent.
/// MHD sends a request's response only after its whole body was read; the layer answers earlier
/// itself, on the socket, for the 413 / truncation answers described on ``HTTPRequestAction``
/// and for the live answers of an ``HTTPLiveBodySink``. For full duplex there is WebSocket
/// (``HTTPRequestAction/webSocket(_:)``): each upgraded connection runs on a thread of its own,
/// outside MHD's workers.
public final class HTTPServer: Sendable {
    /// The running daemon and what must outlive it.
    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        let logger: UnsafeMutablePointer<viewport_logger>
    }

    private enum State: Sendable {
        case idle
        case running(Running)
        case stopping
        case stopped
    }

    /// The configuration the server was created with.
    public let configuration: HTTPServerConfiguration
    private let core: ServerCore
    private let state = Mutex<State>(.idle)
    private let boundPort = Atomic<Int>(0)

    /// Creates a server; nothing listens until ``start()``.
    public init(
        configuration: HTTPServerConfiguration, handler: any HTTPHandler,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.core = ServerCore(
            handler: handler, webSocketTimeout: Double(max(1, configuration.connectionTimeout)),
            bodyBudget: configuration.maxBufferedBodyBytes,
            deferredWork: DeferredWorkPool(threads: configuration.deferredThreads, queueLimit: configuration.deferredQueueLimit),
            log: log)
    }

    deinit {
        if case .running(let running) = state.withLock({ $0 }) {
            Self.shutdown(running, core: core)
        }
        core.deferredWork.shutDown(waitingAtMost: 0, log: { _ in })
    }

    /// The bound port (valid after ``start()``; the real one when configured with 0).
    public var port: Int { boundPort.load(ordering: .acquiring) }

    /// `http://HOST:PORT` with the bound port (an IPv6 host in brackets).
    public var url: String {
        let host = configuration.host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// Requests handed to the handler and not completed yet (a gauge for metrics). An accepted
    /// WebSocket counts until it closes: MHD 0.9.75 completes an upgraded request only when the
    /// application hands the socket back (`MHD_UPGRADE_ACTION_CLOSE`).
    public var inFlightRequests: Int { core.inFlight.load(ordering: .relaxed) }

    /// WebSocket connections open now (each has a thread; 0 again once they have all closed).
    public var openWebSockets: Int { core.webSockets.live }

    /// Bytes of request bodies and WebSocket messages being received now, held against
    /// `maxBufferedBodyBytes` (a gauge; tests wait on it instead of sleeping).
    public var bufferedBodyBytes: Int { core.bodyBudget.inUse }

    /// Binds and starts serving.
    /// - Throws: ``HTTPServerError`` when the configuration is invalid, the host does not
    ///   resolve, the address cannot be bound, or the server was already started.
    public func start() throws(HTTPServerError) {
        let config = configuration
        guard (0...65_535).contains(config.port) else {
            throw .invalidConfiguration("port \(config.port) is not in 0...65535")
        }
        guard config.threads >= 1 else { throw .invalidConfiguration("threads must be at least 1") }
        guard config.connectionLimit >= 1 else { throw .invalidConfiguration("connectionLimit must be at least 1") }
        guard config.maxBufferedBodyBytes >= 1 else { throw .invalidConfiguration("maxBufferedBodyBytes must be at least 1") }
        guard config.connectionMemoryLimit >= 4096 else {
            throw .invalidConfiguration("connectionMemoryLimit must be at least 4096 bytes")
        }
        let address = try SocketAddress(host: config.host, port: config.port)

        try state.withLock { (state: inout State) throws(HTTPServerError) in
            guard case .idle = state else { throw .alreadyStarted }
            let coreRef = Unmanaged.passUnretained(core).toOpaque()
            let logger = UnsafeMutablePointer<viewport_logger>.allocate(capacity: 1)
            logger.initialize(to: viewport_logger(fn: mhdLog, ctx: coreRef))
            var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
                | MHD_ALLOW_SUSPEND_RESUME.rawValue
                | MHD_ALLOW_UPGRADE.rawValue
            if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
            let daemon: OpaquePointer? = address.storage.withUnsafeBytes { raw in
                var options = viewport_daemon_options(
                    flags: flags,
                    port: UInt16(config.port),
                    address: raw.baseAddress?.assumingMemoryBound(to: sockaddr.self),
                    thread_pool_size: UInt32(clamping: config.threads),
                    connection_timeout: UInt32(clamping: max(1, config.connectionTimeout)),
                    connection_limit: UInt32(clamping: config.connectionLimit),
                    connection_memory_limit: config.connectionMemoryLimit,
                    access_handler: mhdAccessHandler, access_handler_cls: coreRef,
                    completed: mhdRequestCompleted, completed_cls: coreRef,
                    uri_callback: mhdRequestStarted, uri_callback_cls: coreRef,
                    logger: logger)
                return viewport_mhd_start(&options)
            }
            guard let daemon else {
                logger.deallocate()
                throw .cannotStart(
                    host: config.host, port: config.port, reason: core.lastMessage.withLock { $0 })
            }
            boundPort.store(Int(viewport_mhd_bound_port(daemon)), ordering: .releasing)
            state = .running(Running(daemon: daemon, logger: logger))
        }
        core.log("listening on \(url)")
    }

    /// Stops gracefully: new requests get `handler.unavailable` (503, `Connection: close`)
    /// while in-flight requests finish (up to `drainTimeout`), then MHD_stop_daemon closes the
    /// port and every connection. Idempotent (a concurrent second
    /// call returns at once); blocks the caller, so never call it from a handler.
    ///
    /// A request whose client vanished mid-body may count as in flight until the connection
    /// timeout (MHD 0.9.75 with epoll does not always notice the close at once), so the drain
    /// lasts at most `min(drainTimeout, connectionTimeout)` for such requests.
    ///
    /// Open WebSockets get a close frame 1001 ("server shutting down") at once; each connection
    /// thread then waits up to a second for the client's close frame and ends. The daemon stops
    /// only after every WebSocket thread has ended, and every deferred answer's work
    /// (``HTTPAnswer/deferred(_:)``) has ended and resumed its connection.
    public func stop() {
        let running: Running? = state.withLock { state in
            switch state {
            case .running(let running):
                state = .stopping
                return running
            case .idle:
                state = .stopped
                core.deferredWork.shutDown(waitingAtMost: 0, log: core.log)
                return nil
            case .stopping, .stopped:
                return nil
            }
        }
        guard let running else { return }
        core.draining.store(true, ordering: .sequentiallyConsistent)
        // Open WebSockets close now (1001), not after the drain: they would never end by themselves.
        core.webSockets.beginShutdown()
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(max(0, configuration.drainTimeout) * 1000)))
        while core.inFlight.load(ordering: .sequentiallyConsistent) > 0 && ContinuousClock.now < deadline {
            usleep(2_000)
        }
        let remaining = core.inFlight.load(ordering: .sequentiallyConsistent)
        if remaining > 0 {
            core.log("drain timeout: closing \(remaining) in-flight request(s)")
        }
        Self.shutdown(running, core: core, deferredWait: max(0, configuration.drainTimeout) + 5)
        state.withLock { $0 = .stopped }
    }

    /// Closes every WebSocket (their threads hold MHD upgrade handles, which die with the
    /// daemon), then stops the daemon.
    private static func shutdown(_ running: Running, core: ServerCore, deferredWait: Double = 5) {
        // Deferred answers hold suspended connections: each resumes its own when its work ends
        // (a store round trip ends by its timeout). None starts from now on.
        core.deferredWork.shutDown(waitingAtMost: deferredWait, log: core.log)
        core.webSockets.beginShutdown()
        core.webSockets.refuseNew()
        core.webSockets.waitUntilEmpty(log: core.log)
        // Live answers still being written after the drain give up; each resumes its connection
        // (MHD must not stop with one suspended).
        core.liveDrains.beginShutdown()
        core.liveDrains.refuseNew()
        core.liveDrains.waitUntilEmpty(log: core.log)
        // No MHD_quiesce_daemon first: with a thread pool and epoll, a worker and the quiescing
        // thread can both remove the listen socket from the worker's epoll set, and MHD aborts
        // on the loser's error ("Failed to remove listen FD from epoll set", once in a CI run).
        // The drain above already refused new requests; MHD_stop_daemon closes the socket.
        MHD_stop_daemon(running.daemon)
        running.logger.deallocate()
    }
}
