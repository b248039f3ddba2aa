import Foundation
import ServiceLifecycle

/// Blocking work that runs for as long as the server does (a shared store's writer, its handover
/// listener): a service of the process's `ServiceGroup`, or, for a server started in process, a
/// thread of its own (``startThread()``). Either way it runs on a thread of its own, never on a
/// cooperative one: it waits on the store or on a condition.
protocol BackgroundService: Service {
    /// The name of its thread.
    var threadName: String { get }
    /// The work: returns once ``stop()`` ended it.
    func runBlocking()
    /// Ends the work, after what it must do first (the handover side hands every session over);
    /// blocks until then. Once; later calls return at once.
    func stop()
}

extension BackgroundService {
    /// Runs the work until graceful shutdown (or cancellation), then stops it and waits for it.
    func run() async {
        async let ended: Void = BlockingCall.onOwnThread(threadName) { self.runBlocking() }
        try? await gracefulShutdown()
        await BlockingCall.onOwnThread("\(threadName)-stop") { self.stop() }
        await ended
    }

    /// Runs the work on a thread of its own until ``stop()``.
    func startThread() {
        let thread = Thread { self.runBlocking() }
        thread.name = threadName
        StopSignals.blocked { thread.start() }
    }
}
