extension Layout {
    /// The items' extent from the origin: the largest `x + width` and `y + height` over the
    /// explicit rects and each section's items (docs/api.md: the default content size before the
    /// trailing insets). A section's far corner stands for its items; an empty section has an
    /// origin (after the section before it, and the spacing) but no items, so it adds nothing.
    /// `LayoutBuilder` and an edit (`EditDraft`) both compute it here.
    /// - Complexity: O(e + s) for e explicit rects and s sections.
    static func itemsExtent(
        explicitRects: RectStore, segments: [LayoutSegment], stacks: [LayoutStack], placed: [PlacedSection]
    ) -> Point {
        var maxX = 0.0
        var maxY = 0.0
        for r in explicitRects {
            maxX = max(maxX, r.x + r.width)
            maxY = max(maxY, r.y + r.height)
        }
        for segment in segments where segment.count > 0 {
            let far: Point
            switch segment {
            case .explicit: continue
            case .generated(_, let section): far = section.farCorner
            case .stack(_, _, let s): far = stacks[s].section.farCorner
            case .placed(_, _, let p): far = placed[p].farCorner
            }
            maxX = max(maxX, far.x)
            maxY = max(maxY, far.y)
        }
        return Point(x: maxX, y: maxY)
    }
}
