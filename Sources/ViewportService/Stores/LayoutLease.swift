import ViewportCore

/// One more session counted on a stored layout, for as long as the lease lives: dropping it
/// releases the layout in its repository; ``transfer()`` hands the count to the session that
/// now uses the layout (its store releases it when the session ends; a layout change, when the
/// session leaves it).
///
/// Not copyable, so the compiler pairs every retain with exactly one release or transfer, on
/// every path a request can take (a failed session, a full store, a retried change).
struct LayoutLease: ~Copyable {
    let layout: Layout
    /// Nil once transferred. (`discard self` would say it better, but the compiler accepts it
    /// only in types whose stored properties are all trivial.)
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

    /// The session holds the layout now: its store releases it.
    consuming func transfer() {
        layouts = nil
    }

    deinit {
        layouts?.release(id: layout.digest)
    }
}
