/// Edits of a layout's stacks (PATCH): a new `Layout` that shares everything the edit did not
/// change with this one.
///
/// The edit runs on copies of the stacks (values sharing their trees: each change copies the
/// O(log n) nodes on its path, once per batch) and of the id overlay; nothing of this layout
/// changes, and when an edit fails the copies are dropped (all or nothing). The new layout takes
/// the id table, the R-tree, explicit items and placed sections' rects by reference, and its
/// segments are rebuilt: their starts follow the stacks' counts, and the sections after a stack
/// whose far edge moved are replayed as `SectionStack` lays them out (origin = previous far edge
/// plus spacing, far edge = origin plus the section's own extent), so an edited layout and the
/// same sections posted again agree to the bit.
///
/// - Complexity: O(e log n) for e edited items (each id: a hash lookup and an O(log n) rank; each
///   inserted id O(log₃₂ m) in the overlay), plus O(s + lanes · log n) per stack for s sections
///   (segments, content size), plus O(k log k) for k sticky items when some of them move.
extension Layout {
    /// Applies `edit` (resizes, then inserts in order, then removes) and answers the new layout.
    /// `maxItems` bounds the layout's item count after inserts.
    /// - Throws: `SessionError.invalid` naming the field (`resize[0].id`, `insert[1].items[2].size`,
    ///   `remove[3]`) for an id that is unknown, not a stack's item, or new but already an item;
    ///   a bad size; an unknown stack section. `SessionError.tooLarge` past `maxItems`.
    public func applying(_ edit: StackEdit, maxItems: Int = .max) throws(SessionError) -> EditedLayout {
        guard hasStacks else {
            throw .invalid(field: "layout", reason: "the session's layout has no stack sections to edit (only stacks' items can be resized, inserted or removed)")
        }
        var draft = EditDraft(base: self, history: EditHistory(edit: edit, previous: editHistory, base: self))
        for (i, resize) in edit.resize.enumerated() {
            let field = "resize[\(i)]"
            let (s, _, rank) = try draft.stackItem(resize.id, field: field + ".id")
            do {
                try draft.stacks[s].section.resize(at: rank, to: resize.size)
            } catch {
                throw .invalid(field: field + ".size", reason: "\(error.reason) (item \"\(resize.id)\")")
            }
            draft.touched[s] = true
        }
        for (i, insert) in edit.insert.enumerated() { try draft.insert(insert, field: "insert[\(i)]", maxItems: maxItems) }
        for (i, id) in edit.remove.enumerated() {
            let (s, uid, rank) = try draft.stackItem(id, field: "remove[\(i)]")
            draft.stacks[s].section.remove(at: rank)
            if !draft.stacks[s].isBuilt(uid) { draft.overlay.remove(uid: uid) }
            draft.touched[s] = true
            draft.shifted = true
            draft.count -= 1
        }
        return draft.finish().foldingHistoryIfDue()
    }
}

/// A layout after an edit, and how its positions relate to the previous version's.
public struct EditedLayout: Sendable {
    public let layout: Layout
    /// The version edited.
    public let previous: Layout
    /// Whether an insert or a remove shifted positions (after resizes alone every item keeps its
    /// position).
    public let positionsShifted: Bool

    /// Whether the content size changed.
    public var contentSizeChanged: Bool { layout.contentSize != previous.contentSize }

    /// The new position of the item at `item` in the previous version; nil for a removed item.
    /// - Complexity: O(1) without inserts or removes; otherwise O(log s), and O(log n) for an
    ///   item of a stack (its uid's rank in the new version).
    public func newPosition(ofOld item: Int) -> Int? {
        guard positionsShifted else { return item }
        let j = previous.segmentIndex(of: item)
        let oldSegment = previous.segments[j]
        let newStart = layout.segments[j].start
        if case .stack(let start, _, let s) = oldSegment {
            let uid = previous.stacks[s].section.entry(at: item - start).uid
            return layout.stacks[s].section.rank(ofUID: uid).map { newStart + $0 }
        }
        return newStart + item - oldSegment.start
    }
}

/// The working copy of an edit: stacks, overlay and reuse names, changed op by op.
struct EditDraft {
    let base: Layout
    var stacks: [LayoutStack]
    var overlay: IDOverlay
    var reuseNames: [String]
    var count: Int
    /// Stacks changed by the edit.
    var touched: [Bool]
    var shifted = false
    /// The edits that make the draft's version (the base's, and this one).
    let history: EditHistory

