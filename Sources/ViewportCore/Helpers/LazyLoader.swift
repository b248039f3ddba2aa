/// The `lazyLoad` helper: which items' heavy content (images) should load now, as the lazy image
/// loading of uiscrollview-in-depth.txt: load what is shown when a drag begins and when scrolling
/// stops, and at `drag-end` what will be on screen at the target; nothing while the finger moves
/// or the view decelerates.
struct LazyLoader: Sendable {
    /// Items whose content is loaded.
    private(set) var loaded: Set<Int> = []
    /// Materialized items not loaded yet.
    private(set) var pending: Set<Int> = []
    /// Items loaded at the last `drag-end`; those not materialized at the next `drag-begin` are
    /// unloaded then.
    private(set) var fromDragEnd: Set<Int> = []

    init() {}

    /// A loader in a given state (a restored snapshot).
    init(loaded: Set<Int>, pending: Set<Int>, fromDragEnd: Set<Int>) {
        self.loaded = loaded
        self.pending = pending
        self.fromDragEnd = fromDragEnd
    }

    /// Items that left the materialized region are no longer loaded.
    /// Carries the load state to another layout (`map`: old position → new, nil when gone).
    mutating func remap(_ map: (Int) -> Int?) {
        loaded = Set(loaded.compactMap(map))
        pending = Set(pending.compactMap(map))
        fromDragEnd = Set(fromDragEnd.compactMap(map))
    }

    mutating func itemsLeft(_ items: [Int]) {
        for item in items {
            loaded.remove(item)
            pending.remove(item)
            fromDragEnd.remove(item)
        }
    }

    /// Items that entered the materialized region wait for the next load unless loaded already.
    mutating func itemsEntered(_ items: [Int]) {
        for item in items where !loaded.contains(item) { pending.insert(item) }
    }

    /// `drag-begin`: forgets the items loaded at `drag-end` that never became materialized, then
    /// loads every materialized item not loaded yet.
    mutating func dragBegan(isMaterialized: (Int) -> Bool) -> [Int] {
        for item in fromDragEnd where !isMaterialized(item) { loaded.remove(item) }
        fromDragEnd = []
        return loadPending()
    }

    /// `idle` (and the opening plan): loads every materialized item not loaded yet.
    mutating func loadPending() -> [Int] {
        guard !pending.isEmpty else { return [] }
        let load = pending.sorted()
        loaded.formUnion(pending)
        pending = []
        return load
    }

    /// `drag-end`: loads the items on screen at the target (`onTarget`, in layout order) not loaded
    /// yet.
    mutating func dragEnded(onTarget: [Int]) -> [Int] {
        let load = onTarget.filter { !loaded.contains($0) }
        for item in load {
            loaded.insert(item)
            pending.remove(item)
            fromDragEnd.insert(item)
        }
        return load
    }
}
