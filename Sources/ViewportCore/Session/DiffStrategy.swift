/// How `ViewportSession.apply(_:)` finds the items that leave and enter on an update, picked by
/// ``pick(basis:loop:samePin:from:to:)`` from the session's state and the update's region. Each
/// has its own function in `ViewportSession+Diff.swift`.
enum DiffStrategy: Sendable {
    /// The new region is inside the safe window and the pinned header stays: nothing enters or
    /// leaves. O(1).
    case unchanged
    /// After a resync (`DiffBasis.full`): the shown items against what the new region and pin
    /// need. O(k + log n + m) for k shown and m needed items.
    case full
    /// Periodic content: the shown items against the copies at the new region; an item whose
    /// view must show another copy of it leaves and enters again.
    case loop(LoopSpace)
    /// A move along one axis by less than `SafeWindow.lookahead`: one query around each moving
    /// edge finds what changed and measures the next safe window.
    case drag(SafeWindow.Axis)
    /// The regions do not overlap: every shown item leaves; one query of the new region.
    case jump
    /// Any other move: the (at most four) strips of each region beyond the other's edges.
    case strips

    /// The strategy for an update from the session's `basis`, `loop` and current region `old`
    /// to `new`; `samePin` when the update keeps the pinned sticky header.
    /// - Complexity: O(1).
    @inline(__always)
    static func pick(basis: DiffBasis, loop: LoopSpace?, samePin: Bool, from old: Region, to new: Region) -> DiffStrategy {
        if case .window(let window) = basis, window.contains(new), samePin { return .unchanged }
        if basis.isFull && loop == nil { return .full }
        if let loop { return .loop(loop) }
        let sameX = new.minX == old.minX && new.maxX == old.maxX
        let sameY = new.minY == old.minY && new.maxY == old.maxY
        // Nested two-argument `max` (docs/workarounds.md "Variadic max allocates").
        let moved = max(max(max(abs(new.minX - old.minX), abs(new.maxX - old.maxX)), abs(new.minY - old.minY)), abs(new.maxY - old.maxY))
        if sameX != sameY && moved < SafeWindow.lookahead { return .drag(sameX ? .y : .x) }
        if new.isDisjoint(from: old) { return .jump }
        return .strips
    }
}
