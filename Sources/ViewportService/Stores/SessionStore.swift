import Synchronization
import ViewportCore

/// Open sessions by id, in shards under separate locks so that lookups from many connections
/// rarely contend. Enforces `sessions.max` and `sessions.idleTimeout`; a session that goes ends
/// its layout lease, which releases the layout in the layout store.
final class SessionStore: Sendable {
    private static let shardCount = 16
    /// One lock's worth of sessions.
    private final class Shard: Sendable {
        let sessions = Mutex<[String: SessionHandle]>([:])
    }

    private let shards: [Shard]
    private let liveCount = Atomic<Int>(0)
    let maxSessions: Int
    let idleNanoseconds: Int64

    /// `layouts` is not kept: each session's layout lease releases into the store it came from.
    init(maxSessions: Int, idleTimeoutSeconds: Double, layouts: LayoutStore) {
        self.maxSessions = maxSessions
        self.idleNanoseconds = Int64(idleTimeoutSeconds * 1e9)
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    var count: Int { liveCount.load(ordering: .relaxed) }

    /// A new unguessable session id: 128 random bits from the system's CSPRNG, as hex.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 60, through: 0, by: -4) { out.append(hex[Int((word >> UInt64(shift)) & 15)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The shard of an id: its last hex digit (ids are 128 random bits as hex, so this spreads
    /// them evenly; any other id still lands in some shard). A `Hasher` pass here cost ~300
    /// instructions per request, on top of the dictionary's own hashing.
    private func shard(for id: String) -> Shard {
        let last = id.utf8.last ?? 0
        let digit = last <= UInt8(ascii: "9") ? last &- UInt8(ascii: "0") : (last | 0x20) &- UInt8(ascii: "a") &+ 10
        return shards[Int(digit) & (Self.shardCount - 1)]
    }

    /// Adds a session, or throws 429 when `sessions.max` are open and none has expired.
    func insert(_ handle: SessionHandle) throws(Problem) {
        if !reserveSlot() {
            sweep()
            guard reserveSlot() else {
                throw .capacity("sessions: \(maxSessions) open (sessions.max), none idle long enough to evict")
            }
        }
        shard(for: handle.id).sessions.withLock { $0[handle.id] = handle }
    }

    private func reserveSlot() -> Bool {
        var current = liveCount.load(ordering: .relaxed)
        while current < maxSessions {
            let (exchanged, original) = liveCount.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// The live session with this id; an expired one is removed and not returned.
    func get(_ id: String) -> SessionHandle? {
        guard let handle = shard(for: id).sessions.withLock({ $0[id] }) else { return nil }
        if handle.idleNanoseconds(now: Monotonic.nanoseconds()) > idleNanoseconds {
            _ = remove(id)
            return nil
        }
        return handle
    }

    /// Removes a session (DELETE, or expiry) and ends its layout lease. Returns it if it was there.
    @discardableResult
    func remove(_ id: String) -> SessionHandle? {
        guard let handle = shard(for: id).sessions.withLock({ $0.removeValue(forKey: id) }) else { return nil }
        liveCount.subtract(1, ordering: .relaxed)
        handle.state.withLock { state in
            state.closed = true
            state.layoutLease.end()
        }
        return handle
    }

    /// Takes a session out, if `handle` is still the one stored, and ends its layout lease; its
    /// caller holds its lock (`state`): the session ended, or moved to another instance.
    func detach(_ handle: SessionHandle, _ state: inout SessionHandle.State) {
        state.layoutLease.end()
        let removed = shard(for: handle.id).sessions.withLock { sessions -> Bool in
            guard sessions[handle.id] === handle else { return false }
            sessions[handle.id] = nil
            return true
        }
        if removed { liveCount.subtract(1, ordering: .relaxed) }
    }

    /// Every open session's handle (for a shared store's writer and shutdown).
    var allHandles: [SessionHandle] { shards.flatMap { shard in shard.sessions.withLock { Array($0.values) } } }

    /// Removes every session idle for longer than the timeout.
    func sweep() {
        let now = Monotonic.nanoseconds()
        for shard in shards {
            let expired = shard.sessions.withLock { sessions in
                sessions.values.filter { $0.idleNanoseconds(now: now) > idleNanoseconds }.map { $0.id }
            }
            for id in expired { remove(id) }
        }
    }

    /// Every open session (for shutdown and tests).
    var allIDs: [String] { shards.flatMap { shard in shard.sessions.withLock { Array($0.keys) } } }
}
