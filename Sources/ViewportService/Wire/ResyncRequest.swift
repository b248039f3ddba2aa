import ViewportCore
import ViewportJSON

/// The body of `POST /v1/sessions/{id}/resync`: the views a client really has after its session
/// lost updates. Ids are resolved under the session's lock (`resolve(in:)`), like an update's.
///
/// `{"seq": n, "offset": [x, y], "viewport"?: [w, h], "visible": [{"id", "view"}],
///   "pool"?: {"<reuse>": [{"view", "id"?}]}}` (each pool oldest first; a pooled view's `id` null
/// or absent when its last item is gone).
struct ResyncRequest: Sendable {
    struct Entry: Sendable {
        /// Nil only in a pool: the view's last item is gone (removed by an edit), or not known.
        var id: String?
        var view: Int
    }

    var seq: UInt64
    var offset: Point
    var viewport: Size?
    var visible: [Entry]
    var pool: [(reuse: String, views: [Entry])]

    static func decode(_ body: [UInt8]) throws -> ResyncRequest {
        try JSONReader.read(body) { r in
            var seq: UInt64?
            var offset: Point?
            var viewport: Size?
            var visible: [Entry]?
            var pool: [(reuse: String, views: [Entry])] = []
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "a resync object") }
            try r.readObject { r, key in
                switch key {
                case "seq": seq = UInt64(try r.readCount())
                case "offset": offset = try r.readPoint()
                case "viewport": viewport = try r.readSize()
                case "visible": visible = try readEntries(&r, context: "visible entry", idMayBeNull: false)
                case "pool":
                    guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an object of pools by reuse identifier") }
                    try r.readObject { r, reuse in pool.append((reuse.string, try readEntries(&r, context: "pooled view", idMayBeNull: true))) }
                default: throw r.unknownField(key, in: "resync")
                }
            }
            try r.finish()
            guard let seq else { throw JSONReader.missingField("seq") }
            guard let offset else { throw JSONReader.missingField("offset") }
            guard let visible else { throw JSONReader.missingField("visible") }
            return ResyncRequest(seq: seq, offset: offset, viewport: viewport, visible: visible, pool: pool)
        }
    }

    /// `idMayBeNull`: a pooled view's `id` may be null or absent (its last item is gone).
    private static func readEntries(_ r: inout JSONReader, context: String, idMayBeNull: Bool) throws -> [Entry] {
        var entries: [Entry] = []
        try r.readArray { r, _ in
            var id: String?
            var view: Int?
            guard r.peekKind() == .object else { throw r.typeMismatch(expected: "an object {\"id\", \"view\"}") }
            try r.readObject { r, key in
                switch key {
                case "id":
                    if !(idMayBeNull && r.readNullIfPresent()) { id = try r.readString() }
                case "view": view = try r.readInt()
                default: throw r.unknownField(key, in: context)
                }
            }
            guard id != nil || idMayBeNull else { throw JSONReader.missingField("id") }
            guard let view else { throw JSONReader.missingField("view") }
            entries.append(Entry(id: id, view: view))
        }
        return entries
    }

    /// The core's resync, with ids resolved in `layout`; an unknown id is a 422 naming the entry.
    func resolve(in layout: Layout) throws(Problem) -> ResyncState {
        var visibleEntries: [PlanEntry] = []
        for (k, entry) in visible.enumerated() {
            guard let id = entry.id, let item = layout.item(withID: id) else {
                throw .invalid("visible[\(k)].id: \(JSONError.quoted(entry.id ?? "")) is not an item of the session's layout")
            }
            visibleEntries.append(PlanEntry(item: item, view: entry.view))
        }
        var pools: [(reuse: String, views: [ResyncState.PooledView])] = []
        for (reuse, views) in pool {
            var pooled: [ResyncState.PooledView] = []
            for (k, entry) in views.enumerated() {
                guard let id = entry.id else {
                    pooled.append(ResyncState.PooledView(view: entry.view, item: nil))
                    continue
                }
                guard let item = layout.item(withID: id) else {
                    throw .invalid(
                        "pool.\(reuse)[\(k)].id: \(JSONError.quoted(id)) is not an item of the session's layout (a view whose last item is gone, removed by an edit, goes with \"id\": null)")
                }
                pooled.append(ResyncState.PooledView(view: entry.view, item: item))
            }
            pools.append((reuse, pooled))
        }
        return ResyncState(seq: seq, offset: offset, viewport: viewport, visible: visibleEntries, pool: pools)
    }
}
