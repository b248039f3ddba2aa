extension BinaryWriter {
    /// A double in as few bytes as the usual coordinates need: an integer (up to 2^53 in
    /// magnitude, not -0) is written as the zigzag varint of its difference from `base` shifted
    /// left by one (low bit 0), and becomes the next `base`; anything else is a 1 and the 8 raw
    /// bytes. A column of rects on a 50-point grid costs one or two bytes per number.
    @inline(__always)
    package mutating func compact(_ value: Double, base: inout Int64) {
        if let integer = Self.exactInteger(value) {
            let delta = integer &- base
            base = integer
            varint(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)) << 1)
        } else {
            byte(1)
            double(value)
        }
    }

    /// The value as an integer when it is one that survives the round trip exactly.
    @inline(__always)
    static func exactInteger(_ value: Double) -> Int64? {
        guard value.magnitude <= 9_007_199_254_740_992, value == value.rounded(.towardZero) else { return nil }
        if value == 0 && value.sign == .minus { return nil }
        return Int64(value)
    }
}

extension BinaryReader {
    /// Reads what ``BinaryWriter/compact(_:base:)`` wrote.
    @inline(__always)
    package mutating func compact(base: inout Int64) throws(BinaryFormatError) -> Double {
        let tag = try varint()
        if tag & 1 == 1 {
            guard tag == 1 else { throw .invalid("compact number tag \(tag) at byte \(position)") }
            return try double()
        }
        let zigzag = tag >> 1
        let delta = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
        let integer = base &+ delta
        guard integer.magnitude <= 9_007_199_254_740_992 else { throw .invalid("compact number out of range at byte \(position)") }
        base = integer
        return Double(integer)
    }
}
