/// `scrollTo`: the item to scroll to and where it should sit.
public struct ScrollTarget: Hashable, Sendable {
    /// Item position in the layout.
    public var item: Int
    public var align: ScrollAlignment

    public init(item: Int, align: ScrollAlignment = .auto) {
        self.item = item
        self.align = align
    }
}
