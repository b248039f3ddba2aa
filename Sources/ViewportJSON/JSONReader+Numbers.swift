#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number token, validated against the JSON grammar.
struct ScannedNumber {
    var start: Int
    var end: Int
    var negative: Bool
    /// The first (up to 19) significant digits, as an integer.
    var mantissa: UInt64
    /// Significant digits seen (may exceed 19; then `mantissa` is truncated).
    var significantDigits: Int
    /// Decimal exponent to apply to `mantissa` (explicit exponent minus fraction digits kept),
    /// clamped far beyond the range of `Double`.
    var exponent: Int
    /// No fraction and no exponent.
    var isPlainInteger: Bool
}

/// Exactly representable powers of ten, for the fast path.
private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

extension JSONReader {
    /// Reads a finite number. Integers and decimals of up to 15 significant digits with small
    /// exponents are converted exactly without libc; everything else goes through `strtod`
    /// (correctly rounded). Out-of-range numbers (`1e400`) are a ``JSONError/Kind/nonFinite``
    /// error.
    public mutating func readDouble() throws -> Double {
        skipWhitespace()
        let number = try scanNumber()
        return try doubleValue(of: number)
    }

    /// Reads an integer in `Int` range. Integral values written with a fraction or an exponent
    /// (`8.0`, `1e3`) are accepted; `1.5` or `1e30` are type errors.
    public mutating func readInt() throws -> Int {
        skipWhitespace()
        let number = try scanNumber()
        if number.isPlainInteger && number.significantDigits <= 18 {
            let value = Int(number.mantissa)
            return number.negative ? -value : value
        }
        let text = self.text(of: number)
        if number.significantDigits <= 19 {
            // Every digit is in `mantissa`: the value is integral, and in range, exactly when the
            // decimal arithmetic says so (`9007199254740993.0` is an integer a double would round;
            // a plain 19-digit integer is checked against `Int`'s range here too).
            switch Self.exactInteger(number) {
            case .value(let value): return value
            case .notIntegral: throw JSONError(.type, "expected an integer, got \(text)", offset: number.start)
            case .outOfRange: throw JSONError(.type, "integer \(text) is out of range", offset: number.start)
            }
        }
        if number.exponent >= -400 {
            let double = try doubleValue(of: number)
            if double.rounded() == double {
                // Beyond 2^53 a double cannot tell neighbouring integers apart: only accept
                // integral values it represents exactly.
                if abs(double) < 9_007_199_254_740_992, let value = Int(exactly: double) {
                    return value
                }
            } else {
                throw JSONError(.type, "expected an integer, got \(text)", offset: number.start)
            }
        }
        throw JSONError(.type, "integer \(text) is out of range", offset: number.start)
    }

    private enum ExactInteger { case value(Int), notIntegral, outOfRange }

    /// `mantissa · 10^exponent` as an `Int`, in decimal arithmetic (all significant digits are in
    /// `mantissa`): not integral when a nonzero digit is after the point, out of range past `Int`.
    private static func exactInteger(_ number: ScannedNumber) -> ExactInteger {
        var magnitude = number.mantissa
        if magnitude == 0 { return .value(0) }
        if number.exponent < 0 {
            // 10^19 is above any 19-digit mantissa: a larger divisor leaves a fraction.
            guard number.exponent >= -19 else { return .notIntegral }
            var divisor: UInt64 = 1
            for _ in 0..<(-number.exponent) { divisor &*= 10 }
            guard magnitude % divisor == 0 else { return .notIntegral }
            magnitude /= divisor
        } else {
            for _ in 0..<min(number.exponent, 20) {
                let (product, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                if overflow { return .outOfRange }
                magnitude = product
            }
        }
        let limit: UInt64 = number.negative ? UInt64(Int.max) + 1 : UInt64(Int.max)
        guard magnitude <= limit else { return .outOfRange }
        return .value(number.negative ? Int(truncatingIfNeeded: 0 &- magnitude) : Int(magnitude))
    }

    /// Reads a number array of exactly `count` elements, calling `store` with each index and
    /// value. Any other length is a type error `expected an array of 4 numbers, got 3`.
    public mutating func readDoubles(count: Int, _ store: (Int, Double) -> Void) throws {
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "[") else {
            throw mismatch(expected: "an array of \(count) numbers")
        }
        let start = position
        var seen = 0
        try readArray { reader, index in
            if index < count {
                store(index, try reader.readDouble())
            } else {
                try reader.skipValue()
            }
            seen = index + 1
        }
        guard seen == count else {
            throw JSONError(.type, "expected an array of \(count) numbers, got \(seen)", offset: start)
        }
    }

    /// Reads a number array of exactly `count` elements.
    public mutating func readDoubles(count: Int) throws -> [Double] {
        var values = [Double](repeating: 0, count: count)
        try readDoubles(count: count) { values[$0] = $1 }
        return values
    }

    /// Reads `[a, b]` (a point or a size) without allocating.
    public mutating func readDoublePair() throws -> (Double, Double) {
        var a = 0.0
        var b = 0.0
        try readDoubles(count: 2) { index, value in
            if index == 0 { a = value } else { b = value }
        }
        return (a, b)
    }

