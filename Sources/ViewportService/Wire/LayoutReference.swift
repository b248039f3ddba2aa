import ViewportCore
import ViewportJSON

/// What a body's `"layout"` field holds: a stored layout's id, or a layout given inline.
enum LayoutReference: Sendable {
    case id(String)
    case inline(Layout)

    /// The reference, or (as the failure) the 422 of an invalid inline layout, to be thrown once
    /// the rest of the body is read (400 comes before 422).
    static func decode(_ r: inout JSONReader, maxItems: Int) throws -> Result<LayoutReference, Problem> {
        switch r.peekKind() {
        case .string: return .success(.id(try r.readString()))
        case .object: return try LayoutDecoder(maxItems: maxItems).decodeDeferringInvalid(&r).map { .inline($0) }
        default: throw r.typeMismatch(expected: "a layout id (string) or a layout object")
        }
    }
}
