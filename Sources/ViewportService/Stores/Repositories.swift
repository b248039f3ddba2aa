import Logging
import ViewportRedis

#if canImport(Glibc)
import Glibc
#endif

/// The layout and session repositories a configuration asks for: in this process (the default),
/// or in front of the shared store of `store.url`.
struct Repositories: Sendable {
    let layouts: any LayoutRepository
    let sessions: Sessions

    /// The session store, by its type: the service is specialized for each.
    enum Sessions: Sendable {
        case local(SessionStore)
        case shared(SharedSessionStore)
    }

    /// Whether a shared store is configured.
    var shared: Bool {
        if case .shared = sessions { return true }
        return false
    }

    var sessionRepository: any SessionRepository {
        switch sessions {
        case .local(let store): return store
        case .shared(let store): return store
        }
    }

    /// Handles a session reserves in the store per step.
    static let handleBlock = 1024

    static func make(_ configuration: ServiceConfiguration, metrics: ServiceMetrics, logger: Logger) -> Repositories {
        let idle = ServiceConfiguration.seconds(configuration.sessions.idleTimeout)
        let layouts = LayoutStore(
            maxLayouts: configuration.layouts.max, maxTotalItems: configuration.layouts.maxTotalItems, idleTimeoutSeconds: idle)
        let sessions = SessionStore(maxSessions: configuration.sessions.max, idleTimeoutSeconds: idle, layouts: layouts)
        guard let url = configuration.store.url, let seeds = try? RedisEndpoint.seeds(url: url), !seeds.isEmpty else {
            return Repositories(layouts: layouts, sessions: .local(sessions))
        }
        let settings = configuration.store
        let timeout = ServiceConfiguration.seconds(settings.timeout)
        let lease = ServiceConfiguration.seconds(settings.leaseTimeout)
        // One server (served as one node) or a cluster's seeds.
        let pool = RedisClusterClient(
            seeds: seeds, connectTimeout: timeout, commandTimeout: timeout,
            capacity: configuration.http.threads + configuration.store.requestThreads + 4, retryInterval: min(0.25, timeout, ServiceConfiguration.seconds(settings.flushInterval)),
            reconnectsInBackground: true)
        let store = RedisStateStore(
            pool: pool, keys: StoreKeys(prefix: settings.keyPrefix), instance: instanceID(),
            leaseMilliseconds: Int64(lease * 1000), sessionMilliseconds: Int64((idle + lease) * 1000),
            layoutMilliseconds: Int64((2 * idle + lease) * 1000), handoverWait: timeout, handleBlock: handleBlock,
            metrics: metrics,
            health: StoreHealth(logger: logger, stall: 2 * ServiceConfiguration.seconds(settings.flushInterval) + 0.05, slow: max(timeout / 2, 0.2)),
            flushInterval: ServiceConfiguration.seconds(settings.flushInterval))
        let sharedLayouts = SharedLayoutStore(local: layouts, store: store, maxItems: configuration.layouts.maxItems, logger: logger)
        let sharedSessions = SharedSessionStore(
            local: sessions, layouts: sharedLayouts, store: store, metrics: metrics, logger: logger, storeThreads: configuration.store.requestThreads,
            parkAfter: ServiceConfiguration.seconds(settings.parkAfter))
        logger.info("shared store \(seeds.map { "\($0)" }.joined(separator: ",")) as instance \(store.instance)")
        return Repositories(layouts: sharedLayouts, sessions: .shared(sharedSessions))
    }

    /// `<host>-<pid>-<random>`: unique per process start, readable in the store.
    static func instanceID() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        let safe = String(host.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }.prefix(64))
        return "\(safe.isEmpty ? "host" : safe)-\(getpid())-\(SessionStore.newID().prefix(8))"
    }
}
