/// Where the content stays when a session moves to another layout.
public enum LayoutAnchor: String, CaseIterable, Hashable, Sendable {
    /// The offset stays.
    case none
    /// The offset shifts so that the first on-screen item present in both layouts stays where it
    /// was on screen (items inserted above do not move the content: RecyclerView's anchor,
    /// FlashList's maintainVisibleContentPosition).
    case visible
}
