/// A stack section of a layout (docs/api.md "Stacks and edits"): its id and its `StackSection`, whose entries
/// are the items in layout order (item `segment.start + rank`).
///
/// Item uids are positions in the layout's id table: the items built with the layout are
/// `storageStart ..< storageStart + builtCount` (their ids in that table, in the order they were
/// posted, so their uids increase with rank and the tree derives their order keys from them);
/// items a session inserts later get uids above the table, with their ids in the layout's
/// `IDOverlay`.
struct LayoutStack: Sendable {
    /// The section's id (`insert` names it with `at` and `section`).
    let id: String
    var section: StackSection
    let storageStart: Int
    let builtCount: Int

    /// Whether `uid` is one of the items built with the layout (whose id is in the layout's table).
    @inline(__always)
    func isBuilt(_ uid: Int32) -> Bool { Int(uid) >= storageStart && Int(uid) < storageStart + builtCount }

    /// Where the next section starts along the axis: the origin plus the longest lane.
    var far: Double { section.mainOrigin + section.extent }
}

/// How the sections of a layout with stacks are stacked, kept to move sections after an edited
/// stack (PATCH) and to write the layout back out.
struct SectionGeometry: Sendable {
    let axis: Axis
    let insets: Insets
    let spacing: Double
    /// The content size the layout was posted with, if any: it stays through edits.
    let givenContentSize: Size?
}
