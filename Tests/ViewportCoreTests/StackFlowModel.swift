import ViewportCore

/// A layout of sections with stacks, written from docs/api.md's text ("Stacks and edits", and
/// docs/guides/generated-layouts.md) without the core's code: sections one after another along the axis, inside
/// the insets, `spacing` apart; a stack's items each where the previous item of its lane ends,
/// lanes across; edits with the lane rules. Sizes in the tests are whole or quarter points, so
/// every sum here is exact.
struct FlowModel {
    struct StackItem: Equatable {
        var id: String
        var size: Size?
        var reuse: String?
        var lane: Int
    }

    struct Stack {
        var id: String
        var reuse: String?
        var items: [StackItem]
        var estimate: Size?
        var spacing: Double
        var lanes: Int
        var laneSize: Double
    }

    struct Placed {
        var id: String
        var rect: Rect
        var reuse: String?
        var sticky = false
    }

    enum Section {
        case stack(Stack)
        case list(id: String, reuse: String?, count: Int, size: Size, spacing: Double)
        case items([Placed])
    }

    struct Item: Equatable {
        var id: String
        var rect: Rect
        var reuse: String?
        var sticky = false
    }

    var axis: Axis = .y
    var insets: Insets = .zero
    var spacing: Double = 0
    var sections: [Section]

    // MARK: Positions

    /// `(main, cross)` of a point along `axis`.
    func point(main: Double, cross: Double) -> Point { axis == .y ? Point(x: cross, y: main) : Point(x: main, y: cross) }

    func rect(main: Double, cross: Double, size: Size) -> Rect {
        let p = point(main: main, cross: cross)
        return Rect(x: p.x, y: p.y, width: size.width, height: size.height)
    }

    /// Every item in layout order, and each section's origin.
    func layout() -> (items: [Item], origins: [Point]) {
        var items: [Item] = []
        var origins: [Point] = []
        var cursor = axis == .y ? insets.top : insets.left
        let crossStart = axis == .y ? insets.left : insets.top
        for (index, section) in sections.enumerated() {
            if index > 0 { cursor += spacing }
            let origin = point(main: cursor, cross: crossStart)
            origins.append(origin)
            switch section {
            case .stack(let stack):
                // Each lane's end (nil while empty).
                var ends = [Double?](repeating: nil, count: stack.lanes)
                for item in stack.items {
                    let size = item.size ?? stack.estimate ?? .zero
                    let start = ends[item.lane].map { $0 + stack.spacing } ?? 0
                    items.append(Item(
                        id: item.id, rect: rect(main: cursor + start, cross: crossStart + Double(item.lane) * (stack.laneSize + stack.spacing), size: size),
                        reuse: item.reuse ?? stack.reuse))
                    ends[item.lane] = start + axis.component(of: size)
                }
                cursor += ends.compactMap { $0 }.max() ?? 0
            case .list(let id, let reuse, let count, let size, let gap):
                for k in 0..<count {
                    items.append(Item(id: "\(id)-\(k)", rect: rect(main: cursor + Double(k) * (axis.component(of: size) + gap), cross: crossStart, size: size), reuse: reuse))
                }
                if count > 0 { cursor += Double(count - 1) * (axis.component(of: size) + gap) + axis.component(of: size) }
            case .items(let placed):
                var far = 0.0
                for p in placed {
                    let r = Rect(x: origin.x + p.rect.x, y: origin.y + p.rect.y, width: p.rect.width, height: p.rect.height)
                    items.append(Item(id: p.id, rect: r, reuse: p.reuse, sticky: p.sticky))
                    far = max(far, axis == .y ? p.rect.y + p.rect.height : p.rect.x + p.rect.width)
                }
                cursor += far
            }
        }
        return (items, origins)
    }

    var items: [Item] { layout().items }

    /// `[max(x + w), max(y + h)]` over the items, plus the trailing insets (docs/api.md: an empty
    /// section has an origin but no items, and adds nothing).
    var contentSize: Size {
        var maxX = 0.0
        var maxY = 0.0
        for item in items {
            maxX = max(maxX, item.rect.x + item.rect.width)
            maxY = max(maxY, item.rect.y + item.rect.height)
        }
        return Size(width: maxX + insets.right, height: maxY + insets.bottom)
    }

    // MARK: Lanes

    /// Each lane's end in a stack's items (nil while empty).
    static func laneEnds(_ stack: Stack, items: [StackItem], axis: Axis) -> [Double?] {
        var ends = [Double?](repeating: nil, count: stack.lanes)
        for item in items {
            let size = axis.component(of: item.size ?? stack.estimate ?? .zero)
            ends[item.lane] = (ends[item.lane].map { $0 + stack.spacing } ?? 0) + size
        }
        return ends
    }

    /// The lane whose end is shortest (an empty lane ends at 0), the lowest on a tie.
    static func shortestLane(_ ends: [Double?]) -> Int {
        var best = 0
        for j in ends.indices where (ends[j] ?? 0) < (ends[best] ?? 0) { best = j }
        return best
    }

