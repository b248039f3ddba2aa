/// Where an entering item's view goes in a looping session, when that is not its layout rect:
/// the copy of the item `rect.x − layoutRect.x` (a multiple of the period) away, in the coordinates
/// of the plan's `offset`.
public struct Placement: Hashable, Sendable {
    public var item: Int
    public var rect: Rect

    public init(item: Int, rect: Rect) {
        self.item = item
        self.rect = rect
    }
}
