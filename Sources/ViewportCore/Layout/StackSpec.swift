/// A stack section as sent (docs/api.md "Stacks and edits"): items with ids and optional sizes, the estimate of
/// the others, spacing and lanes.
public struct StackSpec: Sendable {
    public struct Item: Sendable {
        public var id: String
        /// The measured size; nil: the section's estimate until measured.
        public var size: Size?
        /// The reuse identifier; nil: the section's.
        public var reuse: String?
        /// The lane (`0 ..< lanes`); nil: the shortest lane when the item is added.
        public var lane: Int?

        public init(id: String, size: Size? = nil, reuse: String? = nil, lane: Int? = nil) {
            self.id = id
            self.size = size
            self.reuse = reuse
            self.lane = lane
        }
    }

    public var items: [Item]
    public var estimate: Size?
    public var spacing: Double
    public var lanes: Int
    /// Lane width across the axis; nil: the cross size of `estimate`, else of the first item.
    public var laneSize: Double?

    public init(items: [Item], estimate: Size? = nil, spacing: Double = 0, lanes: Int = 1, laneSize: Double? = nil) {
        self.items = items
        self.estimate = estimate
        self.spacing = spacing
        self.lanes = lanes
        self.laneSize = laneSize
    }
}
