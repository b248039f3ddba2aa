/// A layout's item rects in layout order, as a collection (computed for generated sections).
public struct ItemRects: RandomAccessCollection, Sendable {
    let layout: Layout

    public var startIndex: Int { 0 }
    public var endIndex: Int { layout.count }

    @inline(__always)
    public subscript(item: Int) -> Rect { layout.rect(at: item) }
}
