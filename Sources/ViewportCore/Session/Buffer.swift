/// `buffer`: how far the materialized region extends beyond the viewport (docs/api.md "Viewability,
/// direction-aware buffers, time"). Along an axis on which the viewport moves, `ahead` points in
/// the direction of motion and `behind` points behind it; along an axis with no motion,
/// `max(ahead, behind)` on both sides (react-window's and Compose's overscan that leans toward the
/// scroll). A number `n` is `{ahead: n, behind: n}`: the same on every side, whatever the motion.
public struct Buffer: Hashable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public var ahead: Double
    public var behind: Double

    public init(ahead: Double, behind: Double) {
        self.ahead = ahead
        self.behind = behind
    }

    /// `n` on every side.
    public init(_ n: Double) { self.init(ahead: n, behind: n) }
    public init(integerLiteral value: Int) { self.init(Double(value)) }
    public init(floatLiteral value: Double) { self.init(value) }

    /// The extent on both sides along an axis with no motion.
    public var still: Double { max(ahead, behind) }

    /// The extents on the low side (min x or y) and the high side of an axis along which the
    /// viewport moves by `sign` (−1 toward lower offsets, +1 toward higher ones, 0 not at all).
    @inline(__always)
    public func extents(moving sign: Int) -> (low: Double, high: Double) {
        if sign > 0 { return (behind, ahead) }
        if sign < 0 { return (ahead, behind) }
        let s = still
        return (s, s)
    }

    /// `extents(moving:)` with `reach` more on the side the viewport moves to (a look-ahead).
    @inline(__always)
    public func extents(moving sign: Int, reaching reach: Double) -> (low: Double, high: Double) {
        if sign > 0 { return (behind, ahead + reach) }
        if sign < 0 { return (ahead + reach, behind) }
        let s = still
        return (s, s)
    }

    /// Checks both extents; the error names `field.ahead` or `field.behind` (or just `field` for a
    /// uniform buffer, which the client sent as one number).
    func validate(field: String) throws(SessionError) {
        if ahead == behind {
            guard ahead.isFinite, ahead >= 0 else { throw .invalid(field: field, reason: "must be finite and not negative") }
            return
        }
        for (name, value) in [("ahead", ahead), ("behind", behind)] where !(value.isFinite && value >= 0) {
            throw .invalid(field: "\(field).\(name)", reason: "must be finite and not negative")
        }
    }
}
