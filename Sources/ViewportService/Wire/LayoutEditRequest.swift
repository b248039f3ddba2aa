import ViewportCore
import ViewportJSON

/// The body of `PATCH /v1/sessions/{id}/layout` (docs/api.md "Stacks and edits"):
/// `{"resize"?: [{"id", "size"}], "insert"?: [{"before" | "after": id, or "at": "start" | "end"
/// with "section", "items": [{"id", "size"?, "reuse"?}]}], "remove"?: [id], "anchor"?, "seq"?}`.
///
/// Shapes are checked here (400); ids, sizes and sections are checked by the session against its
/// layout (422), all before anything changes.
struct LayoutEditRequest: Sendable {
    var edit = StackEdit()
    var anchor = EditAnchor.visible
    var seq: UInt64?

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> LayoutEditRequest {
        var r = JSONReader(bytes)
        let request = try decode(&r)
        try r.finish()
        return request
    }

    /// Reads the edit object at the reader's position (a body, or the value of a stream's `patch`).
    static func decode(_ r: inout JSONReader) throws -> LayoutEditRequest {
        var request = LayoutEditRequest()
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a layout edit object") }
        try r.readObject { r, key in
            switch key {
            case "resize":
                guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of resizes") }
                try r.readArray { r, _ in request.edit.resize.append(try decodeResize(&r)) }
            case "insert":
                guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of inserts") }
                try r.readArray { r, _ in request.edit.insert.append(try decodeInsert(&r)) }
            case "remove":
                guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of item ids") }
                try r.readArray { r, _ in request.edit.remove.append(try r.readString()) }
            case "anchor": request.anchor = try r.readEnum(EditAnchor.self)
            case "seq": request.seq = try r.readSeq()
            default: throw r.unknownField(key, in: "layout edit")
            }
        }
        return request
    }

    private static func decodeResize(_ r: inout JSONReader) throws -> StackEdit.Resize {
        var id: String?
        var size: Size?
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a resize object") }
        try r.readObject { r, key in
            switch key {
            case "id": id = try r.readString()
            case "size": size = try r.readSize()
            default: throw r.unknownField(key, in: "resize")
            }
        }
        guard let id else { throw JSONReader.missingField("id") }
        guard let size else { throw JSONReader.missingField("size") }
        return StackEdit.Resize(id: id, size: size)
    }

    private static func decodeInsert(_ r: inout JSONReader) throws -> StackEdit.Insert {
        var before: String?
        var after: String?
        var at: String?
        var section: String?
        var items: [StackEdit.NewItem]?
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an insert object") }
        try r.readObject { r, key in
            switch key {
            case "before": before = try r.readString()
            case "after": after = try r.readString()
            case "at":
                let value = try r.readString()
                guard value == "start" || value == "end" else { throw r.typeError("\(JSONError.quoted(value)) is not one of \"start\", \"end\"") }
                at = value
            case "section": section = try r.readString()
            case "items":
                guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of items") }
                var list: [StackEdit.NewItem] = []
                try r.readArray { r, _ in list.append(try decodeNewItem(&r)) }
                items = list
            default: throw r.unknownField(key, in: "insert")
            }
        }
        guard let items else { throw JSONReader.missingField("items") }
        let place: StackEdit.Place
        switch (before, after, at) {
        case (let id?, nil, nil): place = .before(id)
        case (nil, let id?, nil): place = .after(id)
        case (nil, nil, let end?):
            guard let section else { throw JSONError(.missingField, "missing field \"section\": \"at\" names an end of the stack section given by \"section\"") }
            place = end == "start" ? .start(section: section) : .end(section: section)
            return StackEdit.Insert(place: place, items: items)
        default:
            throw JSONError(.type, "give exactly one of \"before\", \"after\" (an item id) or \"at\" (with \"section\")")
        }
        guard section == nil else { throw JSONError(.type, "\"section\" goes with \"at\"; \"before\" and \"after\" name an item") }
        return StackEdit.Insert(place: place, items: items)
    }

    private static func decodeNewItem(_ r: inout JSONReader) throws -> StackEdit.NewItem {
        var id: String?
        var item = StackEdit.NewItem(id: "")
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an item object") }
        try r.readObject { r, key in
            switch key {
            case "id": id = try r.readString()
            case "size": item.size = try r.readSize()
            case "reuse": item.reuse = r.readNullIfPresent() ? "" : try r.readString()
            default: throw r.unknownField(key, in: "inserted item")
            }
        }
        guard let id else { throw JSONReader.missingField("id") }
        item.id = id
        return item
    }
}

/// One line of an NDJSON stream of updates, or one WebSocket message: a viewport update, or
/// `{"patch": {…a PATCH body…}}`, an edit of the session's layout (docs/api.md "Stacks and edits").
enum StreamMessage: Sendable {
    case update(UpdateRequest)
    case patch(LayoutEditRequest)

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> StreamMessage {
        guard isPatch(bytes) else { return .update(try UpdateRequest.decode(bytes)) }
        var r = JSONReader(bytes)
        var range: Range<Int>?
        try r.readObject { r, key in
            switch key {
            case "patch":
                r.skipWhitespace()
                let start = r.position
                try r.skipValue()
                range = start..<r.position
            default: throw r.unknownField(key, in: "patch message (it has only \"patch\")")
            }
        }
        try r.finish()
        guard let range else { throw JSONReader.missingField("patch") }
        // The edit is read on its own, as `PATCH …/layout` reads its body, so that its problems
        // read the same (field paths from the edit, not `patch.…`).
        return .patch(try LayoutEditRequest.decode(UnsafeRawBufferPointer(rebasing: bytes[range])))
    }

    /// Whether the object's first key is `"patch"` (a patch message has no other key; an update
    /// never has it).
    static func isPatch(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        }
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return false }
        i += 1
        skipSpace()
        let key: StaticString = "\"patch\""
        guard bytes.count - i >= key.utf8CodeUnitCount else { return false }
        for k in 0..<key.utf8CodeUnitCount where bytes[i + k] != key.utf8Start[k] { return false }
        return true
    }
}
