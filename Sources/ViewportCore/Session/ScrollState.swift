/// Where a session's scroll view is and what its last updates left behind: the offset, viewport
/// and motion with the materialized region they make, the client's clock, what the next update
/// diffs against, the pinned sticky header and a drag in progress.
///
/// The region is always `Region(offset:viewport:buffer:motion:)`: it changes only with them
/// (`move(to:viewport:motion:)`, `recenter(along:by:)`).
struct ScrollState: Sendable {
    /// How far the materialized region extends beyond the viewport (see `Buffer`).
    let buffer: Buffer
    private(set) var offset: Point
    private(set) var viewport: Size
    /// The motion `region` leans toward (see `Buffer`): that of the last update.
    private(set) var motion: Motion
    /// The materialized region at `offset`, `viewport` and `motion`.
    private(set) var region: Region
    /// The session's last client time (`time`), nil until an update or the opening carries one.
    var time: Double?
    /// The client's last round trip (`rtt`, seconds), nil until an update or the opening carries
    /// one: with a velocity, the region looks ahead by it (see `LookAhead`).
    var rtt: Double?
    /// What the next update diffs against: the two regions, with a safe window when one is known
    /// (valid for the current region and layout only), or the shown items after a resync.
    var diffBasis = DiffBasis.regions
    /// The sticky header pinned at the top, if any (see `ViewportSession+Sticky.swift`).
    var pinned: PinnedHeader?
    /// The offset of the last `drag-begin` not yet answered by a `drag-end` (`b`).
    var dragBegin: Point?

    init(offset: Point, viewport: Size, buffer: Buffer, motion: Motion = .none, time: Double? = nil, rtt: Double? = nil) {
        self.buffer = buffer
        self.offset = offset
        self.viewport = viewport
        self.motion = motion
        self.region = Region(offset: offset, viewport: viewport, buffer: buffer, motion: motion)
        self.time = time
        self.rtt = rtt
    }

    /// The materialized region at another position.
    @inline(__always)
    func region(at offset: Point, viewport: Size, motion: Motion) -> Region {
        Region(offset: offset, viewport: viewport, buffer: buffer, motion: motion)
    }

    /// Moves to `offset`, `viewport` and `motion`, and the region with them.
    @inline(__always)
    mutating func move(to offset: Point, viewport: Size, motion: Motion) {
        self.offset = offset
        self.viewport = viewport
        self.motion = motion
        region = Region(offset: offset, viewport: viewport, buffer: buffer, motion: motion)
    }

    /// Shifts the offset, and a drag's begin, by whole periods of a loop (the picture does not
    /// change).
    mutating func recenter(along axis: Axis, by shift: Double) {
        offset = axis.setting(axis.component(of: offset) + shift, in: offset)
        region = Region(offset: offset, viewport: viewport, buffer: buffer, motion: motion)
        if let begin = dragBegin { dragBegin = axis.setting(axis.component(of: begin) + shift, in: begin) }
    }
}
