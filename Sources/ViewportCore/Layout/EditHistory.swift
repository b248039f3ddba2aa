/// The edits a session made to its layout, in order: the layout version they made remembers them,
/// so that the version can be made again from the stored layout (a session snapshot names its
/// layout by the stored layout's id and these edits).
///
/// A persistent list, newest first: a version shares its predecessor's history, and an edit adds
/// one node (O(1)), however long the history.
public final class EditHistory: Sendable {
    public let edit: StackEdit
    public let previous: EditHistory?
    /// Edits in this history.
    public let count: Int

    init(edit: StackEdit, previous: EditHistory?) {
        self.edit = edit
        self.previous = previous
        self.count = (previous?.count ?? 0) + 1
    }

    /// The edits, oldest first.
    /// - Complexity: O(e) for e edits.
    public var edits: [StackEdit] {
        var out: [StackEdit] = []
        out.reserveCapacity(count)
        var node: EditHistory? = self
        while let current = node {
            out.append(current.edit)
            node = current.previous
        }
        return out.reversed()
    }
}
