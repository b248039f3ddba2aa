import ViewportCore

/// One more session counted on a stored layout, for as long as the lease lives: dropping it (or
/// ``end()``) releases the layout in its repository. A session's state holds the lease of its
/// layout (``SessionHandle/State/layoutLease``): it is dropped when the session ends here, moves
/// to another instance, or moves to another layout. ``transfer()`` gives the count up without a
/// release.
///
/// Not copyable, so the compiler pairs every retain with exactly one release, on every path a
/// request can take (a failed session, a full store, a retried change).
struct LayoutLease: ~Copyable, Sendable {
    let layout: Layout
    /// Nil once transferred or ended. (`discard self` would say it better, but the compiler
    /// accepts it only in types whose stored properties are all trivial.)
    private var layouts: (any LayoutRepository)?

    /// The stored layout with this id, counted as used; nil when there is none.
    init?(retaining id: String, in layouts: any LayoutRepository) throws(Problem) {
        guard let layout = try layouts.retain(id: id) else { return nil }
        self.layout = layout
        self.layouts = layouts
    }

    /// `layout` stored (or the identical one found), counted as used.
    init(storing layout: Layout, in layouts: any LayoutRepository) throws(Problem) {
        self.layout = try layouts.store(layout, retain: true).layout
        self.layouts = layouts
    }

    /// The count is no longer this lease's to release.
    consuming func transfer() {
        layouts = nil
    }

    /// Releases the layout now (the session ended here, or moved to another instance); the
    /// lease holds nothing from then on.
    mutating func end() {
        layouts?.release(id: layout.digest)
        layouts = nil
    }

    /// Whether the lease still counts its layout.
    var isHeld: Bool { layouts != nil }

    deinit {
        layouts?.release(id: layout.digest)
    }
}
