/// Item ids stored compactly (all UTF-8 bytes in one buffer) with an open-addressing hash table
/// from id to item position.
///
/// About `4 + id length` bytes per item for storage plus 5–10 bytes for the table, against 16 bytes
/// per `String` (plus a heap object for ids over 15 bytes) and ~30 for a `Dictionary` entry. Each
/// slot has a one-byte tag from the id's hash (0: empty), so a probe past another id reads no id
/// bytes: building the table for a million ids took a third less.
/// Hashing uses the standard library's per-process seeded `Hasher`, so a client cannot craft ids
/// that collide on purpose.
struct ItemIDTable: Sendable {
    private(set) var bytes: ContiguousArray<UInt8> = []
    private(set) var offsets: ContiguousArray<UInt32> = [0]
    private var slots: ContiguousArray<Int32> = []
    /// Per slot: 0 when empty, else 1…255 from the hash of the id in it.
    private var tags: ContiguousArray<UInt8> = []
    private var mask: Int = 0

    var count: Int { offsets.count - 1 }

    mutating func reserve(items: Int, bytes byteCount: Int) {
        offsets.reserveCapacity(items + 1)
        bytes.reserveCapacity(byteCount)
    }

    mutating func append<Bytes: Collection<UInt8>>(_ id: Bytes) {
        bytes.append(contentsOf: id)
        offsets.append(UInt32(truncatingIfNeeded: bytes.count))
    }

    /// Builds the lookup table. Returns the first duplicate as (earlier index, later index).
    /// - Complexity: O(n) expected.
    mutating func buildLookup() -> (Int, Int)? {
        var capacity = 8
        while capacity < count * 2 { capacity <<= 1 }
        mask = capacity - 1
        func emptyTable() {
            slots = ContiguousArray(repeating: -1, count: capacity)
            tags = ContiguousArray(repeating: 0, count: capacity)
        }
        emptyTable()
        if count >= Self.partitionedMinimum {
            if insertPartitioned() { return nil }
            // A duplicate id, maybe not the first: start again in item order to name the first.
            emptyTable()
        }
        for index in 0..<count {
            let found = withBytes(at: index) { find($0) }
            switch found {
            case .found(let existing): return (existing, index)
            case .empty(let slot, let tag):
                slots[slot] = Int32(index)
                tags[slot] = tag
            }
        }
        return nil
    }

    /// From this many ids the table is built partitioned (below, item order is as fast).
    static let partitionedMinimum = 1 << 16

