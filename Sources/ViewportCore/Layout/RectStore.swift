/// Item rects in storage order, kept as four `Float`s each (16 bytes) while every coordinate
/// converts to `Float` and back to the same `Double` (integers and halves, quarters, … below 2^24
/// do: the usual point values), else as four `Double`s (`Rect`, 32 bytes).
///
/// The rects of the API are `Double`s and must come back bit for bit (plans, GET bodies, the
/// digest): the compact form is used only when it is exact, so every `Rect` read back equals the
/// one appended. The first rect that is not exact converts the store to `Double`s once.
///
/// The R-tree's leaves read their rects here (`SpatialIndex`), so a layout keeps each rect once.
struct RectStore: RandomAccessCollection, Equatable, Sendable {
    /// x, y, width, height of each rect while `isCompact`; empty otherwise.
    private(set) var floats: ContiguousArray<Float> = []
    /// The rects while not `isCompact`; empty otherwise.
    private(set) var doubles: ContiguousArray<Rect> = []
    /// Whether the rects are kept as `Float`s.
    private(set) var isCompact = true

    init() {}

    init<S: Sequence<Rect>>(_ rects: S) {
        reserveCapacity(rects.underestimatedCount)
        for r in rects { append(r) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { isCompact ? floats.count / 4 : doubles.count }

    /// - Complexity: O(1).
    @inline(__always)
    subscript(k: Int) -> Rect {
        if isCompact {
            let b = k * 4
            return Rect(x: Double(floats[b]), y: Double(floats[b + 1]), width: Double(floats[b + 2]), height: Double(floats[b + 3]))
        }
        return doubles[k]
    }

    mutating func reserveCapacity(_ n: Int) {
        if isCompact { floats.reserveCapacity(n * 4) } else { doubles.reserveCapacity(n) }
    }

    /// Whether `value` survives `Double` → `Float` → `Double` (the sign of zero too).
    @inline(__always)
    static func isExactFloat(_ value: Double) -> Bool { Double(Float(value)).bitPattern == value.bitPattern }

    /// - Complexity: amortized O(1); O(n) once, for the first rect that is not exact in `Float`.
    mutating func append(_ r: Rect) {
        if isCompact {
            if Self.isExactFloat(r.x) && Self.isExactFloat(r.y) && Self.isExactFloat(r.width) && Self.isExactFloat(r.height) {
                floats.append(Float(r.x))
                floats.append(Float(r.y))
                floats.append(Float(r.width))
                floats.append(Float(r.height))
                return
            }
            widen()
        }
        doubles.append(r)
    }

    /// Moves the rects to `Double`s.
    private mutating func widen() {
        var wide = ContiguousArray<Rect>()
        wide.reserveCapacity(Swift.max(floats.capacity / 4, count + 1))
        for k in 0..<count { wide.append(self[k]) }
        floats = []
        doubles = wide
        isCompact = false
    }

    /// Bytes held by the rects.
    var memoryBytes: Int { floats.capacity * 4 + doubles.capacity * MemoryLayout<Rect>.stride }

    /// The same rects: the same representation holds them (a rect that is not exact in `Float`
    /// makes a store wide, so a compact and a wide store never hold the same rects).
    static func == (a: RectStore, b: RectStore) -> Bool {
        a.isCompact == b.isCompact && a.floats == b.floats && a.doubles == b.doubles
    }
}
