extension JSONReader {
    /// Reads a string: validates UTF-8 strictly (no overlongs, surrogates or bytes above
    /// U+10FFFF), decodes every escape including surrogate pairs, rejects raw control
    /// characters and lone surrogate escapes.
    public mutating func readString() throws -> String {
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
            throw mismatch(expected: "a string")
        }
        let start = position + 1
        if let end = try scanPlainString(from: start) {
            position = end + 1
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)
        }
        var decoded = takeScratch()
        position = try decodeEscapedString(from: start, into: &decoded)
        defer { scratch = decoded }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Reads a string and appends its validated, unescaped UTF-8 bytes to `bytes`, without
    /// creating a `String`. Returns the number of bytes appended.
    @discardableResult
    public mutating func readStringBytes(into bytes: inout [UInt8]) throws -> Int {
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
            throw mismatch(expected: "a string")
        }
        let before = bytes.count
        let start = position + 1
        if let end = try scanPlainString(from: start) {
            position = end + 1
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<end]))
        } else {
            position = try decodeEscapedString(from: start, into: &bytes)
        }
        return bytes.count - before
    }

    /// Reads a string and calls `body` with its validated, unescaped UTF-8 bytes, without
    /// copying when it has no escapes. The bytes are only valid inside `body`.
    public mutating func withStringBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
            throw mismatch(expected: "a string")
        }
        let start = position + 1
        if let end = try scanPlainString(from: start) {
            position = end + 1
            return try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[start..<end])))
        }
        var decoded = takeScratch()
        position = try decodeEscapedString(from: start, into: &decoded)
        defer { scratch = decoded }
        return try decoded.withUnsafeBytes(body)
    }

    /// Reads a key (the reader is at its opening quote).
    mutating func readKey() throws -> JSONKey {
        let start = position + 1
        if let end = try scanPlainString(from: start) {
            position = end + 1
            return JSONKey(raw: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[start..<end])))
        }
        var decoded: [UInt8] = []
        position = try decodeEscapedString(from: start, into: &decoded)
        return JSONKey(decoded: decoded)
    }

    mutating func skipString() throws {
        let start = position + 1
        if let end = try scanPlainString(from: start) {
            position = end + 1
            return
        }
        var decoded = takeScratch()
        position = try decodeEscapedString(from: start, into: &decoded)
        scratch = decoded
    }

    /// Moves the scratch buffer out (emptied, capacity kept) so it can be passed `inout`
    /// alongside `self`; callers put it back.
    mutating func takeScratch() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &scratch)
        taken.removeAll(keepingCapacity: true)
        return taken
    }

    /// Scans string content from `start` (after the opening quote), validating it. Returns the
    /// index of the closing quote, or nil if an escape is found first (the caller then decodes).
    @inline(__always)
    func scanPlainString(from start: Int) throws -> Int? {
        var i = start
        let count = buffer.count
        while i < count {
            let byte = buffer[i]
            if byte == UInt8(ascii: "\"") {
                return i
            }
            if byte == UInt8(ascii: "\\") {
                return nil
            }
            if byte < 0x20 {
                throw controlCharacterError(byte, at: i)
            }
            if byte < 0x80 {
                i += 1
            } else {
                i = try validateUTF8Sequence(at: i)
            }
        }
        throw syntaxError("unterminated string", at: start - 1)
    }

    func controlCharacterError(_ byte: UInt8, at index: Int) -> JSONError {
        syntaxError(
            "unescaped control character U+00" + (byte < 0x10 ? "0" : "")
                + String(byte, radix: 16, uppercase: true) + " in string", at: index)
    }

    /// Validates one multi-byte UTF-8 sequence starting at `index` (Unicode table 3-7) and
    /// returns the index after it.
    @inline(__always)
    func validateUTF8Sequence(at index: Int) throws -> Int {
        let count = buffer.count
        let lead = buffer[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default:
            throw invalidUTF8(at: index)
        }
        guard index + length <= count else {
            throw invalidUTF8(at: index)
        }
        let second = buffer[index + 1]
        guard second >= lower && second <= upper else {
            throw invalidUTF8(at: index)
        }
        var i = index + 2
        while i < index + length {
            guard buffer[i] & 0xC0 == 0x80 else {
                throw invalidUTF8(at: index)
            }
            i += 1
        }
        return index + length
    }

    func invalidUTF8(at index: Int) -> JSONError {
        var hex = ""
        var i = index
        while i < buffer.count && i < index + 4 {
            if i > index && buffer[i] & 0xC0 != 0x80 { break }
            let byte = buffer[i]
            hex += (hex.isEmpty ? "" : " ") + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            i += 1
        }
        return JSONError(.invalidUTF8, "invalid UTF-8 (\(hex)) in string (at byte \(index))", offset: index)
    }

    /// Decodes string content from `start` (after the opening quote) into `output`; returns the
    /// index after the closing quote.
    func decodeEscapedString(from start: Int, into output: inout [UInt8]) throws -> Int {
        var i = start
        var runStart = start
        let count = buffer.count
        while i < count {
            let byte = buffer[i]
            if byte == UInt8(ascii: "\"") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[runStart..<i]))
                return i + 1
            }
            if byte < 0x20 {
                throw controlCharacterError(byte, at: i)
            }
            if byte >= 0x80 {
                i = try validateUTF8Sequence(at: i)
                continue
            }
            if byte != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[runStart..<i]))
            guard i + 1 < count else { break }
            let escape = buffer[i + 1]
            i += 2
            switch escape {
            case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): output.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                let escapeStart = i - 2
                var scalar = try hex4(at: i)
                i += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard i + 1 < count, buffer[i] == UInt8(ascii: "\\"), buffer[i + 1] == UInt8(ascii: "u")
                    else {
                        throw loneSurrogate(scalar, at: escapeStart)
                    }
                    let low = try hex4(at: i + 2)
                    guard low >= 0xDC00 && low <= 0xDFFF else {
                        throw loneSurrogate(scalar, at: escapeStart)
                    }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                    throw loneSurrogate(scalar, at: escapeStart)
                }
                appendUTF8(scalar, to: &output)
            default:
                throw syntaxError("invalid escape '\\\(Character(Unicode.Scalar(escape)))' in string", at: i - 2)
            }
            runStart = i
        }
        throw syntaxError("unterminated string", at: start - 1)
    }

    func hex4(at index: Int) throws -> UInt32 {
        guard index + 4 <= buffer.count else {
            throw syntaxError("truncated \\u escape", at: index - 2)
        }
        var value: UInt32 = 0
        for j in 0..<4 {
            let byte = buffer[index + j]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw syntaxError("invalid \\u escape", at: index - 2)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    func loneSurrogate(_ value: UInt32, at index: Int) -> JSONError {
        JSONError(
            .invalidUTF8,
            "lone surrogate \\u\(String(value, radix: 16, uppercase: true)) in string (at byte \(index))",
            offset: index)
    }

    func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | (scalar >> 6)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | (scalar >> 12)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            output.append(UInt8(0xF0 | (scalar >> 18)))
            output.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }
}
