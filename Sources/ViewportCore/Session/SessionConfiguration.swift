/// How a session starts: viewport, offset, buffer, insets and pool caps.
public struct SessionConfiguration: Hashable, Sendable {
    public var viewport: Size
    public var offset: Point
    /// Points the materialized region extends beyond the viewport on every side.
    public var buffer: Double
    public var insets: Insets
    public var pool: PoolCaps

    public init(
        viewport: Size, offset: Point = .zero, buffer: Double = 20, insets: Insets = .zero, pool: PoolCaps = PoolCaps()
    ) {
        self.viewport = viewport
        self.offset = offset
        self.buffer = buffer
        self.insets = insets
        self.pool = pool
    }

    /// Checks every value; the error names the field.
    public func validate() throws(SessionError) {
        guard viewport.isValidExtent else {
            throw .invalid(field: "viewport", reason: "width and height must be finite and not negative")
        }
        guard offset.isFinite else { throw .invalid(field: "offset", reason: "must be finite") }
        guard buffer.isFinite, buffer >= 0 else { throw .invalid(field: "buffer", reason: "must be finite and not negative") }
        guard insets.isFinite else { throw .invalid(field: "insets", reason: "must be finite") }
        if let max = pool.max, max < 0 { throw .invalid(field: "pool.max", reason: "must not be negative") }
        for (name, cap) in pool.perReuse where cap < 0 {
            throw .invalid(field: "pool.perReuse.\(name)", reason: "must not be negative")
        }
    }
}