    /// A stack whose items without a lane each join the shortest lane as they are added.
    static func makeStack(id: String, reuse: String?, items: [(id: String, size: Size?, reuse: String?)], estimate: Size?, spacing: Double, lanes: Int, laneSize: Double, axis: Axis) -> Stack {
        var stack = Stack(id: id, reuse: reuse, items: [], estimate: estimate, spacing: spacing, lanes: lanes, laneSize: laneSize)
        for item in items {
            let lane = shortestLane(laneEnds(stack, items: stack.items, axis: axis))
            stack.items.append(StackItem(id: item.id, size: item.size, reuse: item.reuse, lane: lane))
        }
        return stack
    }

    // MARK: Edits (docs/api.md "Stacks and edits")

    enum ModelError: Error { case invalid(String) }

    /// The stack and index of a stack item.
    func find(_ id: String) -> (section: Int, index: Int)? {
        for (s, section) in sections.enumerated() {
            if case .stack(let stack) = section, let k = stack.items.firstIndex(where: { $0.id == id }) { return (s, k) }
        }
        return nil
    }

    func has(_ id: String) -> Bool { items.contains { $0.id == id } }

    mutating func withStack(_ s: Int, _ body: (inout Stack) -> Void) {
        guard case .stack(var stack) = sections[s] else { return }
        body(&stack)
        sections[s] = .stack(stack)
    }

    /// Applies `edit` as docs/api.md says (resizes, inserts in order, removes), or throws and changes nothing.
    mutating func apply(_ edit: StackEdit) throws {
        var copy = self
        for r in edit.resize {
            guard let (s, k) = copy.find(r.id) else { throw ModelError.invalid(r.id) }
            copy.withStack(s) { $0.items[k].size = r.size }
        }
        for insert in edit.insert {
            let s: Int
            var index: Int
            var lane: Int?
            switch insert.place {
            case .before(let id), .after(let id):
                guard let (found, k) = copy.find(id) else { throw ModelError.invalid(id) }
                s = found
                guard case .stack(let stack) = copy.sections[s] else { throw ModelError.invalid(id) }
                lane = stack.items[k].lane
                if case .before = insert.place { index = k } else { index = k + 1 }
            case .start(let name), .end(let name):
                guard let found = copy.sections.firstIndex(where: { if case .stack(let st) = $0 { return st.id == name } else { return false } }),
                    case .stack(let stack) = copy.sections[found]
                else { throw ModelError.invalid(name) }
                s = found
                if case .start = insert.place {
                    index = 0
                    lane = stack.items.first?.lane ?? 0
                } else {
                    index = stack.items.count
                }
            }
            for item in insert.items where copy.has(item.id) { throw ModelError.invalid(item.id) }
            guard Set(insert.items.map(\.id)).count == insert.items.count else { throw ModelError.invalid("duplicate") }
            let axis = copy.axis
            copy.withStack(s) { stack in
                for item in insert.items {
                    let chosen = lane ?? Self.shortestLane(Self.laneEnds(stack, items: stack.items, axis: axis))
                    stack.items.insert(StackItem(id: item.id, size: item.size, reuse: item.reuse, lane: chosen), at: index)
                    index += 1
                }
            }
        }
        for id in edit.remove {
            guard let (s, k) = copy.find(id) else { throw ModelError.invalid(id) }
            copy.withStack(s) { _ = $0.items.remove(at: k) }
        }
        self = copy
    }

    // MARK: As a layout

    /// The sections as `SectionSpec`s; `lanes: true` names each stack item's lane.
    func specs(lanes: Bool = false) -> [SectionSpec] {
        sections.map { section in
            switch section {
            case .stack(let s):
                let items = s.items.map { StackSpec.Item(id: $0.id, size: $0.size, reuse: $0.reuse, lane: lanes ? $0.lane : nil) }
                return SectionSpec(id: s.id, reuse: s.reuse, shape: .stack(StackSpec(items: items, estimate: s.estimate, spacing: s.spacing, lanes: s.lanes, laneSize: s.laneSize)))
            case .list(let id, let reuse, let count, let size, let gap):
                return SectionSpec(id: id, reuse: reuse, shape: .list(axis: nil, count: count, size: size, spacing: gap))
            case .items(let placed):
                return SectionSpec(shape: .items(placed.map { SectionSpec.Item(id: $0.id, rect: $0.rect, reuse: $0.reuse, sticky: $0.sticky) }))
            }
        }
    }

    func build(lanes: Bool = false) throws -> Layout {
        var builder = LayoutBuilder()
        var stack = SectionStack(axis: axis, insets: insets, spacing: spacing, withStacks: true)
        for spec in specs(lanes: lanes) { try stack.append(spec, to: &builder) }
        try builder.setTrailingPadding(stack.trailingPadding)
        return try builder.build()
    }
}

/// A layout's items as the model writes them.
func modelItems(of layout: Layout) -> [FlowModel.Item] {
    let sticky = Set(layout.stickyItems)
    return (0..<layout.count).map { FlowModel.Item(id: layout.id(at: $0), rect: layout.rects[$0], reuse: layout.reuseName(of: $0), sticky: sticky.contains($0)) }
}

extension FlowModel {
    /// The model's items as the specs the simulated clients know layouts by.
    var specs: [ItemSpec] { normalized(items).map { ItemSpec(id: $0.id, rect: $0.rect, reuse: $0.reuse) } }
}
