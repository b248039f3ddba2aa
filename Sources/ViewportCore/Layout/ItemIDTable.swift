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
        slots = ContiguousArray(repeating: -1, count: capacity)
        tags = ContiguousArray(repeating: 0, count: capacity)
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

    func string(at index: Int) -> String {
        withBytes(at: index) { String(decoding: $0, as: UTF8.self) }
    }


    var memoryBytes: Int { bytes.capacity + offsets.capacity * 4 + slots.capacity * 4 + tags.capacity }

    private enum Probe { case found(Int), empty(Int, UInt8) }

    private func find(_ key: UnsafeRawBufferPointer) -> Probe {
        guard mask > 0 else { return .empty(0, 1) }
        var hasher = Hasher()
        hasher.combine(bytes: key)
        let hash = hasher.finalize()
        var slot = hash & mask
        let tag = max(1, UInt8(truncatingIfNeeded: UInt(bitPattern: hash) >> (UInt.bitWidth - 8)))
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
