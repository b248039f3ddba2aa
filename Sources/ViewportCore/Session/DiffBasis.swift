/// What a session's next update diffs against: how its shown items relate to its region.
///
/// An update changes the basis: a plan of two regions leaves `.regions`, or `.window` when a drag
/// step measured one; a resync leaves `.full`; a layout change leaves `.regions`.
enum DiffBasis: Sendable {
    /// The shown items are those the region materializes (and the pinned header): the next
    /// update diffs the old region against the new one.
    case regions
    /// As `.regions`, and the region may move inside this window, measured at the current
    /// region and layout, with nothing entering or leaving.
    case window(SafeWindow)
    /// The shown items need not be those of the region (a resync adopted the client's views):
    /// the next update compares the shown items with its new region itself.
    case full

    /// The safe window, if one is known.
    var window: SafeWindow? {
        if case .window(let window) = self { return window }
        return nil
    }

    /// Whether the next update compares the shown items with its region (`.full`).
    var isFull: Bool {
        if case .full = self { return true }
        return false
    }
}
