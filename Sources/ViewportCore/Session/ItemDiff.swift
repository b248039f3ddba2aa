/// What one diff strategy found for an update: the items that leave and enter (each in layout
/// order) and the basis the next update diffs against.
struct ItemDiff {
    var leaving: [Int]
    var entering: [Int]
    /// The next update's basis once this one is applied.
    var nextBasis: DiffBasis = .regions
    /// Whether the pinned sticky headers are already accounted for (a full diff counts the new
    /// pin among the items needed); otherwise `adjustForPins` corrects the lists.
    var pinsAdjusted = false
}
