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
}
