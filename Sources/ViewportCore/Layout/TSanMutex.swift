#if VIEWPORTD_TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Only in ThreadSanitizer builds (`scripts/tsan.sh` passes `-DVIEWPORTD_TSAN`): on Linux,
/// `Synchronization.Mutex` locks with futexes inside the uninstrumented standard library, so TSan
/// sees no happens-before edge and reports every access it guards as a race (shown with a
/// 10-line program). This pthread mutex, which TSan intercepts, stands in for it under the same
/// name and API; normal builds never compile it. One file, linked into every module that locks
/// (ViewportCore, ViewportHTTP, ViewportService, ViewportRedis, ViewportHTTPTests): a type declared in the module itself wins
/// over the imported one, and its members need no extra import.
final class TSanMutex<Value: ~Copyable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Behind a pointer, not a stored `var`: TSan instruments the exclusivity of a class's stored
    /// property, and for a zero-sized value (`Mutex<Void>`) it placed those accesses on the
    /// object's first word, where other threads read the class metadata (false race reports).
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    init(_ initialValue: consuming sending Value) {
        value.initialize(to: initialValue)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

/// Shadows `Synchronization.Mutex` in this module (see ``TSanMutex``).
typealias Mutex<Value: ~Copyable> = TSanMutex<Value>
#endif
