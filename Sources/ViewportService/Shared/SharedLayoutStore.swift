import Logging
import ViewportCore

/// Layouts in this process (a ``LayoutStore``) in front of the shared store: a layout posted here
/// is written to the store (in its binary form) before it is answered, and an id this instance
/// does not know is fetched from the store, so any instance opens a session on any layout.
final class SharedLayoutStore: LayoutRepository {
    let local: LayoutStore
    let store: RedisStateStore
    let maxItems: Int
    private let gates = IDGates()
    private let logger: Logger

    init(local: LayoutStore, store: RedisStateStore, maxItems: Int, logger: Logger) {
        self.local = local
        self.store = store
        self.maxItems = maxItems
        self.logger = logger
    }

    var count: Int { local.count }

    /// Stores a layout here and in the shared store. It is new (201) only when neither had it: a
    /// layout another instance posted is already stored, though this one never saw it (200).
    func store(_ layout: Layout, retain: Bool) throws(Problem) -> (layout: Layout, created: Bool) {
        let (stored, createdHere) = try local.store(layout, retain: retain)
        do {
            if createdHere, try store.addLayout(id: stored.digest, bytes: stored.binaryEncoded()) { return (stored, true) }
            // Known here, or stored by another instance: kept in the store as long as a new one
            // would stay. Known here is not known to the store: it may have expired there (no
            // session wrote it for twice the idle timeout, or between the two commands), and is
            // then written again.
            if try !store.refreshLayout(id: stored.digest) {
                try store.putLayout(id: stored.digest, bytes: stored.binaryEncoded())
            }
        } catch {
            if retain { local.release(id: stored.digest) }
            throw error.problem
        }
        return (stored, false)
    }

    func retain(id: String) throws(Problem) -> Layout? {
        if let found = local.retain(id: id) { return found }
        return try fetch(id, retain: true)
    }

    func release(id: String) { local.release(id: id) }

    func lookup(id: String) throws(Problem) -> (layout: Layout, sessions: Int)? {
        if let found = local.lookup(id: id) { return found }
        return try fetch(id, retain: false).map { ($0, 0) }
    }

    func sweep() { local.sweep() }

    /// Writes a layout this instance has to the store again (the store lost it: it restarted
    /// without persistence, while a session here still uses it).
    func republish(id: String) {
        guard let layout = local.lookup(id: id)?.layout else { return }
        do {
            try store.putLayout(id: id, bytes: layout.binaryEncoded())
            logger.notice("layout \(id) was missing in the shared store: written again")
        } catch {
            logger.warning("layout \(id) is missing in the shared store and could not be written again: \(error)")
        }
    }

    /// Fetches a layout this instance does not have and keeps it (one fetch per id at a time:
    /// a 1M-item layout is tens of megabytes).
    private func fetch(_ id: String, retain: Bool) throws(Problem) -> Layout? {
        guard SharedSessionStore.isHexID(id) else { return nil }
        return try gates.withLock(id) { () throws(Problem) -> Layout? in
            if let found = retain ? local.retain(id: id) : local.lookup(id: id)?.layout { return found }
            guard let layout = try readStored(id) else { return nil }
            // As after a JSON post: give back what the decode and the index build freed (its
            // stored bytes are gone by now). Without it, an instance that fetched the 1M-item
            // list kept 78 B of RSS per item instead of ~58 (scripts/store-bench.py).
            FreeMemory.afterBuildingLayout(items: layout.count)
            guard layout.digest == id else {
                logger.error("stored layout \(id) has the content of \(layout.digest)")
                throw Problem.unavailable("layout \(id) in the shared store does not match its id", retryAfter: 5)
            }
            return try local.store(layout, retain: retain).layout
        }
    }

    /// The layout stored under `id`, decoded and indexed; nil when the store has none.
    private func readStored(_ id: String) throws(Problem) -> Layout? {
        let bytes: [UInt8]?
        do {
            bytes = try store.getLayout(id: id)
        } catch {
            throw error.problem
        }
        guard let bytes else { return nil }
        do {
            return try Layout.decodeBinary(bytes, maxItems: maxItems)
        } catch {
            logger.error("stored layout \(id) cannot be read: \(error)")
            throw Problem.unavailable("layout \(id) is in the shared store but cannot be read by this instance (\(error))", retryAfter: 5)
        }
    }
}
