/// Caps on the reuse pools: `max` for every identifier, `perReuse` for named ones (replacing `max`).
/// Nil means unbounded.
public struct PoolCaps: Hashable, Sendable {
    public var max: Int?
    public var perReuse: [String: Int]

    public init(max: Int? = nil, perReuse: [String: Int] = [:]) {
        self.max = max
        self.perReuse = perReuse
    }

    /// The cap for an identifier.
    public func cap(for reuse: String) -> Int? { perReuse[reuse] ?? max }
}
