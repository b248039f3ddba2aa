import ViewportRedis

/// The keys viewportd uses in a shared store, under `store.keyPrefix`, laid out so that every
/// script touches the keys of one hash slot (a Redis Cluster runs a script on one slot only).
///
/// Sessions are spread over ``cellCount`` **cells**; a cell is a hash tag (`{<tag>}`, one slot
/// each) under which its sessions' keys and its own liveness records live:
///
/// - `session:{c}:<id>`: a hash: `epoch` (the fencing token of the current owner), `ver` (the
///   version of the stored snapshot), `hwm` (handles reserved so far), `snap` (the snapshot),
///   `owner`, `free` (released by its owner), `deleted` (a tombstone).
/// - `lease:{c}:<id>`: `<instance>|<epoch>` while an instance owns the session, with a TTL.
/// - `reply:{c}:<nonce>`: where an owner answers one handover request for a session of the cell
///   (made by the asker with the session's cell: the release that answers it is one script).
/// - `beat:{c}`: the store's clock (ms) at the last heartbeat script of any instance in the cell;
///   `grace:{c}`: set, with a lease as TTL, when heartbeats resume after a silence of every
///   instance in the cell (its part of the store was unreachable): sessions their owner did not
///   release are not taken from it meanwhile; `seen:{c}`: a hash, per instance the store's clock
///   at its last heartbeat script in the cell; `pulse:{c}`: set by every beat (script or plain
///   `PEXPIRE`) with the outage gap as TTL: gone when no beat reached the cell for that long.
///
/// Global keys, never touched by a script: `layout:<id>` (content-addressed, shared by sessions
/// of every cell), `instance:<instance>` (an instance's heartbeat, with a TTL) and
/// `inbox:<instance>` (its handover requests, `<session> <reply key>`).
struct StoreKeys: Sendable {
    let prefix: String

    /// How many cells sessions are spread over: a power of two dividing the 16,384 slots, fixed
    /// for the life of a store (another count puts sessions in other keys). Each instance's
    /// heartbeat touches the cells where it holds leases (``CellLiveness``); a resharding moves
    /// whole cells.
    static let cellCount = 256

    /// The hash tag of the cell of session `id`, braces included.
    /// - Complexity: O(id length).
    static func cell(of id: String) -> String { cell(cellIndex(of: id)) }

    /// The index of the cell of session `id` (0 ..< ``cellCount``).
    /// - Complexity: O(id length).
    static func cellIndex(of id: String) -> Int { Int(RedisHashSlot.crc16(Array(id.utf8))) & (cellCount - 1) }

    /// The hash tag of cell `index` (0 ..< ``cellCount``), braces included.
    static func cell(_ index: Int) -> String { cells[index] }

    private static let cells: [String] = (0..<cellCount).map { "{" + RedisHashSlot.tag(forSlot: $0 * (RedisHashSlot.count / cellCount)) + "}" }

    func layout(_ id: String) -> String { prefix + "layout:" + id }
    func session(_ id: String) -> String { prefix + "session:" + Self.cell(of: id) + ":" + id }
    func lease(_ id: String) -> String { prefix + "lease:" + Self.cell(of: id) + ":" + id }
    /// A reply key for a handover request of session `id`.
    func reply(_ nonce: String, session id: String) -> String { prefix + "reply:" + Self.cell(of: id) + ":" + nonce }
    func beat(cell: String) -> String { prefix + "beat:" + cell }
    func grace(cell: String) -> String { prefix + "grace:" + cell }
    func seen(cell: String) -> String { prefix + "seen:" + cell }
    func pulse(cell: String) -> String { prefix + "pulse:" + cell }
    /// The liveness keys of session `id`'s cell.
    func beat(of id: String) -> String { beat(cell: Self.cell(of: id)) }
    func grace(of id: String) -> String { grace(cell: Self.cell(of: id)) }
    func seen(of id: String) -> String { seen(cell: Self.cell(of: id)) }
    func pulse(of id: String) -> String { pulse(cell: Self.cell(of: id)) }
    func instance(_ id: String) -> String { prefix + "instance:" + id }
    func inbox(_ id: String) -> String { prefix + "inbox:" + id }
}
