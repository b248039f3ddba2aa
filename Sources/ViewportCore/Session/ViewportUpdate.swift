/// One viewport update from a client.
public struct ViewportUpdate: Hashable, Sendable {
    /// Where the viewport goes: an offset, or an item to scroll to.
    public enum Destination: Hashable, Sendable {
        /// `offset`: the new content offset.
        case offset(Point)
        /// `scrollTo`: the offset that puts the item in place (see `ScrollAlignment`).
        case scrollTo(ScrollTarget)
    }

    public var destination: Destination
    /// A new viewport size (rotation), or nil to keep the current one.
    public var size: Size?
    /// Rate of change of the offset, points per second; nil is none (zero for paging).
    public var velocity: Point?
    public var phase: ScrollPhase
    /// Sequence number for safe retries, or nil to apply unconditionally.
    public var seq: UInt64?
    /// `select`: nil when absent (the selection stays), `.clear` for `null`.
    public var select: Selection?
    /// `time`: the client's clock in seconds (not lower than the session's last); nil for none.
    public var time: Double?
    /// `rtt`: the client's round trip in seconds (0 … `LookAhead.maxRTT`); the session keeps the
    /// last one it was sent. nil keeps it.
    public var rtt: Double?

    public init(
        offset: Point, size: Size? = nil, velocity: Point? = nil, phase: ScrollPhase = .idle, seq: UInt64? = nil,
        select: Selection? = nil, time: Double? = nil, rtt: Double? = nil
    ) {
        self.init(destination: .offset(offset), size: size, velocity: velocity, phase: phase, seq: seq, select: select, time: time, rtt: rtt)
    }

    public init(
        scrollTo target: ScrollTarget, size: Size? = nil, velocity: Point? = nil, phase: ScrollPhase = .idle,
        seq: UInt64? = nil, select: Selection? = nil, time: Double? = nil, rtt: Double? = nil
    ) {
        self.init(destination: .scrollTo(target), size: size, velocity: velocity, phase: phase, seq: seq, select: select, time: time, rtt: rtt)
    }

    public init(
        destination: Destination, size: Size? = nil, velocity: Point? = nil, phase: ScrollPhase = .idle,
        seq: UInt64? = nil, select: Selection? = nil, time: Double? = nil, rtt: Double? = nil
    ) {
        self.destination = destination
        self.size = size
        self.velocity = velocity
        self.phase = phase
        self.seq = seq
        self.select = select
        self.time = time
        self.rtt = rtt
    }

    /// The offset, when the update carries one rather than `scrollTo`.
    public var offset: Point? {
        if case .offset(let point) = destination { return point }
        return nil
    }

    /// The `scrollTo` target, when the update carries one.
    public var scrollTo: ScrollTarget? {
        if case .scrollTo(let target) = destination { return target }
        return nil
    }
}
