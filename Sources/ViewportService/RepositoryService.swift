import ServiceLifecycle

/// The session repository's background work as a service: ``SessionRepository/start()`` when
/// the group runs; on graceful shutdown (after the HTTP server drained, since it is listed before
/// it) ``SessionRepository/shutdown()``, which writes and releases every session of a shared
/// store.
struct RepositoryService: Service {
    let sessions: any SessionRepository

    func run() async {
        StopSignals.blocked { sessions.start() }
        // Returns on graceful shutdown, or throws when the group is cancelled: shut down either way.
        try? await gracefulShutdown()
        await BlockingCall.onOwnThread("viewportd-store-shutdown") { [sessions] in sessions.shutdown() }
    }
}

extension SessionRepository {
    var backgroundServices: [any Service] { [] }
}
