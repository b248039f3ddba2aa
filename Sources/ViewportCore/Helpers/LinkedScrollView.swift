/// A follower scroll view of a session (`links`): it scrolls at the same progress through its own
/// scrollable range (parallax). Its insets are zero.
public struct LinkedScrollView: Hashable, Sendable {
    public var viewport: Size
    public var contentSize: Size

    public init(viewport: Size, contentSize: Size) {
        self.viewport = viewport
        self.contentSize = contentSize
    }

    /// The follower's offset when the leader is at `progress` (0…1 per axis).
    public func offset(atProgress progress: Point) -> Point {
        Point(
            x: ScrollRange(axis: .x, contentSize: contentSize, viewport: viewport, insets: .zero).offset(atProgress: progress.x),
            y: ScrollRange(axis: .y, contentSize: contentSize, viewport: viewport, insets: .zero).offset(atProgress: progress.y))
    }
}
