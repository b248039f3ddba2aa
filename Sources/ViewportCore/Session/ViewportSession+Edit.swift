extension ViewportSession {
    /// Edits the session's layout (docs/api.md "Stacks and edits", `PATCH /v1/sessions/{id}/layout`) and answers
    /// the plan.
    ///
    /// The edit makes a new version of the session's layout (`Layout.applying`), sharing what it
    /// did not change with the stored layout and the other sessions on it. The offset follows
    /// `anchor`: `visible` keeps the first item on screen (the viewport without buffer, in the
    /// previous version's order) that survives the edit exactly where it was on screen (not
    /// clamped); `end` keeps a viewport that was at the end of the content along the layout's
    /// axis (within 1 point of the largest offset of the scrollable range) at the new end, clamped
    /// to the new range on both axes, and is otherwise `visible`; `none` keeps the offset. Items
    /// that stay materialized keep their views (`move` when their rect changed), the others leave
    /// and enter as for a layout change; the plan carries `contentSize` when it changed.
    ///
    /// It is an update: it takes the next `seq` (`seq` equal to the last answers the last plan
    /// again, before the edit is looked at: a retried insert would otherwise be refused), counts
    /// as phase idle, and changes nothing when it throws.
    /// - Complexity: the edit's (see `Layout.applying`), plus O(log n + k log k) for k items
    ///   materialized before and after, each position looked up in O(log n) when the edit
    ///   inserts or removes (resizes alone keep every position); position-keyed helper state is
    ///   renumbered only then (`remapItems`).
    public mutating func apply(
        _ edit: StackEdit, anchor: EditAnchor = .visible, seq sent: UInt64? = nil, maxItems: Int = .max
    ) throws(SessionError) -> Plan {
        if loop != nil {
            throw .invalid(field: "layout", reason: "a looping session cannot edit its layout (its period comes from it); open a new session")
        }
        // A retry is answered before the edit is looked at, a conflict after it is checked.
        if let retry = sequence.retry(sent) { return retry }
        let edited = try layout.applying(edit, maxItems: maxItems)
        try sequence.checkNext(sent)
        let newLayout = edited.layout
        let newOffset: Point
        switch anchor {
        case .none:
            newOffset = offset
        case .visible:
            newOffset = visibleAnchorOffset(in: newLayout, position: edited.newPosition(ofOld:)) ?? offset
        case .end:
            let axis = layout.stackAxis ?? pagingAxis
            // Within 1 point on either side: an offset past the end by more (a bounce) is not at it.
            if abs(axis.component(of: offset) - scrollRange(axis).upper) <= 1 {
                let main = ScrollRange(axis: axis, contentSize: newLayout.contentSize, viewport: viewport, insets: insets)
                let cross = ScrollRange(axis: axis.cross, contentSize: newLayout.contentSize, viewport: viewport, insets: insets)
                newOffset = axis.setting(main.upper, in: axis.cross.setting(cross.clamp(axis.cross.component(of: offset)), in: offset))
            } else {
                newOffset = visibleAnchorOffset(in: newLayout, position: edited.newPosition(ofOld:)) ?? offset
            }
        }
        var remap = ItemRemap(
            old: layout, new: newLayout, extraNames: pools.extraNames,
            isIdentity: !edited.positionsShifted && newLayout.reuseNames == layout.reuseNames, keepsReuse: true,
            position: edited.newPosition(ofOld:))
        var plan = try transition(to: newLayout, offset: newOffset, remap: &remap, field: "layout")
        edits += 1
        if edited.contentSizeChanged {
            plan.contentSize = newLayout.contentSize
            sequence.record(plan)
        }
        return plan
    }
}
