/// How a session starts: viewport, offset, buffer, insets and pool caps, paging, and the scrolling
/// helpers (all off by default; a helper that is off costs nothing).
public struct SessionConfiguration: Hashable, Sendable {
    public var viewport: Size
    public var offset: Point
    /// `scrollTo`: the opening plan starts at the offset that puts this item in place (instead of
    /// `offset`, which it replaces; FlatList's initialScrollIndex).
    public var scrollTo: ScrollTarget?
    /// How far the materialized region extends beyond the viewport (see `Buffer`).
    public var buffer: Buffer
    public var insets: Insets
    public var pool: PoolCaps
    /// Most items the session may materialize at once (a plan larger than that is refused with
    /// 422); nil for no limit. Set by the service from `sessions.maxViews`, not by clients.
    public var maxViews: Int?
    /// Where drags come to rest (`paging`).
    public var paging: PagingOptions
    /// `prefetch`: seconds of velocity to look ahead, or nil for off.
    public var prefetch: Double?
    /// `lazyLoad`: list the items whose heavy content should load now under `load`.
    public var lazyLoad: Bool
    /// `exposure`: list items entering and leaving the screen region under `enter` and `leave`.
    public var exposure: Bool
    /// With `exposure`: when an item counts as on screen, and `minTime` for `viewed`.
    public var exposureRule = ExposureRule()
    /// `time`: the client's clock at the opening plan, in seconds; nil for none.
    public var time: Double?
    /// `rtt`: the client's round trip in seconds, kept for the updates that follow; nil for none.
    public var rtt: Double?
    /// `lookAhead`: the cap on how far the region reaches ahead by the round trip (see `LookAhead`).
    public var lookAhead = LookAhead.standard
    /// `links`: follower scroll views by name; every plan carries their offsets under `linked`.
    public var links: [String: LinkedScrollView]
    /// `loop`: the content repeats endlessly along the paging axis (see `LoopSpace` and
    /// docs/loop.md).
    public var loop: Bool

    public init(
        viewport: Size, offset: Point = .zero, buffer: Double = 20, insets: Insets = .zero, pool: PoolCaps = PoolCaps(),
        paging: PagingOptions = PagingOptions(), prefetch: Double? = nil, lazyLoad: Bool = false, exposure: Bool = false,
        links: [String: LinkedScrollView] = [:], loop: Bool = false
    ) {
        self.viewport = viewport
        self.offset = offset
        self.buffer = Buffer(buffer)
        self.insets = insets
        self.pool = pool
        self.paging = paging
        self.prefetch = prefetch
        self.lazyLoad = lazyLoad
        self.exposure = exposure
        self.links = links
        self.loop = loop
    }

    /// Checks every value that does not depend on the layout; the error names the field.
    /// (`loop` is checked against the layout when the session opens.)
    public func validate() throws(SessionError) {
        guard viewport.isValidExtent else {
            throw .invalid(field: "viewport", reason: "width and height must be finite and not negative")
        }
        guard offset.isFinite else { throw .invalid(field: "offset", reason: "must be finite") }
        try buffer.validate(field: "buffer")
        if let scrollTo { try scrollTo.validate() }
        if let time, !time.isFinite { throw .invalid(field: "time", reason: "must be finite") }
        if let rtt { try LookAhead.validate(rtt: rtt, field: "rtt") }
        try lookAhead.validate(field: "lookAhead")
        try exposureRule.validate()
        guard insets.isFinite else { throw .invalid(field: "insets", reason: "must be finite") }
        if let max = pool.max, max < 0 { throw .invalid(field: "pool.max", reason: "must not be negative") }
        for (name, cap) in pool.perReuse.sorted(by: { $0.key < $1.key }) where cap < 0 {
            throw .invalid(field: "pool.perReuse.\(name)", reason: "must not be negative")
        }
        try paging.validate()
        if let prefetch, !(prefetch.isFinite && prefetch >= 0) {
            throw .invalid(field: "prefetch", reason: "must be finite and not negative")
        }
        for (name, link) in links.sorted(by: { $0.key < $1.key }) {
            guard link.viewport.isValidExtent else {
                throw .invalid(field: "links.\(name).viewport", reason: "width and height must be finite and not negative")
            }
            guard link.contentSize.isValidExtent else {
                throw .invalid(field: "links.\(name).contentSize", reason: "width and height must be finite and not negative")
            }
        }
    }

    /// Whether any option needs work after the views are planned.
    var usesHelpers: Bool { prefetch != nil || lazyLoad || exposure || !links.isEmpty || loop }
}
