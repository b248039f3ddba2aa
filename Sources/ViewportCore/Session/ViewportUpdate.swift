/// One viewport update from a client.
public struct ViewportUpdate: Hashable, Sendable {
    public var offset: Point
    /// A new viewport size (rotation), or nil to keep the current one.
    public var size: Size?
    /// Rate of change of the offset, points per second.
    public var velocity: Point?
    public var phase: ScrollPhase
    /// Sequence number for safe retries, or nil to apply unconditionally.
    public var seq: UInt64?

    public init(offset: Point, size: Size? = nil, velocity: Point? = nil, phase: ScrollPhase = .idle, seq: UInt64? = nil) {
        self.offset = offset
        self.size = size
        self.velocity = velocity
        self.phase = phase
        self.seq = seq
    }
}
