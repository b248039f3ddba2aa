/// A length along a stack's axis in fixed point: a whole number of 2⁻⁵⁶ points.
///
/// An item's start is a sum of the sizes (and spacings) before it in its lane. Summed as doubles,
/// the result would depend on the order of the additions — the shape of the tree holding the
/// sizes — so an item could move by an ulp when an unrelated item is edited, and two versions of a
/// stack would disagree about items neither changed. Sums of `StackLength`s are exact; the one
/// rounding to a double happens at the end (``value``), so an item's start depends only on the
/// sizes before it.
///
/// A double becomes a length rounded to the nearest multiple of 2⁻⁵⁶: exactly for every double of
/// at least 1/16 (whose ulp is at least 2⁻⁵⁶), within 2⁻⁵⁷ for smaller ones. With sizes and spacing
/// of at most ``StackSection/maxLength`` (10¹²) a lane of 10⁹ items still sums far inside the range
/// (±2⁷¹ points); conversions saturate beyond ±2⁷⁰ points instead of trapping.
public struct StackLength: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The length in units of 2⁻⁵⁶ points.
    public var raw: Int128

    public static let fractionBits = 56
    public static var zero: StackLength { StackLength(raw: 0) }
    /// The saturation bound of conversions from doubles: 2⁷⁰ points.
    static var limit: Int128 { Int128(1) << 126 }

    @inline(__always)
    public init(raw: Int128) { self.raw = raw }

    /// `value` rounded to the nearest multiple of 2⁻⁵⁶ (half to even); NaN is zero, values beyond
    /// ±2⁷⁰ saturate.
    @inline(__always)
    public init(_ value: Double) {
        let bits = value.bitPattern
        let exponent = Int((bits >> 52) & 0x7FF)
        guard exponent != 0 else {
            // Zero or subnormal (< 2⁻¹⁰²²): rounds to zero.
            raw = 0
            return
        }
        guard exponent != 0x7FF else {
            raw = value.isNaN ? 0 : (value < 0 ? -Self.limit : Self.limit)
            return
        }
        let significand = (bits & 0x000F_FFFF_FFFF_FFFF) | (1 << 52)
        // value = significand · 2^(exponent − 1075); in units: significand · 2^(exponent − 1075 + 56).
        let shift = exponent - 1019
        var magnitude: Int128
        if shift >= 0 {
            magnitude = shift > 73 ? Self.limit : Int128(significand) << shift
        } else if shift <= -54 {
            magnitude = 0  // below half a unit (the significand is under 2⁵³)
        } else {
            let k = UInt64(-shift)
            var q = significand >> k
            let remainder = significand & ((1 << k) - 1)
            let half: UInt64 = 1 << (k - 1)
            if remainder > half || (remainder == half && q & 1 == 1) { q += 1 }
            magnitude = Int128(q)
        }
        if magnitude > Self.limit { magnitude = Self.limit }
        raw = bits >> 63 == 0 ? magnitude : -magnitude
    }

    /// The length in points, correctly rounded to the nearest double.
    @inline(__always)
    public var value: Double {
        let magnitude = raw.magnitude
        let high = UInt64(truncatingIfNeeded: magnitude >> 64)
        var d: Double
        if high == 0 {
            d = Double(UInt64(truncatingIfNeeded: magnitude))
        } else {
            // Keep the top 64 bits, with a sticky bit for the rest so the one rounding (in the
            // conversion) is to nearest, ties to even.
            let k = 64 - high.leadingZeroBitCount
            var top = UInt64(truncatingIfNeeded: magnitude >> k)
            if magnitude & ((UInt128(1) << k) - 1) != 0 { top |= 1 }
            d = Double(top) * Double(sign: .plus, exponent: k, significand: 1)
        }
        d *= 0x1p-56
        return raw < 0 ? -d : d
    }

    public var description: String { "\(value)" }

    /// `n` times this length.
    @inline(__always)
    public func times(_ n: Int) -> StackLength { StackLength(raw: raw &* Int128(n)) }

    @inline(__always)
    public static func < (a: StackLength, b: StackLength) -> Bool { a.raw < b.raw }
    @inline(__always)
    public static func + (a: StackLength, b: StackLength) -> StackLength { StackLength(raw: a.raw &+ b.raw) }
    @inline(__always)
    public static func - (a: StackLength, b: StackLength) -> StackLength { StackLength(raw: a.raw &- b.raw) }
    @inline(__always)
    public static func += (a: inout StackLength, b: StackLength) { a.raw &+= b.raw }
    @inline(__always)
    public static func -= (a: inout StackLength, b: StackLength) { a.raw &-= b.raw }
}