    init(base: Layout, history: EditHistory) {
        self.base = base
        self.history = history
        stacks = base.stacks
        overlay = base.overlay
        reuseNames = base.reuseNames
        count = base.count
        touched = Array(repeating: false, count: base.stacks.count)
    }

    /// What an id names in the draft.
    enum Found {
        case stackItem(stack: Int, uid: Int32, rank: Int)
        /// An item, but not of a stack: why.
        case other(String)
        case none
    }

    /// - Complexity: O(1) expected for the hash lookups, O(log n) for a stack item's rank.
    func find(_ id: UnsafeRawBufferPointer) -> Found {
        if let (uid, s) = overlay.find(id), let rank = stacks[s].section.rank(ofUID: uid) { return .stackItem(stack: s, uid: uid, rank: rank) }
        if let k = base.ids.index(ofBytes: id) {
            guard k >= base.explicitRects.count, !base.storageRuns.isEmpty else { return .other("an item given by its rect, not an item of a stack") }
            var lo = 0
            var hi = base.storageRuns.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if base.storageRuns[mid].storageStart <= k { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0, case .stack(_, _, let s) = base.segments[base.storageRuns[lo - 1].segment] {
                // A stack item this version removed is no item (its id may come back inserted).
                guard let rank = stacks[s].section.rank(ofUID: Int32(k)) else { return .none }
                return .stackItem(stack: s, uid: Int32(k), rank: rank)
            }
            return .other("an item of an items section, not of a stack")
        }
        if let item = base.generatedItem(withIDBytes: id), case .generated(let section, _) = base.locate(item) {
            return .other("an item of the generated section \"\(section.id)\", not of a stack")
        }
        return .none
    }

    /// The stack, uid and rank of the stack item `id`, or a 422 naming `field`.
    func stackItem(_ id: String, field: String) throws(SessionError) -> (stack: Int, uid: Int32, rank: Int) {
        var id = id
        let found = id.withUTF8 { find(UnsafeRawBufferPointer($0)) }
        switch found {
        case .stackItem(let s, let uid, let rank): return (s, uid, rank)
        case .other(let what): throw .invalid(field: field, reason: "\"\(id)\" is \(what)")
        case .none: throw .invalid(field: field, reason: "\"\(id)\" is not an item of the layout")
        }
    }

    /// The reuse class of a name, adding it when new ("" is none).
    mutating func reuseClass(named name: String) -> Int32 {
        guard !name.isEmpty else { return -1 }
        if let c = reuseNames.firstIndex(of: name) { return Int32(c) }
        reuseNames.append(name)
        return Int32(reuseNames.count - 1)
    }

    mutating func insert(_ insert: StackEdit.Insert, field: String, maxItems: Int) throws(SessionError) {
        let s: Int
        let position: StackSection.Position
        switch insert.place {
        case .before(let id):
            let found = try stackItem(id, field: field + ".before")
            (s, position) = (found.stack, .before(found.rank))
        case .after(let id):
            let found = try stackItem(id, field: field + ".after")
            (s, position) = (found.stack, .after(found.rank))
        case .start(let name), .end(let name):
            guard let found = base.stacksByID[name] else {
                throw .invalid(field: field + ".section", reason: "\"\(name)\" is not a stack section of the layout")
            }
            s = found
            if case .start = insert.place { position = .start } else { position = .end }
        }
        let n = insert.items.count
        guard n > 0 else { return }
        guard n <= maxItems - count else {
            throw .tooLarge(field: field + ".items", reason: "the layout would have \(count + n) items, more than \(maxItems) (layouts.maxItems)")
        }
        var items: [StackSection.Item] = []
        items.reserveCapacity(n)
        var ids: [ContiguousArray<UInt8>] = []
        ids.reserveCapacity(n)
        var seen: [String: Int] = [:]
        for (k, item) in insert.items.enumerated() {
            let itemField = "\(field).items[\(k)]"
            let bytes = ContiguousArray(item.id.utf8)
            guard !bytes.isEmpty else { throw .invalid(field: itemField + ".id", reason: "must not be empty") }
            guard bytes.count <= Layout.maxIDBytes else {
                throw .invalid(field: itemField + ".id", reason: "\(bytes.count) bytes of UTF-8, at most \(Layout.maxIDBytes) allowed")
            }
            if let earlier = seen[item.id] {
                throw .invalid(field: itemField + ".id", reason: "\"\(item.id)\" is also \(field).items[\(earlier)]")
            }
            seen[item.id] = k
            if case .none = bytes.withUnsafeBytes({ find($0) }) {} else {
                throw .invalid(field: itemField + ".id", reason: "\"\(item.id)\" is already an item of the layout")
            }
            let uid = overlay.issue(firstUID: base.ids.count)
            guard uid <= Int(Int32.max) else {
                throw .tooLarge(field: itemField, reason: "this session has inserted more items than a layout can number (2³¹); open a new session")
            }
            let stackItem = StackSection.Item(uid: Int32(uid), size: item.size, reuseClass: item.reuse.map { reuseClass(named: $0) })
            do {
                try stacks[s].section.validate(stackItem, field: itemField)
            } catch {
                throw .invalid(field: error.field, reason: "\(error.reason) (item \"\(item.id)\")")
            }
            items.append(stackItem)
            ids.append(bytes)
        }
        do {
            try stacks[s].section.insert(items, at: position)
        } catch {
            throw .invalid(field: "\(field).\(error.field)", reason: error.reason)
        }
        for (k, item) in items.enumerated() { overlay.add(id: ids[k], uid: item.uid, stack: s) }
        count += n
        shifted = true
        touched[s] = true
    }

    /// The new layout: segments with new starts, sections after a stack whose far edge moved at
    /// their new origins, the content size and sticky items again.
    func finish() -> EditedLayout {
        guard let geometry = base.geometry else { preconditionFailure("a layout with stacks has its section geometry") }
        let axis = geometry.axis
        var segments = base.segments
        var placed = base.placedSections
        var stacks = self.stacks
        var start = 0
        // The far edge of the previous section once sections move (nil before).
        var cursor: Double?
        var movedFixed = false
        for (j, old) in base.segments.enumerated() {
            var segment = old.starting(at: start)
            if case .stack(let st, _, let s) = segment { segment = .stack(start: st, count: stacks[s].section.count, stack: s) }
            if let far = cursor {
                func origin(_ old: Point) -> Point { axis.setting(far + geometry.spacing, in: old) }
                switch segment {
                case .generated(let st, let section):
                    let moved = section.moved(to: origin(section.origin))
                    segment = .generated(start: st, section: moved)
                    cursor = axis.component(of: moved.farCorner)
                    movedFixed = true
                case .placed(_, _, let p):
                    placed[p].origin = origin(placed[p].origin)
                    cursor = axis.component(of: placed[p].farCorner)
                    movedFixed = true
                case .stack(_, _, let s):
                    stacks[s].section.origin = origin(stacks[s].section.origin)
                    cursor = stacks[s].far
                case .explicit:
                    // Explicit runs come only before the first stack (LayoutBuilder refuses others).
                    break
                }
            } else if case .stack(_, _, let s) = segment, touched[s], stacks[s].far != base.stacks[s].far {
                cursor = stacks[s].far
            }
            segments[j] = segment
            start += segment.count
        }

        // The default content size, as LayoutBuilder computes it.
        let extent = Layout.itemsExtent(explicitRects: base.explicitRects, segments: segments, stacks: stacks, placed: placed)
        let defaultSize = Size(width: extent.x, height: extent.y)
        let size = geometry.givenContentSize ?? Size(width: extent.x + geometry.insets.right, height: extent.y + geometry.insets.bottom)

        var sticky = base.stickyItems
        if !sticky.isEmpty && (shifted || movedFixed) {
            var explicit: [(item: Int, rect: Rect)] = []
            for item in base.stickyItems {
                if case .explicit(let k) = base.locate(item) { explicit.append((item, base.explicitRects[k])) }
            }
            sticky = Layout.stickyItems(explicit: explicit, segments: segments, placed: placed, axis: base.axis)
        }
        let layout = Layout(
            ids: base.ids, rects: base.explicitRects, reuseClasses: base.reuseClasses, segments: segments, stacks: stacks,
            placedSections: placed, stickyItems: sticky, reuseNames: reuseNames, contentSize: size,
            hasExplicitContentSize: size != defaultSize, digest: base.digest, index: base.index, geometry: geometry, overlay: overlay,
            fixedEdgesCache: movedFixed ? nil : base.fixedEdgesCache, axis: base.axis,
            editHistory: history)
        return EditedLayout(layout: layout, previous: base, positionsShifted: shifted)
    }
}
