/// Items' reuse classes in storage order (-1: never reused), kept in the smallest form that holds
/// them: nothing but the count while every item has the same class (a list of "row"s), one byte
/// each while every class is below 255 (nearly every real layout), else four bytes each.
///
/// A plan reads the class of every item that enters or leaves; on a 1M-item layout the classes
/// were 4 MB of `Int32`s, and a jump's random items missed the cache there (a quarter of the
/// planner's entering loop in `perf annotate`). One byte an item is 1 MB; a uniform layout reads
/// no memory at all. The form follows from the values alone, so equal contents compare equal.
struct ReuseClassStore: RandomAccessCollection, Equatable, Sendable {
    /// The class every item has while ``narrow`` and ``wide`` are both empty.
    private var uniform: Int32 = -1
    /// Each item's class plus one, while the classes are not uniform and all fit.
    private var narrow: ContiguousArray<UInt8> = []
    /// Each item's class, once one does not fit in ``narrow``.
    private var wide: ContiguousArray<Int32> = []
    /// Which form holds the classes.
    private var form = Form.uniform
    private(set) var count = 0

    private enum Form: UInt8, Sendable { case uniform, narrow, wide }

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    /// - Complexity: O(1).
    @inline(__always)
    subscript(k: Int) -> Int32 {
        switch form {
        case .uniform:
            precondition(k >= 0 && k < count, "reuse class index out of range")
            return uniform
        case .narrow: return Int32(narrow[k]) &- 1
        case .wide: return wide[k]
        }
    }

    /// Starts loading the cache line that holds item `k`'s class (nothing to load while uniform).
    /// - Complexity: O(1).
    @inline(__always)
    func prefetch(_ k: Int) {
        switch form {
        case .uniform: break
        case .narrow: narrow.prefetchElement(at: k)
        case .wide: wide.prefetchElement(at: k)
        }
    }

    mutating func reserveCapacity(_ n: Int) {
        switch form {
        case .uniform: break  // nothing to reserve; once a second class appears the array grows by doubling
        case .narrow: narrow.reserveCapacity(n)
        case .wide: wide.reserveCapacity(n)
        }
    }

    /// - Complexity: amortized O(1); O(n) once when the classes stop being uniform, and once when
    ///   one stops fitting in a byte.
    mutating func append(_ c: Int32) {
        switch form {
        case .uniform:
            if count == 0 { uniform = c }
            if c == uniform {
                count += 1
                return
            }
            if Self.fitsNarrow(c) && Self.fitsNarrow(uniform) {
                narrow = ContiguousArray(repeating: UInt8(uniform + 1), count: count)
                form = .narrow
            } else {
                wide = ContiguousArray(repeating: uniform, count: count)
                form = .wide
            }
        case .narrow:
            if !Self.fitsNarrow(c) {
                wide = ContiguousArray(narrow.lazy.map { Int32($0) - 1 })
                narrow = []
                form = .wide
            }
        case .wide:
            break
        }
        if form == .narrow { narrow.append(UInt8(c + 1)) } else { wide.append(c) }
        count += 1
    }

    @inline(__always)
    private static func fitsNarrow(_ c: Int32) -> Bool { c >= -1 && c < 255 }

    /// Bytes of storage held.
    var memoryBytes: Int { narrow.capacity + wide.capacity * 4 }
}
