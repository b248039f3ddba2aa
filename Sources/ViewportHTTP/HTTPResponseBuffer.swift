#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response body in memory allocated with `malloc`, which the server hands to libmicrohttpd
/// without copying (`MHD_RESPMEM_MUST_FREE`: MHD frees it once sent). Hot responses (plans) are
/// written straight into one (``HTTPResponseBody/buffer(_:)``): a `[UInt8]` body was copied twice
/// on its way out, once into the array and once by MHD (`MHD_RESPMEM_MUST_COPY`).
public final class HTTPResponseBuffer: @unchecked Sendable {
    /// The bytes; nil once handed to libmicrohttpd (``take()``).
    private var base: UnsafeMutableRawPointer?
    /// Number of bytes.
    public let count: Int

    /// Takes ownership of `count` bytes at `base`, which must come from `malloc` (or `realloc`).
    public init(takingMallocated base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { free(base) }

    /// A copy of the bytes (empty once taken).
    public var bytes: [UInt8] {
        guard let base else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Gives up the memory to the caller, who must free it (libmicrohttpd does). Only the server
    /// calls this, once, when it queues the response (on the request's MHD thread).
    func take() -> UnsafeMutableRawPointer? {
        defer { base = nil }
        return base
    }
}
