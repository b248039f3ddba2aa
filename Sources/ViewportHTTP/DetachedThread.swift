#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts detached pthreads with a chosen stack size, for work that outlives an MHD callback
/// (a WebSocket connection, the end of a live answer).
enum DetachedThread {
    /// Runs `body` on a new detached thread; false when no thread could be made (`body` is then
    /// dropped without running).
    static func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, detachedThreadMain, box)
        pthread_attr_destroy(&attributes)
        if result != 0 {
            Unmanaged<Work>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// The closure, boxed for the thread's `void *` argument.
    final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// The entry point of a ``DetachedThread`` (a C function pointer: file-level, no captures,
/// nonisolated). Takes back the retained work and runs it.
private func detachedThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    Unmanaged<DetachedThread.Work>.fromOpaque(argument).takeRetainedValue().body()
    return nil
}
