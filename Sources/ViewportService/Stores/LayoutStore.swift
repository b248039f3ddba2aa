import Synchronization
import ViewportCore

/// Content-addressed layouts, one copy per distinct layout, counted by the sessions using them.
///
/// A layout no session uses stays (a client posts it, then opens sessions on it) until it has been
/// unused for the idle timeout, or until room is needed: then the least recently used unused
/// layout goes first. When every slot (or the item budget) is held by layouts in use, storing
/// another is a 429.
final class LayoutStore: Sendable {
    private struct Entry {
        let layout: Layout
        var sessions: Int
        var lastUsed: Int64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var totalItems = 0
    }

    private let state = Mutex(State())
    let maxLayouts: Int
    let maxTotalItems: Int
    let idleNanoseconds: Int64

    init(maxLayouts: Int, maxTotalItems: Int, idleTimeoutSeconds: Double) {
        self.maxLayouts = maxLayouts
        self.maxTotalItems = maxTotalItems
        self.idleNanoseconds = Int64(idleTimeoutSeconds * 1e9)
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Stores `layout` (or finds the identical one already stored) and, with `retain`, counts one
    /// more session on it. Returns the stored copy and whether it was new.
    func store(_ layout: Layout, retain: Bool) throws(Problem) -> (layout: Layout, created: Bool) {
        let now = Monotonic.nanoseconds()
        let result: Result<(Layout, Bool), Problem> = state.withLock { state in
            if var entry = state.entries[layout.digest] {
                guard entry.layout.isIdentical(to: layout) else {
                    return .failure(.invalid("layout: its content address \(layout.digest) is taken by a different layout"))
                }
                entry.lastUsed = now
                if retain { entry.sessions += 1 }
                state.entries[layout.digest] = entry
                return .success((entry.layout, false))
            }
            guard layout.count <= maxTotalItems else {
                // It could never fit, however much is evicted: too large, not "try later".
                return .failure(.tooLarge("items: \(layout.count) items exceed the store's whole budget of \(maxTotalItems) (layouts.maxTotalItems)"))
            }
            while state.entries.count >= maxLayouts || state.totalItems + layout.count > maxTotalItems {
                guard Self.evictLeastRecentlyUsed(&state) else {
                    return .failure(.capacity(
                        "layouts: \(state.entries.count) stored with \(state.totalItems) items, all in use by sessions (layouts.max \(maxLayouts))"))
                }
            }
            state.entries[layout.digest] = Entry(layout: layout, sessions: retain ? 1 : 0, lastUsed: now)
            state.totalItems += layout.count
            return .success((layout, true))
        }
        return try result.get()
    }

    /// Counts one more session on the stored layout with this id.
    func retain(id: String) -> Layout? {
        let now = Monotonic.nanoseconds()
        return state.withLock { state in
            guard var entry = state.entries[id] else { return nil }
            entry.sessions += 1
            entry.lastUsed = now
            state.entries[id] = entry
            return entry.layout
        }
    }

    /// Counts one session fewer on a layout.
    func release(id: String) {
        let now = Monotonic.nanoseconds()
        state.withLock { state in
            guard var entry = state.entries[id] else { return }
            entry.sessions = max(0, entry.sessions - 1)
            entry.lastUsed = now
            state.entries[id] = entry
        }
    }

    /// The layout with this id and how many sessions use it.
    func lookup(id: String) -> (layout: Layout, sessions: Int)? {
        state.withLock { state in state.entries[id].map { ($0.layout, $0.sessions) } }
    }

    /// Drops layouts unused for longer than the idle timeout.
    func sweep() {
        let now = Monotonic.nanoseconds()
        state.withLock { state in
            for (id, entry) in state.entries where entry.sessions == 0 && now - entry.lastUsed > idleNanoseconds {
                state.entries[id] = nil
                state.totalItems -= entry.layout.count
            }
        }
    }

    private static func evictLeastRecentlyUsed(_ state: inout State) -> Bool {
        var victim: (String, Entry)?
        for (id, entry) in state.entries where entry.sessions == 0 {
            if victim == nil || entry.lastUsed < victim?.1.lastUsed ?? .max { victim = (id, entry) }
        }
        guard let (id, entry) = victim else { return false }
        state.entries[id] = nil
        state.totalItems -= entry.layout.count
        return true
    }
}
