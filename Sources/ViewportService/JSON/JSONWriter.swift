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
/// (`viewport-bench 10 service-load`). So the writer is noncopyable: it owns its buffer.
public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    /// Bytes written.
    public private(set) var count = 0
    private var capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = Swift.max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The JSON written so far (a copy).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// True when nothing was written.
    public var isEmpty: Bool { count == 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let newCapacity = Swift.max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    /// Writes a comma if a value or key follows another one.
    @inline(__always)
    mutating func separate() {
        guard count > 0 else { return }
        switch base[count &- 1] {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: "\n"):
            return
        default:
            append(UInt8(ascii: ","))
        }
    }

    // MARK: - Raw output

    /// Appends ASCII text as is (no comma, no escaping).
    public mutating func raw(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends one byte as is.
    public mutating func raw(byte: UInt8) {
        append(byte)
    }

    /// Removes everything written, keeping the capacity.
    public mutating func removeAll() {
        count = 0
    }

    // MARK: - Structure

    public mutating func beginObject() {
        separate()
        append(UInt8(ascii: "{"))
    }

    public mutating func endObject() {
        append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separate()
        append(UInt8(ascii: "["))
    }

    public mutating func endArray() {
        append(UInt8(ascii: "]"))
    }

    /// Writes `"name":` for a name that needs no escaping (a Swift literal).
    public mutating func key(_ name: StaticString) {
        separate()
        append(UInt8(ascii: "\""))
        raw(name)
        append(UInt8(ascii: "\""))
        append(UInt8(ascii: ":"))
    }

    /// Writes `"name":`, escaping the name. (Labelled so that a literal key picks the
    /// `StaticString` overload: Swift prefers `String` for a literal, which costs an escaping scan.)
    public mutating func key(escaping name: String) {
        string(name)
        append(UInt8(ascii: ":"))
    }

    /// Writes `{ … }` with `body` writing the members.
    public mutating func object(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginObject()
        try body(&self)
        endObject()
    }

    /// Writes `[ … ]` with `body` writing the elements.
    public mutating func array(_ body: (inout JSONWriter) throws -> Void) rethrows {
        beginArray()
        try body(&self)
        endArray()
    }

    // MARK: - Scalars

    public mutating func null() {
        separate()
        raw("null")
    }

    public mutating func bool(_ value: Bool) {
        separate()
        if value { raw("true") } else { raw("false") }
    }

    public mutating func int(_ value: Int) {
        separate()
        appendDecimal(value)
    }

    /// Writes a number: integral values with |value| < 2^53 as integers (`1200`, `-5`, and
    /// `-0.0` as `0`), others in the shortest form that reads back as the same double
    /// (`0.1`, `1e-07`, `1.7976931348623157e+308`). JSON has no NaN or infinity: those are
    /// written as `null` (a programming error; asserts in debug builds).
    public mutating func number(_ value: Double) {
        separate()
        if value.isFinite, abs(value) < 9_007_199_254_740_992, value.rounded(.towardZero) == value {
            appendDecimal(Int(value))
            return
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

    /// Writes a string, escaping `"`, `\` and control characters (`\n`, `\t`, … or `\u00XX`).
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a string from UTF-8 bytes, which must be valid UTF-8 (e.g. from
    /// ``JSONReader/readStringBytes(into:)``); only the escaping is done here.
    public mutating func string(utf8 value: UnsafeRawBufferPointer) {
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
    public mutating func string(utf8 value: [UInt8]) {
        value.withUnsafeBytes { string(utf8: $0) }
    }

    private mutating func appendEscape(_ byte: UInt8) {
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

    /// Appends the decimal digits of `value` without going through `String`.
    private mutating func appendDecimal(_ value: Int) {
        if value >= 0 && value < 10 {
            append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var magnitude = value.magnitude
        if value < 0 {
            append(UInt8(ascii: "-"))
        }
        // 20 digits hold UInt64.max.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: digits[index..<20])))
        }
    }
}
