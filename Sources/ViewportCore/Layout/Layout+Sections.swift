/// A layout described for writing it back out (`GET /v1/sessions/{id}/layout`): what posting it
/// again needs to give the same rects.
extension Layout {
    /// One section of a layout with stacks.
    public enum SectionDescription: Sendable {
        case stack(id: String, reuse: String?, estimate: Size?, spacing: Double, lanes: Int, laneSize: Double)
        case list(id: String, reuse: String?, axis: Axis, count: Int, size: Size, spacing: Double)
        case sizedList(id: String, reuse: String?, axis: Axis, sizes: [Size], spacing: Double)
        case grid(id: String, reuse: String?, columns: Int, count: Int, itemSize: Size, spacing: Size)
        /// An `items` section (its items: `forEachPlacedItem`).
        case items(id: String?)
    }

    /// How the sections of a layout with stacks are stacked, and the content size it was posted
    /// with (nil when none was given); nil for a layout without stacks.
    public var sectionsGeometry: (axis: Axis, insets: Insets, spacing: Double, contentSize: Size?)? {
        geometry.map { ($0.axis, $0.insets, $0.spacing, $0.givenContentSize) }
    }

    /// The sections of a layout with stacks, in order (empty without stacks).
    public var sectionDescriptions: [SectionDescription] {
        guard hasStacks else { return [] }
        return segments.map { segment in
            switch segment {
            case .stack(_, _, let s):
                let stack = stacks[s]
                let section = stack.section
                return .stack(
                    id: stack.id, reuse: reuseName(ofClass: Int(section.reuseClass)), estimate: section.estimate, spacing: section.spacing,
                    lanes: section.laneCount, laneSize: section.laneSize)
            case .generated(_, let g):
                let reuse = reuseName(ofClass: Int(g.reuseClass))
                switch g.shape {
                case .list(let axis, let size, let spacing): return .list(id: g.id, reuse: reuse, axis: axis, count: g.count, size: size, spacing: spacing)
                case .sizedList(let axis, _, let sizes, _, let spacing):
                    return .sizedList(id: g.id, reuse: reuse, axis: axis, sizes: sizes, spacing: spacing)
                case .grid(_, let columns, let itemSize, let spacing):
                    return .grid(id: g.id, reuse: reuse, columns: columns, count: g.count, itemSize: itemSize, spacing: spacing)
                }
            case .placed(_, _, let p):
                return .items(id: placedSections[p].id)
            case .explicit:
                return .items(id: nil)
            }
        }
    }

    /// Calls `body` with each item of stack section `section` (an index into
    /// `sectionDescriptions`) in order: its id, its size if measured, its reuse identifier when
    /// it differs from the section's (`""` for none), and its lane.
    /// - Complexity: O(n).
    public func forEachStackItem(
        inSection section: Int, _ body: (_ id: UnsafeRawBufferPointer, _ size: Size?, _ reuse: String?, _ lane: Int) -> Void
    ) {
        guard case .stack(_, _, let s) = segments[section] else { return }
        let stack = stacks[s].section
        let vertical = stack.axis == .y
        stack.tree.forEach { _, entry, _ in
            let size = entry.isMeasured
                ? (vertical ? Size(width: entry.cross, height: entry.main) : Size(width: entry.main, height: entry.cross)) : nil
            let reuse = entry.reuseClass == stack.reuseClass ? nil : (reuseName(ofClass: Int(entry.reuseClass)) ?? "")
            withIDBytes(uid: entry.uid) { body($0, size, reuse, Int(entry.lane)) }
        }
    }

    /// Calls `body` with each item of `items` section `section`: id, rect relative to the
    /// section's origin, reuse identifier, sticky. (Every `items` section of a layout with stacks
    /// posted as `sections` is a placed one; explicit items appended to a `LayoutBuilder` before
    /// a stack keep only absolute rects and are not written.)
    /// - Complexity: O(n).
    public func forEachPlacedItem(
        inSection section: Int, _ body: (_ id: UnsafeRawBufferPointer, _ rect: Rect, _ reuse: String?, _ sticky: Bool) -> Void
    ) {
        guard case .placed(_, _, let p) = segments[section] else { return }
        let placed = placedSections[p]
        let sticky = Set(placed.sticky)
        for k in 0..<placed.count {
            ids.withBytes(at: placed.storageStart + k) {
                body($0, placed.rects[k], reuseName(ofClass: Int(placed.reuseClasses[k])), sticky.contains(k))
            }
        }
    }

    /// Calls `body` with every item in layout order: id, rect, reuse identifier, sticky.
    /// - Complexity: O(n).
    public func forEachItemInOrder(_ body: (_ id: UnsafeRawBufferPointer, _ rect: Rect, _ reuse: String?, _ sticky: Bool) -> Void) {
        let sticky = Set(stickyItems)
        forEachInOrder { item, rect, c, id in body(id, rect, reuseName(ofClass: c), sticky.contains(item)) }
    }
}