    /// Reads `[a, b, c, d]` (a rect or insets) without allocating.
    public mutating func readDoubleQuad() throws -> (Double, Double, Double, Double) {
        var a = 0.0
        var b = 0.0
        var c = 0.0
        var d = 0.0
        try readDoubles(count: 4) { index, value in
            switch index {
            case 0: a = value
            case 1: b = value
            case 2: c = value
            default: d = value
            }
        }
        return (a, b, c, d)
    }

    // MARK: - Scanning and conversion

    func text(of number: ScannedNumber) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: buffer[number.start..<number.end]), as: UTF8.self)
    }

    /// Scans a number at the current position (after whitespace), validating the grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    @inline(__always)
    mutating func scanNumber() throws -> ScannedNumber {
        let count = buffer.count
        let start = position
        var i = position
        var negative = false
        if i < count && buffer[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < count, buffer[i] &- UInt8(ascii: "0") <= 9 else {
            if negative {
                throw syntaxError("expected a digit after '-'", at: i)
            }
            throw mismatch(expected: "a number")
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var isPlainInteger = true
        if buffer[i] == UInt8(ascii: "0") {
            i += 1
            if i < count && buffer[i] &- UInt8(ascii: "0") <= 9 {
                throw syntaxError("leading zero in number", at: start)
            }
        } else {
            while i < count {
                let digit = buffer[i] &- UInt8(ascii: "0")
                guard digit <= 9 else { break }
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(digit)
                } else {
                    exponent += 1
                }
                significant += 1
                i += 1
            }
        }
        if i < count && buffer[i] == UInt8(ascii: ".") {
            isPlainInteger = false
            i += 1
            let fractionStart = i
            while i < count {
                let digit = buffer[i] &- UInt8(ascii: "0")
                guard digit <= 9 else { break }
                if significant == 0 && digit == 0 {
                    exponent -= 1  // leading zeros of 0.000123
                } else if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(digit)
                    exponent -= 1
                    significant += 1
                } else {
                    significant += 1
                }
                i += 1
            }
            guard i > fractionStart else {
                throw syntaxError("expected a digit after '.'", at: i)
            }
        }
        if i < count && (buffer[i] == UInt8(ascii: "e") || buffer[i] == UInt8(ascii: "E")) {
            isPlainInteger = false
            i += 1
            var exponentNegative = false
            if i < count && (buffer[i] == UInt8(ascii: "+") || buffer[i] == UInt8(ascii: "-")) {
                exponentNegative = buffer[i] == UInt8(ascii: "-")
                i += 1
            }
            let exponentStart = i
            var explicit = 0
            while i < count {
                let digit = buffer[i] &- UInt8(ascii: "0")
                guard digit <= 9 else { break }
                if explicit < 1_000_000 {
                    explicit = explicit * 10 + Int(digit)
                }
                i += 1
            }
            guard i > exponentStart else {
                throw syntaxError("expected a digit in the exponent", at: i)
            }
            exponent += exponentNegative ? -explicit : explicit
        }
        // A number must end at a delimiter: `1x` or `01` are not numbers.
        if i < count {
            switch buffer[i] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "."), UInt8(ascii: "+"), UInt8(ascii: "-"):
                throw syntaxError("invalid number", at: start)
            default:
                break
            }
        }
        position = i
        return ScannedNumber(
            start: start, end: i, negative: negative, mantissa: mantissa,
            significantDigits: significant, exponent: exponent, isPlainInteger: isPlainInteger)
    }

    func doubleValue(of number: ScannedNumber) throws -> Double {
        // Clinger's fast path: the mantissa and the power of ten are exact doubles, so a single
        // multiplication or division is correctly rounded.
        if number.significantDigits <= 15 && number.exponent >= -22 && number.exponent <= 22 {
            var value = Double(number.mantissa)
            if number.exponent < 0 {
                value /= powersOfTen[-number.exponent]
            } else {
                value *= powersOfTen[number.exponent]
            }
            return number.negative ? -value : value
        }
        if number.mantissa == 0 {
            return number.negative ? -0.0 : 0.0
        }
        let value = slowDouble(number)
        guard value.isFinite else {
            throw JSONError(
                .nonFinite, "number \(text(of: number)) is out of range (not a finite double)",
                offset: number.start)
        }
        return value
    }

    /// `strtod` on a NUL-terminated copy of the token.
    func slowDouble(_ number: ScannedNumber) -> Double {
        let length = number.end - number.start
        let parsed = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { copy -> Double? in
            guard let base = copy.baseAddress else { return nil }
            for j in 0..<length {
                copy[j] = CChar(bitPattern: buffer[number.start + j])
            }
            copy[length] = 0
            var end: UnsafeMutablePointer<CChar>? = nil
            let value = strtod(base, &end)
            // A locale with another decimal point stops strtod early: fall back below.
            guard end == base + length else { return nil }
            return value
        }
        if let parsed {
            return parsed
        }
        return Double(text(of: number)) ?? .nan
    }
}
