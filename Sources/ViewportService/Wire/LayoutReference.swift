import ViewportCore

/// What a body's `"layout"` field holds: a stored layout's id, or a layout given inline.
enum LayoutReference: Sendable {
    case id(String)
    case inline(Layout)

    static func decode(_ r: inout JSONReader, maxItems: Int) throws -> LayoutReference {
        switch r.peekKind() {
        case .string: return .id(try r.readString())
        case .object: return .inline(try LayoutDecoder(maxItems: maxItems).decode(&r))
        default: throw r.typeMismatch(expected: "a layout id (string) or a layout object")
        }
    }
}
