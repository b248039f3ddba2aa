import ViewportCore

/// Decodes a layout object (`{"items": […], "contentSize": [w, h]}`) straight into a
/// `LayoutBuilder`, item by item, without an intermediate array of strings.
///
/// Error precedence follows API.md (413, then 400, then 422): more items than allowed stops at
/// once with 413; a semantic error (negative size, duplicate id, …) is remembered and the rest of
/// the body is still parsed, so a later syntax error still answers 400.
struct LayoutDecoder {
    let maxItems: Int

    /// Decodes a layout, throwing only what comes before 422 in API.md's order (413, 400). A
    /// semantic error (422) is returned as the failure, for the caller to throw once the rest of
    /// the body is read: a syntax error after the layout object (trailing bytes, a malformed
    /// field of the session body that holds it) must still answer 400.
    func decodeDeferringInvalid(_ r: inout JSONReader) throws -> Result<Layout, Problem> {
        do {
            return .success(try decodeLayout(&r))
        } catch let problem as Problem where problem.status == 422 {
            return .failure(problem)
        }
    }

    private func decodeLayout(_ r: inout JSONReader) throws -> Layout {
        var builder = LayoutBuilder(maxItems: maxItems)
        var invalid: Problem?
        var sawItems = false
        var idBytes: [UInt8] = []
        idBytes.reserveCapacity(64)
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a layout object") }
        try r.readObject { r, key in
            switch key {
            case "items":
                sawItems = true
                guard r.peekKind() == .array else { throw r.typeMismatch(expected: "an array of items") }
                try r.readArray { r, index in
                    var rect: Rect?
                    var reuse: String?
                    var hasID = false
                    guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an item object") }
                    try r.readObject { r, key in
                        switch key {
                        case "id":
                            idBytes.removeAll(keepingCapacity: true)
                            try r.readStringBytes(into: &idBytes)
                            hasID = true
                        case "rect":
                            let (x, y, w, h) = try r.readDoubleQuad()
                            rect = Rect(x: x, y: y, width: w, height: h)
                        case "reuse":
                            reuse = r.readNullIfPresent() ? nil : try r.readString()
                        default:
                            throw r.unknownField(key)
                        }
                    }
                    guard hasID else { throw JSONReader.missingField("items[\(index)].id") }
                    guard let rect else { throw JSONReader.missingField("items[\(index)].rect") }
                    guard invalid == nil else { return }
                    do {
                        try builder.append(idUTF8: idBytes, rect: rect, reuse: reuse)
                    } catch LayoutError.tooManyItems(_, let limit) {
                        throw Problem.tooLarge("items: more than \(limit) items (layouts.maxItems)")
                    } catch {
                        invalid = .invalid(String(describing: error))
                    }
                }
            case "contentSize":
                let (w, h) = try r.readDoublePair()
                do {
                    try builder.setContentSize(Size(width: w, height: h))
                } catch {
                    if invalid == nil { invalid = .invalid(String(describing: error)) }
                }
            default:
                throw r.unknownField(key, in: "layout")
            }
        }
        guard sawItems else { throw JSONReader.missingField("items") }
        if let invalid { throw invalid }
        do {
            return try builder.build()
        } catch {
            throw Problem.invalid(error.description)
        }
    }
}
