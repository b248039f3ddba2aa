import ViewportCore
import ViewportJSON

/// `scrollTo` as sent (`{"id", "align"?, "margin"?}`), on an update or on `POST /v1/sessions`, with
/// the id not yet resolved: it is resolved in the layout the session has when it is applied.
struct ScrollToRequest: Sendable {
    var id: String
    var align: ScrollAlignment
    var margin: Double

    static func decode(_ r: inout JSONReader) throws -> ScrollToRequest {
        var id: String?
        var align = ScrollAlignment.auto
        var margin = 0.0
        guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a scrollTo object") }
        try r.readObject { r, key in
            switch key {
            case "id": id = try r.readString()
            case "align": align = try r.readEnum(ScrollAlignment.self)
            case "margin": margin = try r.readDouble()
            default: throw r.unknownField(key, in: "scrollTo")
            }
        }
        guard let id else { throw JSONReader.missingField("scrollTo.id") }
        return ScrollToRequest(id: id, align: align, margin: margin)
    }

    /// The core's target, with the id resolved in `layout`; an unknown id is a 422 naming the field.
    func resolve(in layout: Layout) throws(Problem) -> ScrollTarget {
        guard let item = layout.item(withID: id) else { throw .invalid("scrollTo.id: \"\(id)\" is not an item of the layout") }
        return ScrollTarget(item: item, align: align, margin: margin)
    }
}
