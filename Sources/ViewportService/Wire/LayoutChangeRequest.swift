import ViewportCore
import ViewportJSON

/// The body of `PUT /v1/sessions/{id}/layout`: `{"layout": id or inline, "anchor"?, "seq"?}`.
struct LayoutChangeRequest: Sendable {
    var layout: LayoutReference
    var anchor: LayoutAnchor
    var seq: UInt64?

    static func decode(_ bytes: [UInt8], maxItems: Int) throws -> LayoutChangeRequest {
        try JSONReader.read(bytes) { r in
            var layout: Result<LayoutReference, Problem>?
            var anchor = LayoutAnchor.none
            var seq: UInt64?
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a layout change object") }
            try r.readObject { r, key in
                switch key {
                case "layout": layout = try LayoutReference.decode(&r, maxItems: maxItems)
                case "anchor":
                    let name = try r.readString()
                    guard let value = LayoutAnchor(rawValue: name) else {
                        throw r.typeError("\"\(name)\" is not one of \"none\", \"visible\"")
                    }
                    anchor = value
                case "seq": seq = try r.readSeq()
                default: throw r.unknownField(key, in: "layout change")
                }
            }
            try r.finish()
            guard let layout else { throw JSONReader.missingField("layout") }
            // An invalid inline layout (422) only now that the whole body is known to be well-formed.
            return LayoutChangeRequest(layout: try layout.get(), anchor: anchor, seq: seq)
        }
    }
}
