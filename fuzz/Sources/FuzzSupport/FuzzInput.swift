/// Takes structured choices from fuzz bytes, front to back; once the bytes run out every choice
/// is its smallest (so every input is valid, and libFuzzer's mutations change choices locally).
public struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = Array(bytes)
    }

    public var isAtEnd: Bool { position >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A value in `range` (two bytes of choice: enough for the ranges used here).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        let raw = UInt64(byte()) << 8 | UInt64(byte())
        return range.lowerBound + Int(raw % span)
    }

    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[int(in: 0...(choices.count - 1))]
    }

    public mutating func uint64() -> UInt64 {
        var v: UInt64 = 0
        for _ in 0..<8 { v = v << 8 | UInt64(byte()) }
        return v
    }

    /// A coordinate: mostly small whole or half numbers (so items touch edges often), sometimes
    /// one of the extremes clients may send (huge, tiny, negative zero, not finite).
    public mutating func coordinate(scale: Double = 100) -> Double {
        switch byte() % 16 {
        case 0..<9: return Double(int(in: -40...400)) * scale / 40
        case 9..<12: return Double(int(in: -8000...8000)) / 2
        case 12: return Double(bitPattern: uint64())
        default: return pick(Self.extremes)
        }
    }

    /// An extent (width, height, spacing, buffer): mostly small and not negative.
    public mutating func extent(scale: Double = 100) -> Double {
        switch byte() % 16 {
        case 0..<11: return Double(int(in: 0...200)) * scale / 40
        case 11..<13: return Double(int(in: 0...4000))
        default: return pick(Self.extremes)
        }
    }

    /// Numbers at the edges of `Double` that a client can send in JSON (and some it cannot).
    public static let extremes: [Double] = [
        0, -0.0, 1e-300, 5e-324, 1e15, 1e16, 9_007_199_254_740_993, 1e100, 1e300, 1e307, 1.7976931348623157e308,
        -1e307, -1.7976931348623157e308, .infinity, -.infinity, .nan, 0.1, 0.999_999_999_999, 1 - 1e-16,
    ]

    /// The bytes not taken yet.
    public mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return position < bytes.count ? Array(bytes[position...]) : []
    }
}
