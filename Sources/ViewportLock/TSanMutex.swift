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
/// API. Normal builds compile this module empty and lock with `Synchronization.Mutex` itself.
///
/// Each module that locks declares, in its `Mutex+TSan.swift`, a module-level
/// `typealias Mutex = TSanMutex` under `#if VIEWPORTD_TSAN`: a module's own declaration wins over
/// the imported `Synchronization.Mutex`, where a second imported `Mutex` would be ambiguous. That
/// file's `@_exported import ViewportLock` makes these members visible in every file of the
/// module (`MemberImportVisibility` wants the defining module imported).
public final class TSanMutex<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Behind a pointer, not a stored `var`: TSan instruments the exclusivity of a class's stored
    /// property, and for a zero-sized value (`Mutex<Void>`) it placed those accesses on the
    /// object's first word, where other threads read the class metadata (false race reports).
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
#endif
