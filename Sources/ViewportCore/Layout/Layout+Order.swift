/// Walking a layout's items in layout order in O(n) (item by item, a stack would cost O(log n)
/// each): for the digest, identity checks, axis summaries and writing a layout out.
extension Layout {
    /// Where an item's id is.
    enum IDSource {
        /// Entry `k` of the id table.
        case table(Int)
        /// A stack item's uid (the table or the overlay).
        case uid(Int32)
        /// Generated item `k` of the generated section in segment `segment`.
        case generated(segment: Int, k: Int)
    }

    /// One item met by an `OrderCursor`.
    struct OrderedItem {
        var item: Int
        var rect: Rect
        var reuseClass: Int
        var id: IDSource
    }

    /// The id bytes of an item met in order.
    func withIDBytes<R>(of item: OrderedItem, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch item.id {
        case .table(let k): return try ids.withBytes(at: k, body)
        case .uid(let uid): return try withIDBytes(uid: uid, body)
        case .generated(let segment, let k):
            guard case .generated(_, let section) = segments[segment] else { preconditionFailure("a generated segment") }
            return try Self.withGeneratedID(section: section.id, k, body)
        }
    }

    /// Calls `body` with every item, its rect, reuse class and id bytes, in layout order.
    /// - Complexity: O(n).
    func forEachInOrder(_ body: (_ item: Int, _ rect: Rect, _ reuseClass: Int, _ id: UnsafeRawBufferPointer) -> Void) {
        if segments.isEmpty {
            for k in 0..<explicitRects.count {
                ids.withBytes(at: k) { body(k, explicitRects[k], Int(reuseClasses[k]), $0) }
            }
            return
        }
        for segment in segments {
            switch segment {
            case .explicit(let start, let storageStart, let count):
                for k in 0..<count {
                    let j = storageStart + k
                    ids.withBytes(at: j) { body(start + k, explicitRects[j], Int(reuseClasses[j]), $0) }
                }
            case .generated(let start, let section):
                for k in 0..<section.count {
                    Self.withGeneratedID(section: section.id, k) { body(start + k, section.rect(k), Int(section.reuseClass), $0) }
                }
            case .placed(let start, let count, let p):
                let section = placedSections[p]
                for k in 0..<count {
                    ids.withBytes(at: section.storageStart + k) { body(start + k, section.rect(k), Int(section.reuseClasses[k]), $0) }
                }
            case .stack(let start, _, let s):
                let section = stacks[s].section
                let placement = section.placement
                section.tree.forEach { rank, entry, startLength in
                    withIDBytes(uid: entry.uid) { body(start + rank, placement.rect(of: entry, start: startLength), Int(entry.reuseClass), $0) }
                }
            }
        }
    }

    /// Calls `body` with every rect in layout order.
    /// - Complexity: O(n).
    func forEachRectInOrder(_ body: (Rect) -> Void) {
        if segments.isEmpty {
            for r in explicitRects { body(r) }
            return
        }
        var cursor = OrderCursor(self)
        while let next = cursor.next() { body(next.rect) }
    }
}

/// Walks a layout's items in order, one call at a time.
struct OrderCursor {
    private let layout: Layout
    private var segment = 0
    private var local = 0
    private var stack: StackCursor?
    private var placement: StackPlacement?
    private var item = 0

    init(_ layout: Layout) { self.layout = layout }

    /// The next item, nil after the last.
    /// - Complexity: O(1) amortized (O(log s) at an explicit item of a layout with sections).
    mutating func next() -> Layout.OrderedItem? {
        if layout.segments.isEmpty {
            guard item < layout.explicitRects.count else { return nil }
            defer { item += 1 }
            return Layout.OrderedItem(item: item, rect: layout.explicitRects[item], reuseClass: Int(layout.reuseClasses[item]), id: .table(item))
        }
        while segment < layout.segments.count {
            let current = layout.segments[segment]
            if local >= current.count {
                segment += 1
                local = 0
                stack = nil
                continue
            }
            let k = local
            local += 1
            item = current.start + k
            switch current {
            case .explicit(_, let storageStart, _):
                let j = storageStart + k
                return Layout.OrderedItem(item: item, rect: layout.explicitRects[j], reuseClass: Int(layout.reuseClasses[j]), id: .table(j))
            case .generated(_, let section):
                return Layout.OrderedItem(item: item, rect: section.rect(k), reuseClass: Int(section.reuseClass), id: .generated(segment: segment, k: k))
            case .placed(_, _, let p):
                let section = layout.placedSections[p]
                return Layout.OrderedItem(
                    item: item, rect: section.rect(k), reuseClass: Int(section.reuseClasses[k]), id: .table(section.storageStart + k))
            case .stack(_, _, let s):
                if stack == nil {
                    stack = StackCursor(layout.stacks[s].section.tree)
                    placement = layout.stacks[s].section.placement
                }
                guard let (entry, start) = stack?.next(), let placement else {
                    preconditionFailure("a stack has as many entries as its segment says")
                }
                return Layout.OrderedItem(item: item, rect: placement.rect(of: entry, start: start), reuseClass: Int(entry.reuseClass), id: .uid(entry.uid))
            }
        }
        return nil
    }
}
