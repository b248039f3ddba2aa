/// Where `scrollTo` puts the item in the viewport, on each axis.
public enum ScrollAlignment: String, CaseIterable, Hashable, Sendable {
    /// The item's leading edge at the viewport's leading edge.
    case start
    /// The item's center at the viewport's center.
    case center
    /// The item's trailing edge at the viewport's trailing edge.
    case end
    /// The least movement that shows the whole item (none if it is shown already), or `start`
    /// when the item is larger than the viewport (react-window, TanStack Virtual).
    case auto
}
