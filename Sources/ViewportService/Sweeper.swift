import ServiceLifecycle

/// Expires idle sessions and unused layouts every `interval`, until cancelled or, as a service,
/// until graceful shutdown.
struct Sweeper: Service {
    let sessions: any SessionRepository
    let layouts: any LayoutRepository
    let interval: Duration

    /// A quarter of the idle timeout, from 50 ms to 1 s: an idle session goes at most a quarter
    /// late.
    init(sessions: any SessionRepository, layouts: any LayoutRepository, idleTimeout: Duration) {
        self.sessions = sessions
        self.layouts = layouts
        interval = min(.seconds(1), max(.milliseconds(50), idleTimeout / 4))
    }

    func run() async {
        await cancelWhenGracefulShutdown { await sweepUntilCancelled() }
    }

    func sweepUntilCancelled() async {
        while (try? await Task.sleep(for: interval)) != nil {
            sessions.sweep()
            layouts.sweep()
        }
    }
}
