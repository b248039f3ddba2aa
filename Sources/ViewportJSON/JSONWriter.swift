#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A byte-buffer builder for hand-written JSON encoders of hot responses.
///
/// Commas are automatic: every value and key writer first appends `,` unless the previous
/// byte opens a container (`{`, `[`), ends a key (`:`), ends a line (`\n`) or the buffer is
/// empty. So encoders just write keys and values in order, with no state beyond the buffer:
///
/// ```swift
/// var w = JSONWriter(capacity: 256)
/// w.beginObject()
/// w.key("seq"); w.int(7)
/// w.key("offset"); w.beginArray(); w.number(0); w.number(1200); w.endArray()
/// w.endObject()                      // {"seq":7,"offset":[0,1200]}
/// ```
///
/// The bytes live in one malloc'd buffer written through a pointer: appending to a `[UInt8]`
/// costs a uniqueness check per byte, and plan encoding was ~25 % of a request's service time
/// (`viewport-bench 10 service-load`). So the writer is noncopyable: it owns its buffer, which
/// comes from `malloc`, so that a finished response can hand it on without a copy
/// (``finish()`` gives a ``JSONBuffer``, which the service hands to the HTTP layer).
public struct JSONWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    /// Bytes written.
    @usableFromInline var used = 0
    /// Bytes written.
    @inlinable public var count: Int { used }
    @usableFromInline var capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = Swift.max(16, capacity)
        guard let memory = malloc(self.capacity) else { fatalError("JSONWriter: out of memory") }
        base = memory.bindMemory(to: UInt8.self, capacity: self.capacity)
    }

    deinit { free(base) }

    /// The JSON written, in the writer's own `malloc`'d memory (not copied).
    public consuming func finish() -> JSONBuffer {
        let buffer = JSONBuffer(takingMallocated: UnsafeMutableRawPointer(base), count: used)
        discard self
        return buffer
    }

    /// The JSON written so far (a copy).
    @inlinable public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// True when nothing was written.
    @inlinable public var isEmpty: Bool { used == 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    @inlinable mutating func reserve(_ extra: Int) {
        if used &+ extra > capacity { grow(extra) }
    }

    @usableFromInline mutating func grow(_ extra: Int) {
        let newCapacity = Swift.max(capacity * 2, used + extra)
        guard let memory = realloc(base, newCapacity) else { fatalError("JSONWriter: out of memory") }
        base = memory.bindMemory(to: UInt8.self, capacity: newCapacity)
        capacity = newCapacity
    }

    @inline(__always)
    @inlinable mutating func append(_ byte: UInt8) {
        reserve(1)
        base[used] = byte
        used &+= 1
    }

    @inline(__always)
    @inlinable mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + used).copyMemory(from: source, byteCount: bytes.count)
        used &+= bytes.count
    }

    /// Writes a comma if a value or key follows another one.
    @inline(__always)
    @inlinable package mutating func separate() {
        guard used > 0 else { return }
        switch base[used &- 1] {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: "\n"):
            return
        default:
            append(UInt8(ascii: ","))
        }
    }

    // MARK: - Raw output

    /// Appends ASCII text as is (no comma, no escaping). Inlined: the literal's length is then a
    /// constant and the copy a few moves, not a call to `memcpy` (callgrind).
    @inline(__always)
    @inlinable public mutating func raw(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends one byte as is.
    @inline(__always)
    @inlinable public mutating func raw(byte: UInt8) {
        append(byte)
    }

    /// Removes everything written, keeping the capacity.
    @inlinable public mutating func removeAll() {
        used = 0
    }

    /// Removes what was written after the first `count` bytes (a plan that failed halfway).
    @inlinable public mutating func truncate(to count: Int) {
        used = Swift.max(0, Swift.min(used, count))
    }

    // MARK: - Structure

    @inline(__always)
    @inlinable public mutating func beginObject() {
        separate()
        append(UInt8(ascii: "{"))
    }

    @inline(__always)
    @inlinable public mutating func endObject() {
        append(UInt8(ascii: "}"))
    }

    @inline(__always)
    @inlinable public mutating func beginArray() {
        separate()
        append(UInt8(ascii: "["))
    }

    @inline(__always)
    @inlinable public mutating func endArray() {
        append(UInt8(ascii: "]"))
    }

    /// Whether a value or key written now needs a comma before it (see ``separate()``).
    @inline(__always)
    @inlinable var needsComma: Bool {
        guard used > 0 else { return false }
        switch base[used &- 1] {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: "\n"): return false
        default: return true
        }
    }

    /// Writes `"name":` for a name that needs no escaping (a Swift literal): one capacity check
    /// and one copy (keys are most of a plan's tokens).
    @inlinable public mutating func key(_ name: StaticString) {
        let length = name.utf8CodeUnitCount
        reserve(length &+ 4)
        if needsComma {
            base[used] = UInt8(ascii: ",")
            used &+= 1
        }
        base[used] = UInt8(ascii: "\"")
        (base + (used &+ 1)).update(from: name.utf8Start, count: length)
        base[used &+ 1 &+ length] = UInt8(ascii: "\"")
        base[used &+ 2 &+ length] = UInt8(ascii: ":")
        used &+= length &+ 3
    }

    /// Writes `"name":`, escaping the name. (Labelled so that a literal key picks the
    /// `StaticString` overload: Swift prefers `String` for a literal, which costs an escaping scan.)
    @inlinable public mutating func key(escaping name: String) {
        string(name)
        append(UInt8(ascii: ":"))
    }

    /// Writes `{ … }` with `body` writing the members.
    @inlinable public mutating func object(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginObject()
        try body(&self)
        endObject()
    }

    /// Writes `[ … ]` with `body` writing the elements.
    @inlinable public mutating func array(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginArray()
        try body(&self)
        endArray()
    }

    // MARK: - Scalars

    @inlinable public mutating func null() {
        separate()
        raw("null")
    }

    @inline(__always)
    @inlinable public mutating func bool(_ value: Bool) {
        separate()
        if value { raw("true") } else { raw("false") }
    }

    @inline(__always)
    @inlinable public mutating func int(_ value: Int) {
        separate()
        appendDecimal(value)
    }

    /// An integer with no comma before it (for hand-assembled fragments, see ``raw(_:)``).
    @inline(__always)
    @inlinable public mutating func rawInt(_ value: Int) {
        appendDecimal(value)
    }

    /// Writes a number: integral values with |value| < 2^53 as integers (`1200`, `-5`, and
    /// `-0.0` as `0`), others in the shortest form that reads back as the same double
    /// (`0.1`, `1e-07`, `1.7976931348623157e+308`). JSON has no NaN or infinity: those are
    /// written as `null` (a programming error; asserts in debug builds).
    @inlinable public mutating func number(_ value: Double) {
        separate()
        rawNumber(value)
    }

    /// ``number(_:)`` with no comma before it (for hand-assembled fragments, see ``raw(_:)``).
    @inlinable public mutating func rawNumber(_ value: Double) {
        // `abs(value) < 2^53` is false for NaN and infinities, and makes `Int(value)` safe.
        if abs(value) < 9_007_199_254_740_992 {
            let integer = Int(value)
            if Double(integer) == value {
                appendDecimal(integer)
                return
            }
        }
        guard value.isFinite else {
            assertionFailure("JSONWriter: non-finite number \(value)")
            raw("null")
            return
        }
        // Swift's description is the shortest round-trip form, and for finite values it is
        // valid JSON: digits, optional `.digits`, optional `e[+-]digits`, never `.5` or `5.`.
        var text = value.description
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Writes `[a,b,c,d]` with no comma before it, each number as ``rawNumber(_:)`` writes it (a
    /// rect: `[x,y,width,height]`). When all four are integers in 0..<100,000,000, as nearly
    /// every rect of a layout in points is (a 1M-row list of 50 pt reaches 50,000,000), with one
    /// capacity check for the whole array and no digit count: a jump's plan writes dozens of
    /// rects, and four `rawNumber` calls were ~330 instructions a rect (callgrind); past
    /// 1,000,000 (the first version's bound) they were 7 % of an NDJSON stream's thread on 1M
    /// rows (`perf`).
    @inlinable public mutating func rawQuad(_ a: Double, _ b: Double, _ c: Double, _ d: Double) {
        guard let i = Self.small(a), let j = Self.small(b), let k = Self.small(c), let l = Self.small(d) else {
            append(UInt8(ascii: "["))
            rawNumber(a)
            append(UInt8(ascii: ","))
            rawNumber(b)
            append(UInt8(ascii: ","))
            rawNumber(c)
            append(UInt8(ascii: ","))
            rawNumber(d)
            append(UInt8(ascii: "]"))
            return
        }
        // Four numbers of at most eight digits, three commas and two brackets. Written through a
        // local pointer: a store through `base` may alias this struct, so each one made the
        // compiler load `base` again.
        reserve(37)
        let out = base + used
        out[0] = UInt8(ascii: "[")
        var at = Self.writeSmall(i, to: out, at: 1)
        out[at] = UInt8(ascii: ",")
        at = Self.writeSmall(j, to: out, at: at &+ 1)
        out[at] = UInt8(ascii: ",")
        at = Self.writeSmall(k, to: out, at: at &+ 1)
        out[at] = UInt8(ascii: ",")
        at = Self.writeSmall(l, to: out, at: at &+ 1)
        out[at] = UInt8(ascii: "]")
        used &+= at &+ 1
    }

    /// `value` as an `Int` when it is an integer in 0..<100,000,000 (`-0.0` too, written `0` as
    /// ``rawNumber(_:)`` writes it); nil otherwise (NaN included).
    @inline(__always)
    @inlinable static func small(_ value: Double) -> Int? {
        guard value >= 0 && value < 100_000_000 else { return nil }
        let integer = Int(value)
        return Double(integer) == value ? integer : nil
    }

    /// Writes `value` (0..<100,000,000) at `base[at]`, where there is room for eight digits, and
    /// answers the position after it. Digits two at a time from the pair table.
    @inline(__always)
    @inlinable static func writeSmall(_ value: Int, to base: UnsafeMutablePointer<UInt8>, at: Int) -> Int {
        if value < 100 { return writeUpToTwo(value, to: base, at: at) }
        // The low pair, then what is above it (1 to 6 digits) written before it.
        let (high, low) = value.quotientAndRemainder(dividingBy: 100)
        let end: Int
        if high < 100 {
            end = writeUpToTwo(high, to: base, at: at)
        } else if high < 10_000 {
            let (top, middle) = high.quotientAndRemainder(dividingBy: 100)
            end = writePair(middle, to: base, at: writeUpToTwo(top, to: base, at: at))
        } else {
            let (top, rest) = high.quotientAndRemainder(dividingBy: 10_000)
            let (upper, lower) = rest.quotientAndRemainder(dividingBy: 100)
            end = writePair(lower, to: base, at: writePair(upper, to: base, at: writeUpToTwo(top, to: base, at: at)))
        }
        return writePair(low, to: base, at: end)
    }

    /// Writes `value` (0..<100) with one digit or two at `base[at]`; answers the position after.
    @inline(__always)
    @inlinable static func writeUpToTwo(_ value: Int, to base: UnsafeMutablePointer<UInt8>, at: Int) -> Int {
        guard value >= 10 else {
            base[at] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)
            return at &+ 1
        }
        return writePair(value, to: base, at: at)
    }

    /// Writes `value` (0..<100) as exactly two digits at `base[at]`; answers the position after.
    @inline(__always)
    @inlinable static func writePair(_ value: Int, to base: UnsafeMutablePointer<UInt8>, at: Int) -> Int {
        let pairs = Self.digitPairsLiteral.utf8Start
        base[at] = pairs[value &* 2]
        base[at &+ 1] = pairs[value &* 2 &+ 1]
        return at &+ 2
    }

    /// Writes a string, escaping `"`, `\` and control characters (`\n`, `\t`, … or `\u00XX`).
    @inlinable public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a string from UTF-8 bytes, which must be valid UTF-8 (e.g. from
    /// ``JSONReader/readStringBytes(into:)``); only the escaping is done here.
    @inlinable public mutating func string(utf8 value: UnsafeRawBufferPointer) {
        // Most strings (ids, names) need no escaping: one capacity check, then one pass that
        // checks and copies each byte (ids are a few bytes: a `memcpy` call and a separate scan
        // cost more than the bytes, callgrind). `used` moves only at the end, so a byte that
        // needs an escape hands the string to the slow path with nothing written.
        let n = value.count
        reserve(n &+ 3)
        var at = used
        if needsComma {
            base[at] = UInt8(ascii: ",")
            at &+= 1
        }
        base[at] = UInt8(ascii: "\"")
        at &+= 1
        var i = 0
        while i < n {
            let byte = value[i]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                stringEscaping(value)
                return
            }
            base[at &+ i] = byte
            i &+= 1
        }
        base[at &+ n] = UInt8(ascii: "\"")
        used = at &+ n &+ 1
    }

    /// ``string(utf8:)`` for a string with bytes to escape (kept out of line, so the common path
    /// stays small).
    @inline(never)
    @inlinable mutating func stringEscaping(_ value: UnsafeRawBufferPointer) {
        separate()
        append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        while i < value.count {
            let byte = value[i]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if runStart < i {
                append(UnsafeRawBufferPointer(rebasing: value[runStart..<i]))
            }
            appendEscape(byte)
            i += 1
            runStart = i
        }
        if runStart < value.count {
            append(UnsafeRawBufferPointer(rebasing: value[runStart...]))
        }
        append(UInt8(ascii: "\""))
    }

    /// Writes a string from UTF-8 bytes (see ``string(utf8:)-(UnsafeRawBufferPointer)``).
    @inlinable public mutating func string(utf8 value: [UInt8]) {
        value.withUnsafeBytes { string(utf8: $0) }
    }

    @inlinable mutating func appendEscape(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): append(UInt8(ascii: "\\"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0D: append(UInt8(ascii: "r"))
        case 0x09: append(UInt8(ascii: "t"))
        case 0x08: append(UInt8(ascii: "b"))
        case 0x0C: append(UInt8(ascii: "f"))
        default:
            let hex: StaticString = "0123456789abcdef"
            let digits = hex.utf8Start
            append(UInt8(ascii: "u"))
            append(UInt8(ascii: "0"))
            append(UInt8(ascii: "0"))
            append(digits[Int(byte >> 4)])
            append(digits[Int(byte & 0xF)])
        }
    }

    /// Appends the decimal digits of `value` without going through `String`: written in place,
    /// two digits per division.
    @inlinable mutating func appendDecimal(_ value: Int) {
        if value >= 0 && value < 10 {
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        if value >= 10 && value < 100 {
            // Two digits (view handles, small sizes): one pair, no digit count.
            reserve(2)
            let pairs = Self.digitPairsLiteral.utf8Start
            base[used] = pairs[value &* 2]
            base[used &+ 1] = pairs[value &* 2 &+ 1]
            used &+= 2
            return
        }
        // A sign and 20 digits hold any Int.
        reserve(21)
        if value < 0 {
            base[used] = UInt8(ascii: "-")
            used &+= 1
        }
        var magnitude = value.magnitude
        let end = used &+ Self.digitCount(magnitude)
        var at = end
        // A local literal: the `static let` was read through `swift_once` on every number.
        let pairs = Self.digitPairsLiteral.utf8Start
        while magnitude >= 100 {
            let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 100)
            at &-= 2
            base[at] = pairs[Int(remainder) &* 2]
            base[at &+ 1] = pairs[Int(remainder) &* 2 &+ 1]
            magnitude = quotient
        }
        if magnitude >= 10 {
            at &-= 2
            base[at] = pairs[Int(magnitude) &* 2]
            base[at &+ 1] = pairs[Int(magnitude) &* 2 &+ 1]
        } else {
            at &-= 1
            base[at] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
        used = end
    }

    /// "00" through "99", for two digits per division. A computed property returning a literal, so
    /// reading it is a constant address (a stored `static let` went through `swift_once` per number).
    @inline(__always)
    @inlinable static var digitPairsLiteral: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// The number of decimal digits of `value` (at least 1).
    @inline(__always)
    @inlinable static func digitCount(_ value: UInt) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10_000 {
            rest /= 10_000
            digits &+= 4
        }
        if rest >= 1000 { return digits &+ 3 }
        if rest >= 100 { return digits &+ 2 }
        if rest >= 10 { return digits &+ 1 }
        return digits
    }
}
