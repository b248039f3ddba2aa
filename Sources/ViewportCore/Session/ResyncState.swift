/// What a client says it has after its session lost updates (a crashed instance): the views it
/// really holds, which the session adopts (docs/api.md "Many instances, one store").
public struct ResyncState: Hashable, Sendable {
    /// A pooled view and the item it last showed (nil when the client does not name one: that
    /// item is gone, for example removed by an edit).
    public struct PooledView: Hashable, Sendable {
        public var view: Int
        public var item: Int?

        public init(view: Int, item: Int?) {
            self.view = view
            self.item = item
        }
    }

    /// The last sequence number the client applied; the next update carries `seq + 1`.
    public var seq: UInt64
    public var offset: Point
    /// A new viewport size, or nil to keep the session's.
    public var viewport: Size?
    /// The shown items (positions in the session's layout) and their views.
    public var visible: [PlanEntry]
    /// Pooled views by reuse identifier, each pool oldest first.
    public var pool: [(reuse: String, views: [PooledView])]

    public init(seq: UInt64, offset: Point, viewport: Size? = nil, visible: [PlanEntry], pool: [(reuse: String, views: [PooledView])] = []) {
        self.seq = seq
        self.offset = offset
        self.viewport = viewport
        self.visible = visible
        self.pool = pool
    }

    public static func == (a: ResyncState, b: ResyncState) -> Bool {
        a.seq == b.seq && a.offset == b.offset && a.viewport == b.viewport && a.visible == b.visible
            && a.pool.map(\.reuse) == b.pool.map(\.reuse) && a.pool.map(\.views) == b.pool.map(\.views)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(seq)
        hasher.combine(offset)
        hasher.combine(visible)
    }
}
