/// One item of a stack, as its tree stores it.
///
/// Sizes are the ones the item has now: its measured size, or the section's estimate until it is
/// measured. 40 bytes.
public struct StackEntry: Hashable, Sendable {
    /// Size along the stack's axis.
    public var main: Double
    /// Size across the stack's axis.
    public var cross: Double
    /// Position key: strictly increasing with rank, assigned by the tree (see `StackTree+Keys`).
    /// Ignored in entries given to the tree.
    public var orderKey: UInt64
    /// Which item this is; the caller maps uids to ids. Unique within a version of a tree.
    public var uid: Int32
    /// Reuse class, -1 for none.
    public var reuseClass: Int32
    /// The lane, `0 ..< laneCount`; an item keeps it for life.
    public var lane: UInt16
    /// Whether `main` and `cross` were measured (given) rather than the section's estimate.
    public var isMeasured: Bool

    public init(uid: Int32, main: Double, cross: Double, lane: UInt16 = 0, isMeasured: Bool = true, reuseClass: Int32 = -1) {
        self.main = main
        self.cross = cross
        self.orderKey = 0
        self.uid = uid
        self.reuseClass = reuseClass
        self.lane = lane
        self.isMeasured = isMeasured
    }
}
