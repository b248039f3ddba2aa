#if VIEWPORTD_TSAN
@_exported import ViewportLock

/// ThreadSanitizer builds lock with ViewportLock's pthread mutex, which TSan sees (see `TSanMutex`):
/// this module-level name shadows the imported `Synchronization.Mutex` in every file of the module.
typealias Mutex<Value: ~Copyable> = TSanMutex<Value>
#endif
