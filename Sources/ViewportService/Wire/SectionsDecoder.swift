import ViewportCore
import ViewportJSON

/// Decodes a layout's `sections`: each `{"id"?, "reuse"?}` plus exactly one of
/// `"list": {"count", "size" | "sizes", "spacing"?, "axis"?}`,
/// `"grid": {"columns", "count", "itemSize", "spacing"?}` (spacing a number or `[x, y]`),
/// `"pages": {"count", "size", "axis"?}`, `"items": [{"id", "rect", "reuse"?, "sticky"?}]`, or
/// `"stack": {"items": [{"id", "size"?, "reuse"?, "lane"?}], "estimate"?, "spacing"?, "lanes"?,
/// "laneSize"?}` (docs/api.md "Stacks and edits").
///
/// Shapes are checked here (400: wrong types, unknown or missing fields); values (sizes, lanes,
/// ids) by the section stack and the builder (422, naming the section, field and item).
enum SectionsDecoder {
    static func decode(_ r: inout JSONReader) throws -> [SectionSpec] {
        var sections: [SectionSpec] = []
        guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of sections") }
        try r.readArray { r, _ in
            var id: String?
            var reuse: String?
            var shapes: [SectionSpec.Shape] = []
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a section object") }
            try r.readObject { r, key in
                switch key {
                case "id": id = try r.readString()
                case "reuse": reuse = r.readNullIfPresent() ? nil : try r.readString()
                case "list": shapes.append(try decodeList(&r))
                case "grid": shapes.append(try decodeGrid(&r))
                case "pages": shapes.append(try decodePages(&r))
                case "items": shapes.append(.items(try decodeItems(&r)))
                case "stack": shapes.append(.stack(try decodeStack(&r)))
                default: throw r.unknownField(key)
                }
            }
            guard shapes.count == 1, let shape = shapes.first else {
                throw JSONError(.type, "give exactly one of list, grid, pages, items, stack")
            }
            sections.append(SectionSpec(id: id, reuse: reuse, shape: shape))
        }
        return sections
    }

    private static func decodeList(_ r: inout JSONReader) throws -> SectionSpec.Shape {
        var count: Int?
        var size: Size?
        var sizes: [Size]?
        var spacing = 0.0
        var axis: Axis?
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a list object") }
        try r.readObject { r, key in
            switch key {
            case "count": count = try r.readInt()
            case "size": size = try r.readSize()
            case "sizes":
                var list: [Size] = []
                try r.readArray { r, _ in list.append(try r.readSize()) }
                sizes = list
            case "spacing": spacing = try r.readDouble()
            case "axis": axis = try r.readEnum(Axis.self)
            default: throw r.unknownField(key)
            }
        }
        switch (size, sizes) {
        case (let size?, nil):
            guard let count else { throw JSONReader.missingField("count") }
            return .list(axis: axis, count: count, size: size, spacing: spacing)
        case (nil, let sizes?):
            // A count that disagrees with the sizes is well-formed but invalid: the section
            // stack answers it as a 422 (after the rest of the body is read).
            return .sizedList(axis: axis, sizes: sizes, spacing: spacing, count: count)
        default:
            throw JSONError(.type, "give either size or sizes")
        }
    }

    private static func decodeGrid(_ r: inout JSONReader) throws -> SectionSpec.Shape {
        var columns: Int?
        var count: Int?
        var itemSize: Size?
        var spacing = Size.zero
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a grid object") }
        try r.readObject { r, key in
            switch key {
            case "columns": columns = try r.readInt()
            case "count": count = try r.readInt()
            case "itemSize": itemSize = try r.readSize()
            case "spacing":
                if r.peekKind() == .number {
                    let gap = try r.readDouble()
                    spacing = Size(width: gap, height: gap)
                } else {
                    spacing = try r.readSize()
                }
            default: throw r.unknownField(key)
            }
        }
        guard let columns else { throw JSONReader.missingField("columns") }
        guard let count else { throw JSONReader.missingField("count") }
        guard let itemSize else { throw JSONReader.missingField("itemSize") }
        return .grid(columns: columns, count: count, itemSize: itemSize, spacing: spacing)
    }

    private static func decodePages(_ r: inout JSONReader) throws -> SectionSpec.Shape {
        var count: Int?
        var size: Size?
        var axis: Axis?
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a pages object") }
        try r.readObject { r, key in
            switch key {
            case "count": count = try r.readInt()
            case "size": size = try r.readSize()
            case "axis": axis = try r.readEnum(Axis.self)
            default: throw r.unknownField(key)
            }
        }
        guard let count else { throw JSONReader.missingField("count") }
        guard let size else { throw JSONReader.missingField("size") }
        return .pages(axis: axis, count: count, size: size)
    }

    private static func decodeStack(_ r: inout JSONReader) throws -> StackSpec {
        var items: [StackSpec.Item]?
        var spec = StackSpec(items: [])
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a stack object") }
        try r.readObject { r, key in
            switch key {
            case "items": items = try decodeStackItems(&r)
            case "estimate": spec.estimate = try r.readSize()
            case "spacing": spec.spacing = try r.readDouble()
            case "lanes": spec.lanes = try r.readInt()
            case "laneSize": spec.laneSize = try r.readDouble()
            default: throw r.unknownField(key, in: "stack")
            }
        }
        guard let items else { throw JSONReader.missingField("items") }
        spec.items = items
        return spec
    }

    /// `[{"id", "size"?, "reuse"?, "lane"?}]`; `reuse` null or "" is none, absent is the section's.
    private static func decodeStackItems(_ r: inout JSONReader) throws -> [StackSpec.Item] {
        var items: [StackSpec.Item] = []
        guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of stack items") }
        try r.readArray { r, _ in
            var id: String?
            var item = StackSpec.Item(id: "")
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a stack item object") }
            try r.readObject { r, key in
                switch key {
                case "id": id = try r.readString()
                case "size": item.size = try r.readSize()
                case "reuse": item.reuse = r.readNullIfPresent() ? "" : try r.readString()
                case "lane": item.lane = try r.readInt()
                default: throw r.unknownField(key, in: "stack item")
                }
            }
            guard let id else { throw JSONReader.missingField("id") }
            item.id = id
            items.append(item)
        }
        return items
    }

    private static func decodeItems(_ r: inout JSONReader) throws -> [SectionSpec.Item] {
        var items: [SectionSpec.Item] = []
        guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of items") }
        try r.readArray { r, _ in
            var id: String?
            var rect: Rect?
            var item = SectionSpec.Item(id: "", rect: .zero)
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an item object") }
            try r.readObject { r, key in
                switch key {
                case "id": id = try r.readString()
                case "rect":
                    let (x, y, w, h) = try r.readDoubleQuad()
                    rect = Rect(x: x, y: y, width: w, height: h)
                case "reuse": item.reuse = r.readNullIfPresent() ? nil : try r.readString()
                case "sticky": item.sticky = try r.readBool()
                default: throw r.unknownField(key)
                }
            }
            guard let id else { throw JSONReader.missingField("id") }
            guard let rect else { throw JSONReader.missingField("rect") }
            item.id = id
            item.rect = rect
            items.append(item)
        }
        return items
    }
}
