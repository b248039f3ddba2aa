/// An item leaving the materialized region, as the planner needs it.
struct LeavingItem {
    /// Its position in the layout it leaves (for the plan's lists).
    var item: Int
    var view: Int
    /// The session's reuse class for its identifier; nil when its view is never reused.
    var reuseClass: Int?
    /// Its position in the session's current layout, for same-item reuse; nil if it is not there.
    var poolItem: Int?
}
