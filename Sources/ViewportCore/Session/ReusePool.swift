/// The pooled views of one reuse identifier, oldest first.
struct ReusePool: Sendable {
    struct Entry: Hashable, Sendable {
        var view: Int
        /// The item this view last showed; nil when the session's layout no longer has it.
        var lastItem: Int?
        /// The sequence number of the plan that pooled it.
        var pooledAt: UInt64
    }

    private(set) var entries: [Entry] = []

    init(entries: [Entry] = []) { self.entries = entries }

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    mutating func push(_ entry: Entry) { entries.append(entry) }

    /// Takes the most recently pooled view.
    mutating func popNewest() -> Entry? { entries.popLast() }

    /// Takes a given view out of the pool, if it is there.
    /// - Complexity: O(pool size); it searches from the newest end, where a returning item's view
    ///   usually is.
    mutating func take(view: Int) -> Entry? {
        guard let position = entries.lastIndex(where: { $0.view == view }) else { return nil }
        return entries.remove(at: position)
    }

    /// Takes the view that last showed `item`, if one is here.
    /// - Complexity: O(pool size), from the newest end.
    mutating func take(lastShowing item: Int) -> Entry? {
        guard let position = entries.lastIndex(where: { $0.lastItem == item }) else { return nil }
        return entries.remove(at: position)
    }

    /// Drops `excess` views pooled by plan `seq`, oldest first, and returns them.
    mutating func trim(excess: Int, pooledAt seq: UInt64) -> [Entry] {
        var dropped: [Entry] = []
        var position = 0
        while dropped.count < excess, position < entries.count {
            if entries[position].pooledAt == seq {
                dropped.append(entries.remove(at: position))
            } else {
                position += 1
            }
        }
        return dropped
    }
}
