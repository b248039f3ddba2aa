import Foundation

/// Blocking work (a drain that waits for in-flight requests, store round trips) awaited from
/// async code without holding one of the few cooperative threads: it runs on a thread of its own,
/// which takes no stop signal (``StopSignals``).
enum BlockingCall {
    static func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            StopSignals.blocked { thread.start() }
        }
    }
}
