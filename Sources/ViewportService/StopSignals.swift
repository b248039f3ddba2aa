#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGTERM and SIGINT, the signals that stop the process gracefully.
enum StopSignals {
    /// Runs `body` with the stop signals blocked on this thread. Threads started in it
    /// (libmicrohttpd's workers, a shared store's writer) inherit the mask, so a stop signal is
    /// never delivered on one of them, interrupting it mid-request; the service group's signal
    /// source takes it.
    static func blocked<T>(_ body: () throws -> T) rethrows -> T {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &signals, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
