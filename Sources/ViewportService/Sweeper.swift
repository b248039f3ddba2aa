import Dispatch
import Foundation
import ServiceLifecycle

/// Expires idle sessions and unused layouts every `interval`: as a service, until graceful
/// shutdown; or on a thread of its own for a server started in process.
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
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: interval)) != nil { sweep() }
        }
    }

    /// Sweeps on a new thread until the returned semaphore is signalled. For a server started in
    /// process (``ViewportServer/start()``), whose caller may hold every cooperative thread (a
    /// test blocked on a socket): a `Task.sleep` would not wake up there.
    func startThread() -> DispatchSemaphore {
        let stop = DispatchSemaphore(value: 0)
        let seconds = ServiceConfiguration.seconds(interval)
        let thread = Thread { [self] in
            while stop.wait(timeout: .now() + seconds) == .timedOut { sweep() }
        }
        thread.name = "viewportd-sweeper"
        thread.start()
        return stop
    }

    private func sweep() {
        sessions.sweep()
        layouts.sweep()
    }
}
