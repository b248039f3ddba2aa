/// Item rects in storage order, kept as four `Float`s each (16 bytes) while every rect is exact
/// that way, else as four `Double`s (`Rect`, 32 bytes).
///
/// Compact: x, y, width and height as `Float`s. A rect is exact when each number converts to
/// `Float` and back to the same `Double` (integers and halves, quarters, … below 2^24 do: the
/// usual point values). Past that, x and y are kept as `Float` offsets from a base per block of
/// ``blockSize`` rects (two `Double`s, a multiple of ``baseGrain`` at or below the block's first
/// rect): a list taller than 2^24 pt (16.7M; 1M rows of 50 pt reach 50M) stays compact instead
/// of doubling its rects' memory two thirds in. A block whose rects are exact as they are has
/// the base -0, the identity of `+` (`-0.0 + x` is `x` bit for bit, -0 included), and while
/// every block has it (`Form.floats`) readers skip the bases altogether: the common case pays
/// nothing for them.
///
/// The rects of the API are `Double`s and must come back bit for bit (plans, GET bodies, the
/// digest): the compact form is used only when it is exact, so every `Rect` read back equals the
/// one appended. The first rect that is not exact in either way converts the store to `Double`s
/// once. The form and the bases follow from the rects alone, in order.
///
/// The R-tree's leaves read their rects here (`SpatialIndex`), so a layout keeps each rect once.
struct RectStore: RandomAccessCollection, Equatable, Sendable {
    /// x, y (offsets from their block's bases), width and height of each rect while
    /// `isCompact`; empty otherwise.
    private(set) var floats: ContiguousArray<Float> = []
    /// The `Double`s: while `isCompact`, the x base and the y base of each block of
    /// ``blockSize`` rects (-0 for a block read as it is); else x, y, width and height of each
    /// rect (one array serves both forms).
    private(set) var wide: ContiguousArray<Double> = []
    /// How the rects are kept (one field, so that the common form costs one test a read).
    private(set) var form = Form.floats

    enum Form: UInt8, Sendable {
        /// `floats` as they are: every base in `wide` is -0.
        case floats
        /// `floats` from their blocks' bases in `wide`.
        case floatsWithBases
        /// `wide`: four `Double`s a rect.
        case doubles
    }

    /// Whether the rects are kept as `Float`s.
    var isCompact: Bool { form != .doubles }

    /// Rects per pair of bases: 0.016 bytes of base a rect, and a block of a list spans far
    /// less than 2^24 pt.
    static let blockShift = 10
    static var blockSize: Int { 1 << blockShift }
    /// Bases are multiples of it: an offset keeps its coordinate's fraction bits.
    static let baseGrain = 4096.0

    init() {}

