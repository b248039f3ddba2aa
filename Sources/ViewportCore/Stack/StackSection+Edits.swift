/// Edits (docs/api.md "Stacks and edits"): resizes, inserts and removes by rank, with the lane rules. Each checks
/// its input before changing anything; to apply a batch all or nothing, edit a copy (it shares the
/// tree) and keep it only when every edit succeeded. Ranks must be valid (the caller resolves ids
/// to uids to ranks with `rank(ofUID:)`) and inserted uids new to the section; breaking either is
/// a programming error (a trap), not a client's.
extension StackSection {
    /// Checks a size: finite, not negative, at most `maxLength` on each side.
    public static func validate(size: Size, field: String) throws(StackError) {
        guard size.isValidExtent else { throw StackError(field: field, reason: "must be finite and not negative") }
        guard size.width <= maxLength && size.height <= maxLength else {
            throw StackError(field: field, reason: "must be at most \(Int(maxLength)) points")
        }
    }

    /// Checks a length (spacing, lane size): finite, not negative, at most `maxLength`.
    public static func validate(length: Double, field: String) throws(StackError) {
        guard length.isFinite, length >= 0 else { throw StackError(field: field, reason: "must be finite and not negative") }
        guard length <= maxLength else { throw StackError(field: field, reason: "must be at most \(Int(maxLength)) points") }
    }

    /// Checks an item to insert: a valid size, or none when the section has an estimate. `field`
    /// names the item (`insert[0].items[2]`).
    public func validate(_ item: Item, field: String) throws(StackError) {
        if let size = item.size {
            try Self.validate(size: size, field: field + ".size")
        } else if estimate == nil {
            throw StackError(field: field + ".size", reason: "required: the stack has no estimate")
        }
    }

    /// Gives the item at `rank` its measured size; it keeps its lane.
    /// - Complexity: O(log n).
    public mutating func resize(at rank: Int, to size: Size) throws(StackError) {
        try Self.validate(size: size, field: "size")
        tree.resize(at: rank, main: axis.component(of: size), cross: axis.cross.component(of: size), isMeasured: true)
    }

    /// Inserts `items` (in order) at `position`; returns the rank of the first. Items without a
    /// size get the estimate. Lanes: before or after an item, that item's; at the start, the first
    /// item's (lane 0 when empty); at the end, each the shortest lane in turn.
    /// - Complexity: O(m log lanes + log n) (plus relabelling of order keys, rare).
    @discardableResult
    public mutating func insert(_ items: [Item], at position: Position) throws(StackError) -> Int {
        for (k, item) in items.enumerated() { try validate(item, field: "items[\(k)]") }
        let rank: Int
        var lane: UInt16? = nil
        let anchor: StackTree.Anchor
        switch position {
        case .before(let r):
            rank = r
            lane = tree.entry(at: r).lane
            anchor = .next
        case .after(let r):
            rank = r + 1
            lane = tree.entry(at: r).lane
            anchor = .previous
        case .start:
            rank = 0
            lane = isEmpty ? 0 : tree.entry(at: 0).lane
            anchor = .next
        case .end:
            rank = count
            anchor = .previous
        }
        var entries = ContiguousArray<StackEntry>()
        entries.reserveCapacity(items.count)
        var chooser = lane == nil && laneCount > 1 ? LaneChooser(tree: tree) : nil
        for item in items {
            let size = item.size ?? estimate ?? .zero
            var entry = StackEntry(
                uid: item.uid, main: axis.component(of: size), cross: axis.cross.component(of: size), lane: lane ?? 0,
                isMeasured: item.size != nil, reuseClass: item.reuseClass ?? reuseClass)
            if chooser != nil { entry.lane = UInt16(chooser?.add(main: StackLength(entry.main)) ?? 0) }
            entries.append(entry)
        }
        tree.insert(contentsOf: entries, at: rank, anchor: anchor)
        return rank
    }

    /// Removes the item at `rank` and returns its entry.
    /// - Complexity: O(log n).
    @discardableResult
    public mutating func remove(at rank: Int) -> StackEntry { tree.remove(at: rank) }
}
