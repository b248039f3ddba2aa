/// Running counts of a session, for `GET /v1/sessions/{id}` and metrics.
public struct SessionStats: Hashable, Sendable {
    /// Applied updates (the opening plan is not one; retries are not counted).
    public var updates: Int = 0
    public var created: Int = 0
    public var reused: Int = 0
    /// Reuses where the view last showed the same item (`rebind: false`).
    public var rebindFree: Int = 0
    public var recycled: Int = 0
    public var discarded: Int = 0
    /// The most views alive at once, shown or pooled.
    public var peakViews: Int = 0

    public init() {}

    /// Its snapshot section (see `ViewportSession+Snapshot.swift`): the counts in declaration order.
    func writeSnapshot(into w: inout BinaryWriter) {
        for value in [updates, created, reused, rebindFree, recycled, discarded, peakViews] {
            w.count(value)
        }
    }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) {
        self.init()
        updates = try r.count()
        created = try r.count()
        reused = try r.count()
        rebindFree = try r.count()
        recycled = try r.count()
        discarded = try r.count()
        peakViews = try r.count()
    }
}
