/// How one layout's item positions and reuse classes map to another's, for a session moving
/// between them (a layout change, or an edit of its stacks).
struct ItemRemap {
    let old: Layout
    let new: Layout
    /// Old position → new (nil: the item is gone), memoized.
    private let map: (Int) -> Int?
    private var positions: [Int: Int?] = [:]
    /// Whether every position and reuse class maps to itself (an edit of sizes only): remapping
    /// then has nothing to do.
    let isIdentity: Bool
    /// Whether an item present in both keeps its reuse identifier (an edit never changes one).
    let keepsReuse: Bool
    /// The session's reuse identifiers outside the old layout (classes `old.reuseNames.count + k`).
    private let oldExtraNames: [String]
    private var classMap: [Int: Int] = [:]
    /// Reuse identifiers of pooled views that the new layout does not use, by class
    /// `new.reuseNames.count + k`, in order of first use by `reuseClass(ofOld:)`.
    private(set) var extraNames: [String] = []

    init(old: Layout, new: Layout, extraNames: [String], isIdentity: Bool = false, keepsReuse: Bool = false, position: @escaping (Int) -> Int?) {
        self.old = old
        self.new = new
        self.oldExtraNames = extraNames
        self.isIdentity = isIdentity
        self.keepsReuse = keepsReuse
        self.map = position
        if isIdentity { self.extraNames = extraNames }
    }

    /// The new position of old item `item`, nil when it is gone.
    mutating func position(_ item: Int) -> Int? {
        if isIdentity { return item }
        if let known = positions[item] { return known }
        let j = map(item)
        positions[item] = .some(j)
        return j
    }

    /// The new reuse class of old class `c` (nil, never reused, stays nil): by name, a class of
    /// its own past the new layout's when the new layout has no item with that name.
    mutating func poolClass(ofOld c: Int?) -> Int? {
        guard let c else { return nil }
        return reuseClass(ofOld: c)
    }

    /// The new reuse class of old class `c`: by name, a class of its own past the new layout's
    /// when the new layout has no item with that name.
    mutating func reuseClass(ofOld c: Int) -> Int {
        guard !isIdentity else { return c }
        if let mapped = classMap[c] { return mapped }
        let name = c < old.reuseNames.count ? old.reuseNames[c] : oldExtraNames[c - old.reuseNames.count]
        let mapped: Int
        if let known = new.reuseClass(named: name) {
            mapped = known
        } else if let k = extraNames.firstIndex(of: name) {
            mapped = new.reuseNames.count + k
        } else {
            extraNames.append(name)
            mapped = new.reuseNames.count + extraNames.count - 1
        }
        classMap[c] = mapped
        return mapped
    }
}

extension ViewportSession {
    /// Renumbers every piece of session state that names items by position (or pools by reuse
    /// class) from `remap.old`'s numbering to `remap.new`'s, dropping what names a gone item:
    /// `shown`, the pools (their classes and views' last items) and the same-item index, the
    /// pinned header, the selection, prefetch predictions, lazy-load state, exposure counts (kept
    /// by id for gone items, so a returning item continues its count) and loop shifts.
    ///
    /// A layout change (PUT) and an edit (PATCH) both move the session through here. State added
    /// to the session that names items by position must be renumbered here too, or it would name
    /// other items after an insert above them.
    /// - Complexity: O(v + p + h) position lookups for v shown items, p pooled views and h items
    ///   held by the helpers (exposure counts every item that ever entered the screen); nothing
    ///   when `remap.isIdentity`.
    mutating func remapItems(_ remap: inout ItemRemap) {
        guard !remap.isIdentity else { return }
        var newShown = ShownViews()
        for (item, view) in shown {
            if let j = remap.position(item) { newShown[j] = view }
        }
        shown = newShown
        // Pools carry over by reuse identifier; the same-item index follows their last items.
        pools.remap(&remap)
        scroll.pinned = pinned.flatMap { pin in remap.position(pin.item).map { PinnedHeader(item: $0, rect: pin.rect) } }
        if !helpers.isOff { helpers.remap(&remap) }
    }
}
