/// One entry of a layout's `sections`: a list, a grid, pages, explicit items, or a stack.
public struct SectionSpec: Sendable {
    public enum Shape: Sendable {
        /// `count` items of one `size`, `spacing` apart along `axis` (default: the stack's axis).
        case list(axis: Axis?, count: Int, size: Size, spacing: Double)
        /// One item per size, `spacing` apart along `axis`. `count`, when given, must equal
        /// `sizes.count`.
        case sizedList(axis: Axis?, sizes: [Size], spacing: Double, count: Int? = nil)
        /// `count` items of `itemSize` in rows of `columns` across the stack's axis.
        case grid(columns: Int, count: Int, itemSize: Size, spacing: Size)
        /// `count` pages of `size` side by side along `axis` (a list without spacing).
        case pages(axis: Axis?, count: Int, size: Size)
        /// Items given one by one; rects are relative to the section's origin.
        case items([Item])
        /// Items with their own ids and sizes (measured or estimated) flowing along the layout's
        /// axis in lanes (docs/api.md "Stacks and edits").
        case stack(StackSpec)
    }

    /// Whether this is a stack section.
    public var isStack: Bool {
        if case .stack = shape { return true }
        return false
    }

    public struct Item: Sendable {
        public var id: String
        public var rect: Rect
        public var reuse: String?
        public var sticky: Bool

        public init(id: String, rect: Rect, reuse: String? = nil, sticky: Bool = false) {
            self.id = id
            self.rect = rect
            self.reuse = reuse
            self.sticky = sticky
        }
    }

    /// Section id; generated items are `<id>-<k>`. Nil: the section's position in `sections`.
    public var id: String?
    /// Reuse identifier of generated items.
    public var reuse: String?
    public var shape: Shape

    public init(id: String? = nil, reuse: String? = nil, shape: Shape) {
        self.id = id
        self.reuse = reuse
        self.shape = shape
    }
}
