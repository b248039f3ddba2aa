import ViewportCore
import ViewportJSON

/// Writes a session's layout (`GET /v1/sessions/{id}/layout`) in a form that, posted again,
/// gives the same rects: a layout with stacks in sections form (every stack item with its size
/// when measured, its reuse identifier when it is not the section's, and its `lane` when the
/// stack has more than one, so lanes decided with earlier sizes stay), any other layout as its
/// items with their rects and the content size.
enum LayoutEncoder {
    static func encode(_ layout: Layout, into w: inout JSONWriter) {
        guard let geometry = layout.sectionsGeometry else {
            encodeItems(layout, into: &w)
            return
        }
        w.beginObject()
        w.key("axis")
        w.string(geometry.axis.rawValue)
        w.key("insets")
        let insets = geometry.insets
        w.beginArray()
        for value in [insets.top, insets.left, insets.bottom, insets.right] { w.number(value) }
        w.endArray()
        w.key("spacing")
        w.number(geometry.spacing)
        w.key("sections")
        w.beginArray()
        for (k, section) in layout.sectionDescriptions.enumerated() { encode(section, index: k, layout: layout, into: &w) }
        w.endArray()
        if let size = geometry.contentSize {
            w.key("contentSize")
            PlanEncoder.size(size, into: &w)
        }
        w.endObject()
    }

    private static func header(id: String?, reuse: String?, into w: inout JSONWriter) {
        if let id {
            w.key("id")
            w.string(id)
        }
        if let reuse {
            w.key("reuse")
            w.string(reuse)
        }
    }

    private static func encode(_ section: Layout.SectionDescription, index: Int, layout: Layout, into w: inout JSONWriter) {
        w.beginObject()
        switch section {
        case .stack(let id, let reuse, let estimate, let spacing, let lanes, let laneSize):
            header(id: id, reuse: reuse, into: &w)
            w.key("stack")
            w.beginObject()
            w.key("items")
            w.beginArray()
            layout.forEachStackItem(inSection: index) { itemID, size, itemReuse, lane in
                w.beginObject()
                w.key("id")
                w.string(utf8: itemID)
                if let size {
                    w.key("size")
                    PlanEncoder.size(size, into: &w)
                }
                if let itemReuse {
                    w.key("reuse")
                    w.string(itemReuse)
                }
                if lanes > 1 {
                    w.key("lane")
                    w.int(lane)
                }
                w.endObject()
            }
            w.endArray()
            if let estimate {
                w.key("estimate")
                PlanEncoder.size(estimate, into: &w)
            }
            w.key("spacing")
            w.number(spacing)
            w.key("lanes")
            w.int(lanes)
            w.key("laneSize")
            w.number(laneSize)
            w.endObject()
        case .list(let id, let reuse, let axis, let count, let size, let spacing):
            header(id: id, reuse: reuse, into: &w)
            w.key("list")
            w.beginObject()
            w.key("count")
            w.int(count)
            w.key("size")
            PlanEncoder.size(size, into: &w)
            w.key("spacing")
            w.number(spacing)
            w.key("axis")
            w.string(axis.rawValue)
            w.endObject()
        case .sizedList(let id, let reuse, let axis, let sizes, let spacing):
            header(id: id, reuse: reuse, into: &w)
            w.key("list")
            w.beginObject()
            w.key("sizes")
            w.beginArray()
            for size in sizes { PlanEncoder.size(size, into: &w) }
            w.endArray()
            w.key("spacing")
            w.number(spacing)
            w.key("axis")
            w.string(axis.rawValue)
            w.endObject()
        case .grid(let id, let reuse, let columns, let count, let itemSize, let spacing):
            header(id: id, reuse: reuse, into: &w)
            w.key("grid")
            w.beginObject()
            w.key("columns")
            w.int(columns)
            w.key("count")
            w.int(count)
            w.key("itemSize")
            PlanEncoder.size(itemSize, into: &w)
            w.key("spacing")
            PlanEncoder.size(spacing, into: &w)
            w.endObject()
        case .items(let id):
            header(id: id, reuse: nil, into: &w)
            w.key("items")
            w.beginArray()
            layout.forEachPlacedItem(inSection: index) { itemID, rect, reuse, sticky in
                item(itemID, rect: rect, reuse: reuse, sticky: sticky, into: &w)
            }
            w.endArray()
        }
        w.endObject()
    }

    private static func item(_ id: UnsafeRawBufferPointer, rect: Rect, reuse: String?, sticky: Bool, into w: inout JSONWriter) {
        w.beginObject()
        w.key("id")
        w.string(utf8: id)
        w.key("rect")
        PlanEncoder.rect(rect, into: &w)
        if let reuse {
            w.key("reuse")
            w.string(reuse)
        }
        if sticky {
            w.key("sticky")
            w.bool(true)
        }
        w.endObject()
    }

    /// `{"items": [...], "contentSize": [w, h]}`: every item with its rect.
    private static func encodeItems(_ layout: Layout, into w: inout JSONWriter) {
        w.beginObject()
        w.key("items")
        w.beginArray()
        layout.forEachItemInOrder { id, rect, reuse, sticky in item(id, rect: rect, reuse: reuse, sticky: sticky, into: &w) }
        w.endArray()
        w.key("contentSize")
        PlanEncoder.size(layout.contentSize, into: &w)
        w.endObject()
    }
}
