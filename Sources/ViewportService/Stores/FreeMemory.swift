#if canImport(Glibc)
import Glibc
#endif

/// Hands the memory malloc keeps free back to the OS after a large layout is built.
///
/// Parsing a large layout grows arrays by doubling and builds the R-tree from temporary arrays;
/// glibc keeps the freed chunks in its arenas, so without a trim a 1M-item post left about 33
/// bytes per item of RSS more (96.6 against 63.8 B per item in scripts/layout-rss.sh). `malloc_trim(0)`
/// returns the free pages of every arena; it is looked up at run time (`<malloc.h>` is not in
/// Swift's Glibc module) and skipped where the C library has none.
enum FreeMemory {
    /// Layouts from this many items on are followed by a trim (a small one leaves little behind,
    /// and a trim walks every arena).
    static let trimThreshold = 100_000

    /// The address of glibc's `malloc_trim`, 0 when there is none.
    private static let trimAddress: UInt = {
        #if canImport(Glibc)
        return UInt(bitPattern: dlsym(nil, "malloc_trim"))
        #else
        return 0
        #endif
    }()

    /// Trims malloc's free memory when a layout of `items` items was just built.
    static func afterBuildingLayout(items: Int) {
        guard items >= trimThreshold, let address = UnsafeRawPointer(bitPattern: trimAddress) else { return }
        let trim = unsafeBitCast(address, to: (@convention(c) (Int) -> Int32).self)
        _ = trim(0)
    }
}
