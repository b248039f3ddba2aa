/// Lays `sections` one after another along a main axis, inside content insets, `spacing` apart,
/// into a `LayoutBuilder`.
///
/// A section starts where the previous one ends (its far edge along the axis, plus `spacing`); the
/// first starts at the leading inset, and every section at the cross axis' leading inset. The
/// default content size is the items' extent grown by the trailing insets.
///
/// A layout with stacks (`withStacks`) keeps every section movable, because a PATCH that changes a
/// stack moves the sections after it: `items` sections keep their rects relative to their origin
/// (`PlacedSection`), and every section's far edge is its origin plus its own extent (see
/// `GeneratedSection.init(movable:)`), so an edited layout and the same layout posted again place
/// every section at the same coordinates.
public struct SectionStack: Sendable {
    public let axis: Axis
    public let insets: Insets
    public let spacing: Double
    /// Whether the layout has stacks (and every section is movable).
    public let withStacks: Bool
    /// Where the next section starts along the axis.
    private var cursor: Double
    private var sections = 0

    public init(axis: Axis = .y, insets: Insets = .zero, spacing: Double = 0, withStacks: Bool = false) {
        self.axis = axis
        self.insets = insets
        self.spacing = spacing
        self.withStacks = withStacks
        self.cursor = axis == .y ? insets.top : insets.left
    }

    private var origin: Point {
        axis == .y ? Point(x: insets.left, y: cursor) : Point(x: cursor, y: insets.top)
    }

    /// Adds a section's items to `builder`.
    public mutating func append(_ spec: SectionSpec, to builder: inout LayoutBuilder) throws(LayoutError) {
        // The stack's axis is the layout's: sticky items pin along it.
        builder.setAxis(axis)
        let index = sections
        sections += 1
        let id = spec.id ?? String(index)
        let field = "sections[\(index)]"
        if index > 0 { cursor += spacing }
        let origin = self.origin
        if withStacks && index == 0 { builder.setStackGeometry(axis: axis, insets: insets, spacing: spacing) }
        func check(_ size: Size, _ name: String) throws(LayoutError) {
            guard size.isValidExtent else { throw .invalidSection(field: "\(field).\(name)", reason: "must be finite and not negative") }
        }
        func check(_ value: Double, _ name: String) throws(LayoutError) {
            guard value.isFinite, value >= 0 else { throw .invalidSection(field: "\(field).\(name)", reason: "must be finite and not negative") }
        }
        func check(count: Int) throws(LayoutError) {
            guard count >= 0 else { throw .invalidSection(field: "\(field).count", reason: "must not be negative") }
        }
        let shape: GeneratedSection.Shape
        let count: Int
        switch spec.shape {
        case .list(let listAxis, let n, let size, let gap):
            try check(count: n)
            try check(size, "size")
            try check(gap, "spacing")
            (shape, count) = (.list(axis: listAxis ?? axis, size: size, spacing: gap), n)
        case .pages(let pageAxis, let n, let size):
            try check(count: n)
            try check(size, "size")
            (shape, count) = (.list(axis: pageAxis ?? axis, size: size, spacing: 0), n)
        case .sizedList(let listAxis, let sizes, let gap, let declared):
            if let declared, declared != sizes.count {
                throw .invalidSection(field: "\(field).count", reason: "\(declared) but \(sizes.count) sizes")
            }
            try check(gap, "spacing")
            let along = listAxis ?? axis
            var starts: [Double] = []
            starts.reserveCapacity(sizes.count)
            var position = 0.0
            var longest = 0.0
            for (k, size) in sizes.enumerated() {
                try check(size, "sizes[\(k)]")
                starts.append(position)
                position += along.component(of: size) + gap
                longest = max(longest, along.component(of: size))
            }
            (shape, count) = (.sizedList(axis: along, starts: starts, sizes: sizes, longest: longest, spacing: gap), sizes.count)
        case .grid(let columns, let n, let itemSize, let gap):
            try check(count: n)
            guard columns >= 1 else { throw .invalidSection(field: "\(field).columns", reason: "must be at least 1") }
            try check(itemSize, "itemSize")
            try check(gap, "spacing")
            (shape, count) = (.grid(rowsAlong: axis, columns: columns, itemSize: itemSize, spacing: gap), n)
        case .stack(let stack):
            guard withStacks else {
                throw .invalidSection(field: field, reason: "a stack needs a SectionStack made withStacks")
            }
            cursor = try builder.appendStack(id: id, spec: stack, origin: origin, axis: axis, reuse: spec.reuse, field: field)
            return
        case .items(let items) where withStacks:
            let far = try builder.appendPlacedSection(id: spec.id, items: items, origin: origin)
            cursor = axis == .y ? far.y : far.x
            return
        case .items(let items):
            var far = axis == .y ? origin.y : origin.x
            for item in items {
                let r = item.rect
                let placed = Rect(x: origin.x + r.x, y: origin.y + r.y, width: r.width, height: r.height)
                try builder.append(id: item.id, rect: placed, reuse: item.reuse, sticky: item.sticky)
                far = max(far, axis == .y ? placed.y + placed.height : placed.x + placed.width)
            }
            cursor = far
            return
        }
        let far = try builder.appendSection(id: id, count: count, shape: shape, origin: origin, reuse: spec.reuse, movable: withStacks)
        cursor = axis == .y ? far.y : far.x
    }

    /// What the stack adds to the items' extent for the default content size: the trailing
    /// insets (right and bottom).
    public var trailingPadding: Size { Size(width: insets.right, height: insets.bottom) }
}
