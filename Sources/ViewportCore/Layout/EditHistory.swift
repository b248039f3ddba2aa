/// The edits a session made to its layout, in order: the layout version they made remembers them,
/// so that the version can be made again from the stored layout (a session snapshot names its
/// layout by the stored layout's id and these edits).
///
/// A persistent list, newest first: a version shares its predecessor's history, and an edit adds
/// one node (O(1) plus the edit's encoding), however long the history.
///
/// Bounded: once the edits since the last checkpoint take more bytes than the version they made
/// would in its binary form (``Layout/binaryEncoded()``, at least ``foldFloor``), the version
/// starts a new history with a **checkpoint**, its own binary form, and the edits before it are
/// dropped (`Layout.applying(_:maxItems:)`). So a history, and a snapshot that carries it, is
/// never much more than twice the layout it describes, whatever the number of edits (a session
/// inserting and removing the same 20 items had grown its snapshot to 2.1 MB after 2,000
/// PATCHes). Folding costs one encoding of the version, O(n), after Θ(n) bytes of edits: O(1) a
/// byte of edit, amortized.
public final class EditHistory: Sendable {
    /// What a node adds to the history.
    enum Step: Sendable {
        /// One edit in binary (`StackEdit.write`).
        case edit([UInt8])
        /// The version's own binary form: what the stored layout and every edit before made.
        case checkpoint([UInt8])
    }

    /// Histories shorter than this are never folded (a few edits of a small layout).
    static let foldFloor = 512

    let step: Step
    /// The node before (nil for a checkpoint and for the first edit of the stored layout).
    let previous: EditHistory?
    /// Edits since the stored layout, those folded into checkpoints included.
    public let count: Int
    /// Bytes of the edits since the last checkpoint (or since the stored layout).
    let pendingBytes: Int
    /// The version folds once `pendingBytes` passes this: the size of the last checkpoint, or
    /// an estimate of the stored layout's binary form, and at least `foldFloor`.
    let foldAt: Int
    /// Whether the history starts at a checkpoint (else at the stored layout).
    let startsAtCheckpoint: Bool

    /// The history after `edit` of a version whose history is `previous`; `base` is that version
    /// (for the first edit, its size sets when the history folds).
    init(edit: StackEdit, previous: EditHistory?, base: Layout) {
        var w = BinaryWriter(capacity: 64)
        edit.write(&w)
        self.step = .edit(w.bytes)
        self.previous = previous
        self.count = (previous?.count ?? 0) + 1
        self.pendingBytes = (previous?.pendingBytes ?? 0) + w.bytes.count
        self.foldAt = previous?.foldAt ?? max(Self.foldFloor, base.estimatedBinarySize)
        self.startsAtCheckpoint = previous?.startsAtCheckpoint ?? false
    }

    /// A checkpoint: `bytes` is the version's binary form, after `count` edits.
    init(checkpoint bytes: [UInt8], count: Int) {
        self.step = .checkpoint(bytes)
        self.previous = nil
        self.count = count
        self.pendingBytes = 0
        self.foldAt = max(Self.foldFloor, bytes.count)
        self.startsAtCheckpoint = true
    }

    /// Whether the version with this history should fold it into a checkpoint.
    var isDueToFold: Bool { pendingBytes > foldAt }

    /// The last checkpoint (nil when the history starts at the stored layout) and the edits after
    /// it in binary, oldest first.
    /// - Complexity: O(e) for e edits since the checkpoint.
    var sinceCheckpoint: (checkpoint: [UInt8]?, edits: [[UInt8]]) {
        var edits: [[UInt8]] = []
        var node: EditHistory? = self
        while let current = node {
            switch current.step {
            case .edit(let bytes): edits.append(bytes)
            case .checkpoint(let bytes): return (bytes, edits.reversed())
            }
            node = current.previous
        }
        return (nil, edits.reversed())
    }
}
