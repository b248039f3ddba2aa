/// An independent reading of RFC 8259, as plain as can be: a recursive-descent recognizer that
/// also collects every number's text and every string's decoded value in document order (keys
/// and values alike). No depth limit, no duplicate-key rule, no UTF-8 check (the caller checks
/// the whole input).
struct StrictJSON {
    let b: [UInt8]
    var i = 0
    var numbers: [String] = []
    var strings: [String] = []

    /// The numbers' texts and the strings, or nil when `bytes` is not one JSON text.
    static func parse(_ bytes: [UInt8]) -> (numbers: [String], strings: [String])? {
        var p = StrictJSON(b: bytes)
        p.whitespace()
        guard p.value() else { return nil }
        p.whitespace()
        return p.i == bytes.count ? (p.numbers, p.strings) : nil
    }

    private var current: UInt8? { i < b.count ? b[i] : nil }

    private mutating func whitespace() {
        while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
    }

    private mutating func take(_ c: UInt8) -> Bool {
        guard current == c else { return false }
        i += 1
        return true
    }

    private mutating func value() -> Bool {
        switch current {
        case UInt8(ascii: "{")?: return object()
        case UInt8(ascii: "[")?: return array()
        case UInt8(ascii: "\"")?: return string()
        case UInt8(ascii: "t")?: return literal("true")
        case UInt8(ascii: "f")?: return literal("false")
        case UInt8(ascii: "n")?: return literal("null")
        case let c? where c == UInt8(ascii: "-") || (0x30...0x39).contains(c): return number()
        default: return false
        }
    }

    private mutating func literal(_ word: String) -> Bool {
        for c in word.utf8 where !take(c) { return false }
        return true
    }

    private mutating func object() -> Bool {
        i += 1
        whitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            whitespace()
            guard current == UInt8(ascii: "\""), string() else { return false }
            whitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            whitespace()
            guard value() else { return false }
            whitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    private mutating func array() -> Bool {
        i += 1
        whitespace()
        if take(UInt8(ascii: "]")) { return true }
        while true {
            whitespace()
            guard value() else { return false }
            whitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]"))
        }
    }

    private mutating func digits() -> Int {
        let start = i
        while let c = current, (0x30...0x39).contains(c) { i += 1 }
        return i - start
    }

    private mutating func number() -> Bool {
        let start = i
        _ = take(UInt8(ascii: "-"))
        if take(UInt8(ascii: "0")) {
            // no more integer digits after a leading zero
        } else if digits() == 0 {
            return false
        }
        if take(UInt8(ascii: ".")), digits() == 0 { return false }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            if digits() == 0 { return false }
        }
        numbers.append(String(decoding: b[start..<i], as: UTF8.self))
        return true
    }

    private mutating func hex4() -> UInt32? {
        guard i + 4 <= b.count else { return nil }
        var v: UInt32 = 0
        for c in b[i..<(i + 4)] {
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: return nil
            }
            v = v << 4 | d
        }
        i += 4
        return v
    }

    private mutating func string() -> Bool {
        i += 1
        var out = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            out.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw = []
        }
        while let c = current {
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                flush()
                strings.append(String(out))
                return true
            case 0x00..<0x20:
                return false
            case UInt8(ascii: "\\"):
                flush()
                guard let e = current else { return false }
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(Unicode.Scalar(e))
                case UInt8(ascii: "b"): out.append("\u{08}")
                case UInt8(ascii: "f"): out.append("\u{0C}")
                case UInt8(ascii: "n"): out.append("\n")
                case UInt8(ascii: "r"): out.append("\r")
                case UInt8(ascii: "t"): out.append("\t")
                case UInt8(ascii: "u"):
                    guard let u = hex4() else { return false }
                    if (0xD800..<0xDC00).contains(u), take(UInt8(ascii: "\\")) {
                        guard take(UInt8(ascii: "u")), let low = hex4() else { return false }
                        if (0xDC00..<0xE000).contains(low) {
                            out.append(Unicode.Scalar(0x10000 + (u - 0xD800) << 10 + (low - 0xDC00))!)
                        } else {
                            // A lone high surrogate: the reader refuses it (kind invalidUTF8).
                            out.append("\u{FFFD}")
                            if let scalar = Unicode.Scalar(low) { out.append(scalar) } else { out.append("\u{FFFD}") }
                        }
                    } else {
                        out.append(Unicode.Scalar(u) ?? "\u{FFFD}")
                    }
                default: return false
                }
            default:
                raw.append(c)
            }
        }
        return false
    }
}
