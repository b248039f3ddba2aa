/// A sticky header and where its view goes: pinned at the top of the viewport (`pin`), or back
/// at its layout rect (`unpin`).
public struct PinEntry: Hashable, Sendable {
    public var item: Int
    public var view: Int
    public var rect: Rect

    public init(item: Int, view: Int, rect: Rect) {
        self.item = item
        self.view = view
        self.rect = rect
    }
}
