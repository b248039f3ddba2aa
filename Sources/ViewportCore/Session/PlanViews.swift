/// A plan's four view lists in one immutable allocation (see `Plan.views`): the counts in the
/// header, then `recycle`, `discard`, `reuse` and `create` one after the other. A `Plan` holds one
/// only when some list is not empty.
///
/// One allocation instead of a box and an array per list: a jump's plan had three or four
/// (recycle, reuse, sometimes create, and the box), each a malloc, a free and a uniqueness check
/// per append (callgrind, `viewport-bench 100000 jumps 1`: allocation and release ~16 % of a jump).
/// Every entry is stored as a `ReuseEntry`; `rebind` means something in `reuse` only.
///
/// Immutable once `make` returns, so a `Plan` may cross threads with it (`ManagedBuffer` is not
/// `Sendable`: `Plan.views` says so instead).
final class PlanViews: ManagedBuffer<PlanViews.Counts, ReuseEntry> {
    /// How many entries each list has, in storage order.
    struct Counts {
        var recycle = 0
        var discard = 0
        var reuse = 0
        var create = 0

        var total: Int { recycle + discard + reuse + create }
    }

    /// A box of `counts.total` entries that `fill` initializes, all of them, in storage order.
    static func make(counts: Counts, fill: (UnsafeMutablePointer<ReuseEntry>) -> Void) -> PlanViews {
        let buffer = create(minimumCapacity: counts.total) { _ in counts }
        let views = unsafeDowncast(buffer, to: PlanViews.self)
        views.withUnsafeMutablePointerToElements { fill($0) }
        return views
    }

    /// A box of the four lists given as arrays.
    static func make(recycle: [PlanEntry], discard: [PlanEntry], reuse: [ReuseEntry], create: [PlanEntry]) -> PlanViews {
        let counts = Counts(recycle: recycle.count, discard: discard.count, reuse: reuse.count, create: create.count)
        return make(counts: counts) { out in
            var next = out
            func put(_ entry: ReuseEntry) {
                next.initialize(to: entry)
                next += 1
            }
            for e in recycle { put(ReuseEntry(item: e.item, view: e.view, rebind: true)) }
            for e in discard { put(ReuseEntry(item: e.item, view: e.view, rebind: true)) }
            for e in reuse { put(e) }
            for e in create { put(ReuseEntry(item: e.item, view: e.view, rebind: true)) }
        }
    }

    deinit {
        // The entries are trivial; deinitializing them is a formality the compiler removes.
        _ = withUnsafeMutablePointers { counts, entries in entries.deinitialize(count: counts.pointee.total) }
    }

    /// The list sizes (read through the header's pointer: `header` itself is a class property
    /// with a dynamic exclusivity check, four runtime calls a read).
    var counts: Counts { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The four lists as buffers into this box: valid while the box is alive.
    var lists: PlanViewLists {
        withUnsafeMutablePointers { header, entries in
            let c = header.pointee
            let base = UnsafePointer(entries)
            return PlanViewLists(
                recycle: UnsafeBufferPointer(start: base, count: c.recycle),
                discard: UnsafeBufferPointer(start: base + c.recycle, count: c.discard),
                reuse: UnsafeBufferPointer(start: base + c.recycle + c.discard, count: c.reuse),
                create: UnsafeBufferPointer(start: base + c.recycle + c.discard + c.reuse, count: c.create))
        }
    }
}