    /// Inserts every id in the order of its home slot instead of item order: the ids are hashed
    /// in one pass, sorted by the top bits of their home slot (a counting sort into 1,024 runs),
    /// then inserted run by run, so the probes of a run stay in one cache-sized stretch of the
    /// table. In item order every insertion missed the cache twice (tag and slot of a random
    /// place in a 10 MB table for 1M ids): `perf` of a 1M-item POST had the id table at a
    /// quarter of the request, the longer half of the build's two cores. Returns false at the
    /// first duplicate id (the caller starts again in item order, to name the first one).
    /// - Complexity: O(n) expected.
    private mutating func insertPartitioned() -> Bool {
        let n = count
        let shift = mask.nonzeroBitCount - 10  // capacity ≥ 2^17 here: 1,024 runs
        // Per id, its home slot and tag packed (slot << 8 | tag), in item order.
        var homes = [UInt64](repeating: 0, count: n)
        homes.withUnsafeMutableBufferPointer { homes in
            bytes.withUnsafeBytes { all in
                offsets.withUnsafeBufferPointer { offsets in
                    for index in 0..<n {
                        let key = UnsafeRawBufferPointer(rebasing: all[Int(offsets[index])..<Int(offsets[index + 1])])
                        let (slot, tag) = home(of: key)
                        homes[index] = UInt64(slot) << 8 | UInt64(tag)
                    }
                }
            }
        }
        // Counting sort by run.
        var starts = [Int](repeating: 0, count: 1025)
        for h in homes { starts[Int(h >> 8) >> shift + 1] += 1 }
        for run in 0..<1024 { starts[run + 1] += starts[run] }
        var sortedHomes = [UInt64](repeating: 0, count: n)
        var sortedItems = [Int32](repeating: 0, count: n)
        sortedHomes.withUnsafeMutableBufferPointer { sortedHomes in
            sortedItems.withUnsafeMutableBufferPointer { sortedItems in
                for (index, h) in homes.enumerated() {
                    let run = Int(h >> 8) >> shift
                    let at = starts[run]
                    starts[run] = at + 1
                    sortedHomes[at] = h
                    sortedItems[at] = Int32(index)
                }
            }
        }
        homes = []
        let mask = self.mask
        let (idBytes, idOffsets) = (bytes, offsets)  // read while the table is written
        func sameID(_ a: Int32, _ b: Int32) -> Bool {
            let (a, b) = (Int(a), Int(b))
            return idBytes[Int(idOffsets[a])..<Int(idOffsets[a + 1])].elementsEqual(idBytes[Int(idOffsets[b])..<Int(idOffsets[b + 1])])
        }
        return tags.withUnsafeMutableBufferPointer { tags in
            slots.withUnsafeMutableBufferPointer { slots in
                for k in 0..<n {
                    let h = sortedHomes[k]
                    var slot = Int(h >> 8)
                    let tag = UInt8(truncatingIfNeeded: h)
                    let index = sortedItems[k]
                    while true {
                        let t = tags[slot]
                        if t == 0 {
                            tags[slot] = tag
                            slots[slot] = index
                            break
                        }
                        if t == tag {
                            if sameID(slots[slot], index) { return false }
                        }
                        slot = (slot + 1) & mask
                    }
                }
                return true
            }
        }
    }

    /// The position of the item whose id has these UTF-8 bytes.
    func index(ofBytes id: UnsafeRawBufferPointer) -> Int? {
        if case .found(let index) = find(id) { return index }
        return nil
    }

    func withBytes<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = Int(offsets[index])
        let end = Int(offsets[index + 1])
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    /// Starts loading the line of `offsets` that says where id `index` is (see
    /// `Layout.prefetchID(of:)`).
    @inline(__always)
    func prefetchOffset(at index: Int) {
        offsets.prefetchElement(at: index)
    }

    /// Starts loading id `index`'s first bytes (reads its offset, which should be in the cache).
    @inline(__always)
    func prefetchBytes(at index: Int) {
        guard index >= 0 && index < count else { return }
        let start = Int(offsets[index])
        bytes.prefetchElement(at: start)
    }

    /// `withBytes(at:_:)` neither generic nor throwing (plan encoding calls it per id).
    @inline(__always)
    func forBytes(at index: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        let start = Int(offsets[index])
        let end = Int(offsets[index + 1])
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    func string(at index: Int) -> String {
        withBytes(at: index) { String(decoding: $0, as: UTF8.self) }
    }


    var memoryBytes: Int { bytes.capacity + offsets.capacity * 4 + slots.capacity * 4 + tags.capacity }

    private enum Probe { case found(Int), empty(Int, UInt8) }

    /// An id's home slot and its tag (1…255), from the seeded hash of its bytes.
    @inline(__always)
    private func home(of key: UnsafeRawBufferPointer) -> (slot: Int, tag: UInt8) {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        let hash = hasher.finalize()
        return (hash & mask, max(1, UInt8(truncatingIfNeeded: UInt(bitPattern: hash) >> (UInt.bitWidth - 8))))
    }

    private func find(_ key: UnsafeRawBufferPointer) -> Probe {
        guard mask > 0 else { return .empty(0, 1) }
        let start = home(of: key)
        var slot = start.slot
        let tag = start.tag
        return tags.withUnsafeBufferPointer { tags in
            while true {
                let t = tags[slot]
                if t == 0 { return .empty(slot, tag) }
                if t == tag {
                    let candidate = Int(slots[slot])
                    let equal = withBytes(at: candidate) { $0.elementsEqual(key) }
                    if equal { return .found(candidate) }
                }
                slot = (slot + 1) & mask
            }
        }
    }
}
