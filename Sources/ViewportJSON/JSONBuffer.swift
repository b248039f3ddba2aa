#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes a ``JSONWriter`` wrote, in memory from `malloc` that the buffer owns until
/// ``takeMallocated()`` gives it away: a server can send them without copying (the service hands
/// them to the HTTP layer, which gives them to libmicrohttpd to free once sent).
public struct JSONBuffer: ~Copyable {
    @usableFromInline let base: UnsafeMutableRawPointer
    /// Number of bytes.
    public let count: Int

    /// Takes ownership of `count` bytes at `base`, which must come from `malloc` (or `realloc`).
    @usableFromInline init(takingMallocated base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { free(base) }

    /// A copy of the bytes.
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(start: base, count: count)) }

    /// Gives up the memory to the caller, who must `free` it.
    public consuming func takeMallocated() -> (base: UnsafeMutableRawPointer, count: Int) {
        let taken = (base, count)
        discard self
        return taken
    }
}
