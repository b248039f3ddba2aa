/// `scrollTo`: the item to scroll to, where it should sit, and the margin to keep.
public struct ScrollTarget: Hashable, Sendable {
    /// Item position in the layout.
    public var item: Int
    public var align: ScrollAlignment
    /// Points kept between the item and the viewport's edge for `start`, `end` and `auto`
    /// (`center` ignores it).
    public var margin: Double

    public init(item: Int, align: ScrollAlignment = .auto, margin: Double = 0) {
        self.item = item
        self.align = align
        self.margin = margin
    }

    /// Checks what does not depend on the layout.
    func validate() throws(SessionError) {
        guard margin.isFinite, margin >= 0 else { throw .invalid(field: "scrollTo.margin", reason: "must be finite and not negative") }
    }
}
