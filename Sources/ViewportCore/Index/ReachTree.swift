/// The levels above a sorted run's reach line, for finding the first block of reaches that gets
/// to a query's near edge without a binary search: a static B+-tree of 16-wide nodes, each one
/// 64-byte cache line of `Float`s (an "S-tree").
///
/// Level 0 holds the last reach of each block of 16 reaches (the block's greatest: reach never
/// decreases), level 1 the last of each block of level 0, and so on up to a top of at most 16.
/// Every level is padded with +infinity to whole lines and starts on a line. A search counts, in
/// one line per level, the entries below the near edge (16 compares at once, no branch): that
/// count is the position of the block to read on the level below. On 1M items that is four
/// loads, each from a line the level above points at, instead of a binary search over 62,500
/// block ends whose ~16 data-dependent branches mispredict about half the time.
///
/// Immutable after `init`; the spatial index builds one per sorted run.
package final class ReachTree: @unchecked Sendable {
    // @unchecked: the storage is written once in `init` and only read afterwards.
    /// Entries per node: one 64-byte line of `Float`s.
    package static let width = 16

    /// Every level, level 0 first, each padded to whole lines.
    private let storage: UnsafeMutableBufferPointer<Float>
    /// Where each level starts in `storage`, level 0 first.
    private let levelStarts: [Int]
    /// Entries (not padding) of the top level.
    private let topCount: Int
    /// Entries of level 0: the number of blocks of the reach line.
    package let blockCount: Int

    /// Builds the levels above `reach` (non-decreasing).
    /// - Complexity: O(n / 16).
    package init(reach: UnsafeBufferPointer<Float>) {
        var levels = [Self.lasts(of: reach)]
        while let below = levels.last, below.count > Self.width {
            levels.append(Self.lasts(of: below))
        }
        blockCount = levels[0].count
        topCount = levels[levels.count - 1].count
        var starts: [Int] = []
        var total = 0
        for level in levels {
            starts.append(total)
            total += Self.padded(level.count)
        }
        levelStarts = starts
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(1, total) * MemoryLayout<Float>.stride, alignment: 64)
        storage = UnsafeMutableBufferPointer(start: raw.bindMemory(to: Float.self, capacity: total), count: total)
        storage.initialize(repeating: .infinity)
        for (level, start) in zip(levels, starts) {
            for (k, value) in level.enumerated() { storage[start + k] = value }
        }
    }

    deinit {
        UnsafeMutableRawPointer(storage.baseAddress)?.deallocate()
    }

    /// The last value of each block of `width` values (of the shorter last block too).
    private static func lasts<Values: RandomAccessCollection<Float>>(of values: Values) -> ContiguousArray<Float> where Values.Index == Int {
        let blocks = (values.count + width - 1) / width
        return ContiguousArray((0..<blocks).map { values[values.startIndex + min(values.count, ($0 + 1) * width) - 1] })
    }

    /// `count` rounded up to whole lines.
    static func padded(_ count: Int) -> Int { (count + width - 1) / width * width }

    /// Bytes held (the padding included).
    var memoryBytes: Int { storage.count * MemoryLayout<Float>.stride + levelStarts.count * MemoryLayout<Int>.stride }

    /// The first block of the reach line whose last reach is not below `near`, or `blockCount`
    /// when none is (every reach is below `near`).
    /// - Complexity: O(log₁₆ n): one line per level.
    @inline(__always)
    package func firstBlock(reaching near: Float) -> Int {
        guard topCount > 0, let base = storage.baseAddress else { return blockCount }
        var level = levelStarts.count - 1
        var block = Self.countBelow(near, in: base + levelStarts[level])
        if block >= topCount { return blockCount }
        while level > 0 {
            level &-= 1
            // The entry above is this block's last and is not below `near`: the count stays
            // inside the block's real entries.
            block = block &* Self.width &+ Self.countBelow(near, in: base + (levelStarts[level] &+ block &* Self.width))
        }
        return block
    }

    /// How many of the 16 `Float`s at `line` are below `value` (NaN counts as not below): for
    /// a non-decreasing line, the position of its first entry not below `value`.
    @inline(__always)
    package static func countBelow(_ value: Float, in line: UnsafePointer<Float>) -> Int {
        // Four 4-wide compares, their masks (-1 for true) summed: branch-free. (A `SIMD16`
        // compare with `wrappedSum` compiled to a lane-by-lane loop and a call, a scalar loop to
        // a branch per entry.)
        let raw = UnsafeRawPointer(line)
        let v = SIMD4<Float>(repeating: value)
        func below(_ offset: Int) -> SIMD4<Int32> {
            unsafeBitCast(raw.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self) .< v, to: SIMD4<Int32>.self)
        }
        let sum = below(0) &+ below(16) &+ below(32) &+ below(48)
        return Int(0 &- (sum[0] &+ sum[1] &+ sum[2] &+ sum[3]))
    }
}
