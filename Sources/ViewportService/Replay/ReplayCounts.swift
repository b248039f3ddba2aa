import ViewportCore

/// What the plans of one replay asked of a client, per reuse class (and for items without a
/// reuse identifier), with views alive counted as created − discarded.
///
/// Classes are the layout's reuse identifiers in order; an edit that inserts items with a new
/// identifier appends it (a layout's edits only ever append names, so a class keeps its index).
struct ReplayCounts: Sendable {
    /// Counts of one reuse identifier.
    struct Class: Sendable, Equatable {
        var created = 0
        var reused = 0
        /// Reuses with `rebind: false` (the view last showed the same item).
        var rebindFree = 0
        var recycled = 0
        var discarded = 0
        /// Views alive (shown or pooled) after a plan, and the most of them at once.
        var alive = 0
        var peakViews = 0
        /// Views showing an item after a plan.
        var shown = 0
        /// The largest pool (alive − shown) after a plan.
        var peakPooled = 0
    }

    var classes: [Class]
    /// The reuse identifier of each class.
    var names: [String]
    /// Items without a reuse identifier: created on entering, discarded on leaving.
    var none = Class()
    /// The most views alive at once over all identifiers (the session's `peakViews`).
    var peakViews = 0
    /// Updates applied (retries are not), edits included.
    var applied = 0
    /// Edits (patch lines) applied.
    var edits = 0

    init(names: [String]) {
        self.names = names
        self.classes = Array(repeating: Class(), count: names.count)
    }

    /// Adds one plan; `layout` is the session's layout after it (leaving items are looked up in
    /// the plan's previous layout when it changed the layout).
    /// - Complexity: O(entries of the plan + reuse classes).
    mutating func account(_ plan: Plan, layout: Layout) {
        if layout.reuseNames.count > names.count {
            names.append(contentsOf: layout.reuseNames[names.count...])
            classes.append(contentsOf: repeatElement(Class(), count: names.count - classes.count))
        }
        let leaving = plan.previousLayout ?? layout
        func update(_ item: Int, in layout: Layout, _ body: (inout Class) -> Void) {
            let c = layout.reuseClass(of: item)
            if c < 0 { body(&none) } else { body(&classes[c]) }
        }
        for e in plan.recycle { update(e.item, in: leaving) { $0.recycled += 1; $0.shown -= 1 } }
        for e in plan.discard { update(e.item, in: leaving) { $0.discarded += 1; $0.shown -= 1; $0.alive -= 1 } }
        for e in plan.reuse {
            update(e.item, in: layout) {
                $0.reused += 1
                $0.shown += 1
                if !e.rebind { $0.rebindFree += 1 }
            }
        }
        for e in plan.create { update(e.item, in: layout) { $0.created += 1; $0.shown += 1; $0.alive += 1 } }
        var total = none.alive
        none.peakViews = max(none.peakViews, none.alive)
        for c in classes.indices {
            classes[c].peakViews = max(classes[c].peakViews, classes[c].alive)
            classes[c].peakPooled = max(classes[c].peakPooled, classes[c].alive - classes[c].shown)
            total += classes[c].alive
        }
        peakViews = max(peakViews, total)
    }
}
