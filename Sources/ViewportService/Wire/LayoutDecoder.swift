import ViewportCore
import ViewportJSON

/// Decodes a layout object (`{"items": […], "contentSize": [w, h]}`, or generated:
/// `{"sections": […], "axis", "insets", "spacing", "contentSize"}`) straight into a
/// `LayoutBuilder`, item by item, without an intermediate array of strings.
///
/// Error precedence follows docs/api.md "Errors" (413, then 400, then 422): more items than allowed stops at
/// once with 413; a semantic error (negative size, duplicate id, …) is remembered and the rest of
/// the body is still parsed, so a later syntax error still answers 400.
struct LayoutDecoder {
    let maxItems: Int

    /// An item's fields, by their number in `readObject(fields:)`.
    private static let itemFields: [StaticString] = ["id", "rect", "reuse", "sticky"]

    /// Decodes a layout, throwing only what comes before 422 in docs/api.md's order (413, 400). A
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
        var sections: [SectionSpec]?
        var axis = Axis.y
        var insets = Insets.zero
        var spacing = 0.0
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
                    var sticky = false
                    var hasID = false
                    guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an item object") }
                    try r.readObject(fields: Self.itemFields) { r, field, key in
                        switch field {
                        case 0:
                            idBytes.removeAll(keepingCapacity: true)
                            try r.readStringBytes(into: &idBytes)
                            hasID = true
                        case 1:
                            let (x, y, w, h) = try r.readDoubleQuad()
                            rect = Rect(x: x, y: y, width: w, height: h)
                        case 2:
                            reuse = r.readNullIfPresent() ? nil : try r.readString()
                        case 3:
                            sticky = try r.readBool()
                        default:
                            throw r.unknownField(key)
                        }
                    }
                    guard hasID else { throw JSONReader.missingField("items[\(index)].id") }
                    guard let rect else { throw JSONReader.missingField("items[\(index)].rect") }
                    guard invalid == nil else { return }
                    do {
                        try builder.append(idUTF8: idBytes, rect: rect, reuse: reuse, sticky: sticky)
                    } catch LayoutError.tooManyItems(_, let limit) {
                        throw Problem.tooLarge("items: more than \(limit) items (layouts.maxItems)")
                    } catch {
                        invalid = .invalid(String(describing: error))
                    }
                }
            case "sections":
                sections = try SectionsDecoder.decode(&r)
            case "axis":
                axis = try r.readEnum(Axis.self)
            case "insets":
                insets = try r.readInsets()
            case "spacing":
                spacing = try r.readDouble()
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
        // Sticky items pin along the layout's axis: the sections' axis, or the one an items layout names.
        builder.setAxis(axis)
        if let sections {
            guard !sawItems else { throw JSONError(.type, "layout: give either items or sections, not both") }
            if invalid == nil {
                // Sections stack in order along the axis, inside the insets.
                var stack = SectionStack(axis: axis, insets: insets, spacing: spacing, withStacks: sections.contains(where: \.isStack))
                do {
                    guard spacing.isFinite, spacing >= 0 else { throw LayoutError.invalidSection(field: "spacing", reason: "must be finite and not negative") }
                    for spec in sections { try stack.append(spec, to: &builder) }
                    try builder.setTrailingPadding(stack.trailingPadding)
                } catch LayoutError.tooManyItems(_, let limit) {
                    throw Problem.tooLarge("sections: more than \(limit) items (layouts.maxItems)")
                } catch {
                    invalid = .invalid(String(describing: error))
                }
            }
        } else {
            guard sawItems else { throw JSONReader.missingField("items") }
            guard insets == .zero, spacing == 0 else {
                throw JSONError(.type, "layout: insets and spacing apply to sections; give sections")
            }
        }
        if let invalid { throw invalid }
        do {
            let layout = try builder.build()
            FreeMemory.afterBuildingLayout(items: layout.count)
            return layout
        } catch {
            throw Problem.invalid(error.description)
        }
    }
}
