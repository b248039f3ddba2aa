/// The ids of items a session inserted into its layout's stacks (PATCH), on top of the layout's
/// id table: uid → (id, stack) and id → uid, both persistent maps (`PersistentMap`).
///
/// A PATCH copies the O(log₃₂ m) nodes on the path of each id it inserts or removes (m: the ids
/// the session has inserted and not removed), whatever happened before: its cost does not grow
/// with the session's history, and versions share everything else. Inserted items get uids from
/// a counter above the layout's table (`firstUID + issued`), never reused within a session.
struct IDOverlay: Sendable {
    struct Entry: Sendable {
        var id: ContiguousArray<UInt8>
        /// The stack (its ordinal in the layout) the item was inserted into.
        var stack: Int32
    }

    private var byUID = PersistentMap<Entry>()
    /// Hash of the id's bytes → the uids whose ids have that hash (almost always one).
    private var byHash = PersistentMap<ContiguousArray<Int32>>()
    /// Uids given out so far (inserted items, removed ones included).
    private(set) var issued = 0

    init() {}

    var isEmpty: Bool { byUID.isEmpty }
    /// Inserted items present now.
    var count: Int { byUID.count }

    /// The hash of an id, seeded per process (a client cannot choose ids that collide).
    @inline(__always)
    static func hash(_ id: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: id)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// The uid and stack of the inserted item with this id.
    /// - Complexity: O(log₃₂ m) expected.
    func find(_ id: UnsafeRawBufferPointer) -> (uid: Int32, stack: Int)? {
        guard !isEmpty, let uids = byHash[Self.hash(id)] else { return nil }
        for uid in uids {
            guard let entry = byUID[UInt64(UInt32(bitPattern: uid))] else { continue }
            let equal = entry.id.withUnsafeBytes { $0.elementsEqual(id) }
            if equal { return (uid, Int(entry.stack)) }
        }
        return nil
    }

    /// The entry of an inserted uid.
    func entry(_ uid: Int32) -> Entry? { byUID[UInt64(UInt32(bitPattern: uid))] }

    /// Takes the next uid (`firstUID + issued`).
    mutating func issue(firstUID: Int) -> Int {
        defer { issued += 1 }
        return firstUID + issued
    }

    /// Records an inserted item.
    /// - Complexity: O(log₃₂ m) expected.
    mutating func add(id: ContiguousArray<UInt8>, uid: Int32, stack: Int) {
        byUID.set(UInt64(UInt32(bitPattern: uid)), Entry(id: id, stack: Int32(stack)))
        let h = id.withUnsafeBytes { Self.hash($0) }
        var uids = byHash[h] ?? []
        uids.append(uid)
        byHash.set(h, uids)
    }

    /// Forgets an inserted item (removed from its stack).
    /// - Complexity: O(log₃₂ m) expected.
    mutating func remove(uid: Int32) {
        guard let entry = entry(uid) else { return }
        byUID.remove(UInt64(UInt32(bitPattern: uid)))
        let h = entry.id.withUnsafeBytes { Self.hash($0) }
        var uids = byHash[h] ?? []
        uids.removeAll { $0 == uid }
        if uids.isEmpty { byHash.remove(h) } else { byHash.set(h, uids) }
    }
}
