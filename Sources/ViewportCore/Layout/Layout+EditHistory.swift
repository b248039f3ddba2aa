/// A layout version's ``EditHistory`` in session snapshots: written after the stored layout's
/// digest, read back and replayed on that layout by the instance that restores the session.
///
/// Format (snapshot version 4): a flag, then for a checkpoint the edits it folded (count) and its
/// bytes (length-prefixed, ``Layout/binaryEncoded()``); then the edits since (count, each
/// `StackEdit.write`). Version 3 has no checkpoints: the edits alone (count, each edit), written
/// for histories without one.
extension Layout {
    /// A history read from a snapshot: the version is the checkpoint's (else the stored layout)
    /// with `edits` applied.
    struct SavedEditHistory {
        var checkpoint: (bytes: [UInt8], count: Int)?
        var edits: [StackEdit] = []
    }

    /// Writes the history that made this version (an empty one for a stored layout). Version 3
    /// has no checkpoints: write it only when ``hasEditCheckpoint`` is false.
    /// - Complexity: O(b) for b bytes of the history (a checkpoint is copied).
    func writeEditHistory(_ w: inout BinaryWriter, snapshotVersion: UInt8) {
        let (checkpoint, edits) = editHistory?.sinceCheckpoint ?? (nil, [])
        precondition(snapshotVersion >= 4 || checkpoint == nil, "a checkpoint in a version 3 snapshot")
        if snapshotVersion >= 4 { w.bool(checkpoint != nil) }
        if let checkpoint {
            w.count((editHistory?.count ?? 0) - edits.count)
            checkpoint.withUnsafeBytes { w.lengthPrefixed($0) }
        }
        w.count(edits.count)
        for edit in edits { w.raw(edit) }
    }

    static func readEditHistory(_ r: inout BinaryReader, snapshotVersion: UInt8) throws(BinaryFormatError) -> SavedEditHistory {
        var saved = SavedEditHistory()
        if snapshotVersion >= 4, try r.bool() {
            let count = try r.count()
            saved.checkpoint = (Array(try r.lengthPrefixed()), count)
        }
        for _ in 0..<(try r.elementCount(minBytes: 3)) { saved.edits.append(try StackEdit.read(&r)) }
        return saved
    }

    /// The version `saved` describes, this being the stored layout it was made from: its
    /// checkpoint decoded (keeping this layout's id), or this layout, then the edits applied.
    /// - Complexity: O(n log n) to decode a checkpoint of n items, plus the edits'.
    func restoring(_ saved: SavedEditHistory) throws(BinaryFormatError) -> Layout {
        var layout = self
        if let checkpoint = saved.checkpoint {
            let decoded = try Layout.decodeBinary(checkpoint.bytes)
            guard decoded.hasStacks else { throw .invalid("the checkpoint of layout \(digest) has no stacks") }
            layout = decoded.copy(digest: digest, editHistory: EditHistory(checkpoint: checkpoint.bytes, count: checkpoint.count))
        }
        for (k, edit) in saved.edits.enumerated() {
            do {
                layout = try layout.applying(edit).layout
            } catch {
                throw .invalid("edit \(k) of the layout \(digest) does not apply: \(error)")
            }
        }
        return layout
    }

    /// Whether this version's history starts at a checkpoint (not at the stored layout).
    var hasEditCheckpoint: Bool { editHistory?.startsAtCheckpoint == true }

    /// About the size of this layout's binary form (to decide when a history of edits is worth
    /// folding): its ids' bytes and a few bytes an item.
    var estimatedBinarySize: Int { 64 + ids.bytes.count + 4 * count }

    /// This layout under another id and history: a version restored from its checkpoint answers
    /// to the stored layout's id, as the version it was made from did.
    /// - Complexity: O(s) for s sections (the lookups by section are made again); items are shared.
    func copy(digest: String, editHistory: EditHistory?) -> Layout {
        Layout(
            ids: ids, rects: explicitRects, reuseClasses: reuseClasses, segments: segments, stacks: stacks,
            placedSections: placedSections, stickyItems: stickyItems, reuseNames: reuseNames, contentSize: contentSize,
            hasExplicitContentSize: hasExplicitContentSize, digest: digest, index: index, geometry: geometry, overlay: overlay,
            fixedEdgesCache: fixedEdgesCache, axis: axis, editHistory: editHistory)
    }
}

extension EditedLayout {
    /// The same edit, with the new version's history folded into a checkpoint when it is due
    /// (see ``EditHistory``).
    /// - Complexity: O(n) for n items when it folds (one binary encoding), else O(1).
    func foldingHistoryIfDue() -> EditedLayout {
        guard let history = layout.editHistory, history.isDueToFold else { return self }
        let folded = layout.copy(digest: layout.digest, editHistory: EditHistory(checkpoint: layout.binaryEncoded(), count: history.count))
        return EditedLayout(layout: folded, previous: previous, positionsShifted: positionsShifted)
    }
}
