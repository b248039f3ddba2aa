/// Appends the primitives of viewportd's binary formats (stored layouts, session snapshots) to a
/// byte buffer: LEB128 varints, zigzag for signed values, IEEE doubles little-endian, and
/// length-prefixed bytes.
package struct BinaryWriter: Sendable {
    package private(set) var bytes: [UInt8]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }

    @inline(__always)
    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    package mutating func raw<Bytes: Sequence<UInt8>>(_ value: Bytes) { bytes.append(contentsOf: value) }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first.
    @inline(__always)
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    /// A non-negative `Int` as a varint.
    @inline(__always)
    package mutating func count(_ value: Int) { varint(UInt64(clamping: max(0, value))) }

    /// A signed value, zigzag-encoded so that small magnitudes of either sign stay short.
    @inline(__always)
    package mutating func int(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    package mutating func int(_ value: Int) { int(Int64(value)) }

    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A double's IEEE 754 bits, little-endian (exact, including -0, infinities and NaN payloads).
    @inline(__always)
    package mutating func double(_ value: Double) {
        let bits = value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    /// A varint length, then the bytes.
    package mutating func lengthPrefixed(_ value: UnsafeRawBufferPointer) {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    package mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    package mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    package mutating func point(_ p: Point) {
        double(p.x)
        double(p.y)
    }

    package mutating func size(_ s: Size) {
        double(s.width)
        double(s.height)
    }

    package mutating func rect(_ r: Rect) {
        double(r.x)
        double(r.y)
        double(r.width)
        double(r.height)
    }
}