    init<S: Sequence<Rect>>(_ rects: S) {
        reserveCapacity(rects.underestimatedCount)
        for r in rects { append(r) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { (isCompact ? floats.count : wide.count) / 4 }

    /// - Complexity: O(1).
    @inline(__always)
    subscript(k: Int) -> Rect {
        if form == .floats {
            let b = k * 4
            return Rect(x: Double(floats[b]), y: Double(floats[b + 1]), width: Double(floats[b + 2]), height: Double(floats[b + 3]))
        }
        return isCompact ? rectWithBases(k) : Rect(x: wide[k * 4], y: wide[k * 4 + 1], width: wide[k * 4 + 2], height: wide[k * 4 + 3])
    }

    /// Rect `k` of a compact store with bases.
    /// - Complexity: O(1).
    @inline(never)
    private func rectWithBases(_ k: Int) -> Rect {
        let b = k * 4
        let base = (k >> Self.blockShift) * 2
        return Rect(x: wide[base] + Double(floats[b]), y: wide[base + 1] + Double(floats[b + 1]), width: Double(floats[b + 2]), height: Double(floats[b + 3]))
    }

    mutating func reserveCapacity(_ n: Int) {
        if isCompact {
            floats.reserveCapacity(n * 4)
            wide.reserveCapacity((n + Self.blockSize - 1) / Self.blockSize * 2)
        } else {
            wide.reserveCapacity(n * 4)
        }
    }

    /// Whether `value` survives `Double` → `Float` → `Double` (the sign of zero too).
    @inline(__always)
    static func isExactFloat(_ value: Double) -> Bool { Double(Float(value)).bitPattern == value.bitPattern }

    /// The base for a block whose first coordinate is `value`: the multiple of ``baseGrain`` at
    /// or below it when it is that far from 0, else -0 (as for a value that is not finite).
    static func base(for value: Double) -> Double {
        guard value.isFinite, abs(value) >= baseGrain else { return -0.0 }
        return (value / baseGrain).rounded(.down) * baseGrain
    }

    /// `value` as an offset from `base`, if it reads back (`base + Double(offset)`) as the same
    /// `Double`.
    @inline(__always)
    static func offset(_ value: Double, from base: Double) -> Float? {
        let f = base == 0 ? Float(value) : Float(value - base)
        return (base + Double(f)).bitPattern == value.bitPattern ? f : nil
    }

    /// - Complexity: amortized O(1): O(``blockSize``) once a block when its base changes, O(n)
    ///   once for the first rect that is exact in neither way.
    mutating func append(_ r: Rect) {
        if isCompact {
            let k = count
            let pair = (k >> Self.blockShift) * 2
            if k & (Self.blockSize - 1) == 0 {
                // A new block: read as it is while every rect so far was exact that way and its
                // first rect is too (the common case stays `.floats`).
                let plain = form == .floats
                let bx = plain && Self.isExactFloat(r.x) ? -0.0 : Self.base(for: r.x)
                let by = plain && Self.isExactFloat(r.y) ? -0.0 : Self.base(for: r.y)
                wide.append(bx)
                wide.append(by)
                if bx != 0 || by != 0 { form = .floatsWithBases }
            }
            if appendCompact(r, baseX: wide[pair], baseY: wide[pair + 1]) || rebaseLastBlock(adding: r) { return }
            widen()
        }
        wide.append(r.x)
        wide.append(r.y)
        wide.append(r.width)
        wide.append(r.height)
    }

    /// Appends `r` as offsets from the given bases, if it is exact that way.
    @inline(__always)
    private mutating func appendCompact(_ r: Rect, baseX: Double, baseY: Double) -> Bool {
        guard let x = Self.offset(r.x, from: baseX), let y = Self.offset(r.y, from: baseY), Self.isExactFloat(r.width),
            Self.isExactFloat(r.height)
        else { return false }
        floats.append(x)
        floats.append(y)
        floats.append(Float(r.width))
        floats.append(Float(r.height))
        return true
    }

    /// Gives the last block (the one `r` goes to) the bases of its first rect, its rects written
    /// again from them, when `r` and those rects are all exact that way; else changes nothing
    /// and answers false.
    /// - Complexity: O(``blockSize``).
    private mutating func rebaseLastBlock(adding r: Rect) -> Bool {
        let k = count
        let pair = (k >> Self.blockShift) * 2
        let start = k & ~(Self.blockSize - 1)
        let first = start < k ? self[start] : r
        let baseX = Self.base(for: first.x)
        let baseY = Self.base(for: first.y)
        guard baseX.bitPattern != wide[pair].bitPattern || baseY.bitPattern != wide[pair + 1].bitPattern,
            Self.offset(r.x, from: baseX) != nil, Self.offset(r.y, from: baseY) != nil, Self.isExactFloat(r.width), Self.isExactFloat(r.height)
        else { return false }
        var offsets: [Float] = []
        offsets.reserveCapacity((k - start) * 2)
        for j in start..<k {
            let q = self[j]
            guard let x = Self.offset(q.x, from: baseX), let y = Self.offset(q.y, from: baseY) else { return false }
            offsets.append(x)
            offsets.append(y)
        }
        for (n, j) in (start..<k).enumerated() {
            floats[j * 4] = offsets[n * 2]
            floats[j * 4 + 1] = offsets[n * 2 + 1]
        }
        wide[pair] = baseX
        wide[pair + 1] = baseY
        if baseX != 0 || baseY != 0 { form = .floatsWithBases }
        // Exact from these bases (checked above): it is appended.
        return appendCompact(r, baseX: baseX, baseY: baseY)
    }

    /// Moves the rects to `Double`s.
    private mutating func widen() {
        var all = ContiguousArray<Double>()
        all.reserveCapacity(Swift.max(floats.capacity, (count + 1) * 4))
        for k in 0..<count {
            let r = self[k]
            all.append(r.x)
            all.append(r.y)
            all.append(r.width)
            all.append(r.height)
        }
        floats = []
        wide = all
        form = .doubles
    }

    /// Bytes held by the rects.
    var memoryBytes: Int { floats.capacity * 4 + wide.capacity * 8 }

    /// The same rects: the same representation holds them (the form and the bases follow from
    /// the rects alone, so two stores of the same rects hold the same numbers; a base is never
    /// +0, so comparing bases by value compares them bit for bit).
    static func == (a: RectStore, b: RectStore) -> Bool {
        a.form == b.form && a.floats == b.floats && a.wide == b.wide
    }
}
