/// Reads what ``BinaryWriter`` wrote, checking every length against the bytes that remain, so a
/// truncated or corrupt buffer is an error and never a crash or a huge allocation.
package struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    package private(set) var position = 0

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package var remaining: Int { bytes.count - position }
    package var isAtEnd: Bool { position == bytes.count }

    @inline(__always)
    package mutating func byte() throws(BinaryFormatError) -> UInt8 {
        guard position < bytes.count else { throw .truncated(at: position) }
        let b = bytes[position]
        position += 1
        return b
    }

    @inline(__always)
    package mutating func varint() throws(BinaryFormatError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw .truncated(at: position) }
            let b = bytes[position]
            position += 1
            guard shift < 64 else { throw .invalid("varint longer than 64 bits at byte \(position)") }
            result |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    /// A non-negative count no larger than `limit` (so a corrupt count cannot ask for a huge
    /// allocation).
    @inline(__always)
    package mutating func count(limit: Int = .max) throws(BinaryFormatError) -> Int {
        let value = try varint()
        guard value <= UInt64(limit) else { throw .invalid("count \(value) exceeds \(limit) at byte \(position)") }
        return Int(value)
    }

    /// A count of elements that each take at least `minBytes` bytes: bounded by what remains.
    package mutating func elementCount(minBytes: Int = 1) throws(BinaryFormatError) -> Int {
        let n = try count()
        guard n <= remaining / max(1, minBytes) else { throw .truncated(at: position) }
        return n
    }

    @inline(__always)
    package mutating func int64() throws(BinaryFormatError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    package mutating func int() throws(BinaryFormatError) -> Int {
        let v = try int64()
        guard let int = Int(exactly: v) else { throw .invalid("integer out of range at byte \(position)") }
        return int
    }

    package mutating func bool() throws(BinaryFormatError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let b: throw .invalid("boolean byte \(b) at \(position - 1)")
        }
    }

    @inline(__always)
    package mutating func double() throws(BinaryFormatError) -> Double {
        guard remaining >= 8 else { throw .truncated(at: position) }
        var bits: UInt64 = 0
        for k in 0..<8 { bits |= UInt64(bytes[position + k]) << UInt64(8 * k) }
        position += 8
        return Double(bitPattern: bits)
    }

    /// A varint length and that many bytes, as a slice of the buffer (valid while it is).
    package mutating func lengthPrefixed(limit: Int = .max) throws(BinaryFormatError) -> UnsafeRawBufferPointer {
        let n = try count(limit: limit)
        guard n <= remaining else { throw .truncated(at: position) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
        position += n
        return slice
    }

    package mutating func take(_ n: Int) throws(BinaryFormatError) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= remaining else { throw .truncated(at: position) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + n)])
        position += n
        return slice
    }

    package mutating func string(limit: Int = .max) throws(BinaryFormatError) -> String {
        String(decoding: try lengthPrefixed(limit: limit), as: UTF8.self)
    }

    package mutating func optionalString() throws(BinaryFormatError) -> String? {
        try bool() ? try string() : nil
    }

    package mutating func point() throws(BinaryFormatError) -> Point { Point(x: try double(), y: try double()) }
    package mutating func size() throws(BinaryFormatError) -> Size { Size(width: try double(), height: try double()) }
    package mutating func rect() throws(BinaryFormatError) -> Rect {
        Rect(x: try double(), y: try double(), width: try double(), height: try double())
    }

    /// Checks that nothing follows the last field.
    package func finish() throws(BinaryFormatError) {
        guard isAtEnd else { throw .invalid("\(remaining) unexpected bytes after the end") }
    }
}
