/// A strict (RFC 8259) pull parser over UTF-8 bytes for hand-written decoders.
///
/// ```swift
/// var offset: (Double, Double)?
/// var seq: Int?
/// try JSONReader.read(body) { r in
///     try r.readObject { r, key in
///         switch key {
///         case "offset": offset = try r.readDoublePair()
///         case "seq": seq = try r.readInt()
///         default: throw r.unknownField(key)
///         }
///     }
///     try r.finish()
/// }
/// guard let offset else { throw JSONReader.missingField("offset") }
/// ```
///
/// Design notes:
/// - No allocation on the happy path for keys, numbers or ASCII/unescaped strings; numbers are
///   parsed directly (exact fast path for ≤ 15-digit decimals) and otherwise with `strtod`,
///   which rounds correctly.
/// - Error paths (`items[3].rect[2]`) are built while the error propagates out of the
///   `readObject`/`readArray` closures, so tracking costs nothing when the input is valid.
/// - **Duplicate keys are rejected by the reader**, in every object it reads or skips (each
///   object's keys are remembered in a scratch buffer reused across objects), so decoders need
///   not track them and maps with arbitrary keys (`perReuse`) are covered too.
/// - Nesting is limited (``maxDepth``, 64 by default): deeper input is a ``JSONError/Kind/tooDeep``
///   error, never a stack overflow.
/// - A member or element whose closure reads nothing is skipped (validated, not decoded).
///
/// The reader does not own its input: it must outlive the reader (see ``read(_:maxDepth:_:)``).
public struct JSONReader {
    @usableFromInline let buffer: UnsafeBufferPointer<UInt8>
    /// Index of the next unread byte.
    public package(set) var position: Int = 0
    /// Maximum nesting of arrays and objects.
    public let maxDepth: Int
    var depth = 0
    /// Canonical bytes of the keys of the objects being read, for duplicate detection.
    var keyBytes: [UInt8] = []
    /// Pairs, one per key of the objects being read: `(start, end)` into `keyBytes`, or
    /// `(~offset, count)` into the input (see `withStoredKey`).
    var keyRanges: [Int] = []
    /// Scratch for decoding escaped strings.
    var scratch: [UInt8] = []

    /// A reader over `bytes`, which must stay valid while the reader is used.
    public init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 64) {
        self.buffer = bytes.assumingMemoryBound(to: UInt8.self)
        self.maxDepth = maxDepth
    }

    /// A reader over `bytes`, which must stay valid while the reader is used.
    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) {
        self.buffer = bytes
        self.maxDepth = maxDepth
    }

    /// Runs `body` with a reader over `bytes`.
    public static func read<R>(
        _ bytes: [UInt8], maxDepth: Int = 64, _ body: (inout JSONReader) throws -> R
    ) throws -> R {
        try bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer, maxDepth: maxDepth)
            return try body(&reader)
        }
    }

    /// Runs `body` with a reader over the UTF-8 of `text`.
    public static func read<R>(
        _ text: String, maxDepth: Int = 64, _ body: (inout JSONReader) throws -> R
    ) throws -> R {
        var text = text
        return try text.withUTF8 { buffer in
            var reader = JSONReader(buffer, maxDepth: maxDepth)
            return try body(&reader)
        }
    }

    /// Whether only whitespace remains.
    public mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return position == buffer.count
    }

    /// Checks that only whitespace remains after the value(s) read.
    public mutating func finish() throws {
        skipWhitespace()
        if position != buffer.count {
            throw syntaxError("unexpected \(describeByte(at: position)) after the JSON value")
        }
    }

    // MARK: - Errors for decoders

    /// An unknown-field error for `key` of the object being read (path: the object).
    public func unknownField(_ key: JSONKey) -> JSONError {
        var error = JSONError(.unknownField, "unknown field \(JSONError.quoted(key.string))")
        error.belongsToContainer = true
        return error
    }

    /// An unknown-field error for `key` of the object being read, naming the object:
    /// `unknown field "ofset" at viewport update`.
    public func unknownField(_ key: JSONKey, in context: String) -> JSONError {
        var error = JSONError(
            .unknownField, "unknown field \(JSONError.quoted(key.string)) at \(context)")
        error.belongsToContainer = true
        return error
    }

    /// A missing-field error: throw it after `readObject` returns; its path is the object's.
    public static func missingField(_ name: String) -> JSONError {
        JSONError(.missingField, "missing field \(JSONError.quoted(name))")
    }

    /// A missing-field error: throw it after `readObject` returns; its path is the object's.
    public func missingField(_ name: String) -> JSONError {
        Self.missingField(name)
    }

    /// A semantic (422) error at the current path: throw it from inside a `readObject` or
    /// `readArray` closure to name the member, e.g. `r.valueError("must be ≥ 0")` while
    /// reading `buffer`.
    public func valueError(_ message: String) -> JSONError {
        JSONError(.value, message)
    }

    /// A type (400) error at the current path, e.g. a value outside an enumeration:
    /// `r.typeError("expected one of \"x\", \"y\", got \"z\"")`.
    public func typeError(_ message: String) -> JSONError {
        JSONError(.type, message, offset: position)
    }

    /// `expected <what>, got <kind of the next value>`.
    public mutating func typeMismatch(expected what: String) -> JSONError {
        let got = peekKind()?.phrase ?? describeByte(at: position)
        return JSONError(.type, "expected \(what), got \(got)", offset: position)
    }

    func syntaxError(_ message: String, at offset: Int? = nil) -> JSONError {
        let at = offset ?? position
        return JSONError(.syntax, "\(message) (at byte \(at))", offset: at)
    }

    func describeByte(at index: Int) -> String {
        guard index < buffer.count else { return "end of input" }
        let byte = buffer[index]
        if byte >= 0x21 && byte < 0x7F {
            return "'\(Character(Unicode.Scalar(byte)))'"
        }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    // MARK: - Structure

    @inline(__always)
    package mutating func skipWhitespace() {
        while position < buffer.count {
            let byte = buffer[position]
            guard byte <= 0x20, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else {
                return
            }
            position += 1
        }
    }

    /// The kind of the next value, or nil when no value can start here (the next read throws
    /// a syntax error).
    public mutating func peekKind() -> JSONValueKind? {
        skipWhitespace()
        guard position < buffer.count else { return nil }
        switch buffer[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: return nil
        }
    }

    /// Throws the right error when the next value is not `kind`: a syntax error when no value
    /// starts here, a type error otherwise.
    func mismatch(expected what: String) -> JSONError {
        var copy = self
        if copy.peekKind() == nil {
            return syntaxError(
                copy.position < buffer.count
                    ? "expected a value, got \(describeByte(at: copy.position))"
                    : "unexpected end of input, expected a value",
                at: copy.position)
        }
        return copy.typeMismatch(expected: what)
    }

    @inline(__always)
    mutating func enterContainer() throws {
        depth += 1
        if depth > maxDepth {
            throw JSONError(
                .tooDeep, "nesting deeper than \(maxDepth) levels", offset: position)
        }
    }

    /// Reads an object, calling `body` once per member with the member's key; `body` reads the
    /// value (or reads nothing to skip it). Duplicate keys throw ``JSONError/Kind/duplicateField``.
    @inline(__always)
    public mutating func readObject(_ body: (inout JSONReader, JSONKey) throws -> Void) throws {
        try readObject(fields: []) { r, _, key in try body(&r, key) }
    }

    /// Reads an object like ``readObject(_:)``, also passing `body` the position of the key in
    /// `fields` (-1 for any other key). A repeated field is found by a bit per field instead of
    /// by comparing the key with the object's earlier keys (the check was ~5 % of a 1M-item
    /// layout's POST, item objects being three known keys each); other keys are checked as
    /// always. At most 64 fields.
    public mutating func readObject(fields: [StaticString], _ body: (inout JSONReader, Int, JSONKey) throws -> Void) throws {
        assert(fields.count <= 64, "readObject(fields:) tracks at most 64 fields")
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "{") else {
            throw mismatch(expected: "an object")
        }
        try enterContainer()
        position += 1
        let bytesMark = keyBytes.count
        let rangesMark = keyRanges.count
        defer {
            depth -= 1
            if keyBytes.count > bytesMark { keyBytes.removeLast(keyBytes.count - bytesMark) }
            if keyRanges.count > rangesMark { keyRanges.removeLast(keyRanges.count - rangesMark) }
        }
        /// Large objects (maps) switch from a linear scan to a set for duplicate detection.
        var largeObjectKeys: Set<[UInt8]>? = nil
        /// The object's first key until a second one arrives (see below).
        var firstKey: JSONKey? = nil
        var firstKeyStart = 0
        var keyCount = 0
        /// Bit k: `fields[k]` was read.
        var seenFields: UInt64 = 0
        skipWhitespace()
        if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
                throw syntaxError(
                    position < buffer.count
                        ? "expected a string key, got \(describeByte(at: position))"
                        : "unterminated object")
            }
            let keyStart = position
            let key = try readKey()
            let field = fields.isEmpty ? -1 : fields.firstIndex { key == $0 } ?? -1
            // The first key cannot repeat anything: it is remembered only once a second one
            // comes, so a one-key object (every viewport update) records nothing and allocates
            // nothing.
            if field >= 0 {
                guard seenFields & (1 << UInt64(field)) == 0 else { throw Self.duplicateField(key, at: keyStart) }
                seenFields |= 1 << UInt64(field)
            } else if let first = firstKey {
                firstKey = nil
                try checkDuplicate(
                    first, keyStart: firstKeyStart, bytesMark: bytesMark, rangesMark: rangesMark,
                    largeObjectKeys: &largeObjectKeys)
                try checkDuplicate(
                    key, keyStart: keyStart, bytesMark: bytesMark, rangesMark: rangesMark,
                    largeObjectKeys: &largeObjectKeys)
            } else if keyCount == 0 {
                firstKey = key
                firstKeyStart = keyStart
            } else {
                try checkDuplicate(
                    key, keyStart: keyStart, bytesMark: bytesMark, rangesMark: rangesMark,
                    largeObjectKeys: &largeObjectKeys)
            }
            keyCount += 1
            skipWhitespace()
            guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else {
                throw syntaxError(
                    "expected ':' after key \(JSONError.quoted(key.string)), got \(describeByte(at: position))"
                )
            }
            position += 1
            skipWhitespace()
            let valueStart = position
            do {
                try body(&self, field, key)
                if position == valueStart {
                    try skipValue()
                }
            } catch var error as JSONError {
                error.prepend(key: key.string)
                throw error
            }
            skipWhitespace()
            guard position < buffer.count else {
                throw syntaxError("unterminated object")
            }
            let byte = buffer[position]
            position += 1
            if byte == UInt8(ascii: "}") {
                return
            }
            guard byte == UInt8(ascii: ",") else {
                throw syntaxError(
                    "expected ',' or '}' after an object member, got \(describeByte(at: position - 1))",
                    at: position - 1)
            }
            skipWhitespace()
            if position < buffer.count, buffer[position] == UInt8(ascii: "}") {
                throw syntaxError("trailing comma in object")
            }
        }
    }

    private static func duplicateField(_ key: JSONKey, at keyStart: Int) -> JSONError {
        var error = JSONError(.duplicateField, "duplicate field \(JSONError.quoted(key.string))", offset: keyStart)
        error.belongsToContainer = false
        return error
    }

    private mutating func checkDuplicate(
        _ key: JSONKey, keyStart: Int, bytesMark: Int, rangesMark: Int,
        largeObjectKeys: inout Set<[UInt8]>?
    ) throws {
        func duplicate() -> JSONError { Self.duplicateField(key, at: keyStart) }
        if largeObjectKeys != nil {
            let bytes = key.withUTF8 { Array($0) }
            if largeObjectKeys?.insert(bytes).inserted == false {
                throw duplicate()
            }
            return
        }
        let found = key.withUTF8 { new -> Bool in
            var i = rangesMark
            while i < keyRanges.count {
                if withStoredKey(at: i, { JSONKey.bytesEqual($0, new) }) { return true }
                i += 2
            }
            return false
        }
        if found {
            throw duplicate()
        }
        if key.decoded == nil, let base = buffer.baseAddress, let start = key.raw.baseAddress {
            // A key without escapes is in the input, which outlives the read: its place is
            // enough (copying every key's bytes was ~4 % of a 1M-item layout's POST).
            keyRanges.append(~(start - UnsafeRawPointer(base)))
            keyRanges.append(key.raw.count)
        } else {
            let start = keyBytes.count
            key.withUTF8 { keyBytes.append(contentsOf: $0) }
            keyRanges.append(start)
            keyRanges.append(keyBytes.count)
        }
        if keyRanges.count - rangesMark >= 64 {
            // 32 keys: switch to a set so that a huge map stays linear.
            var set = Set<[UInt8]>()
            var i = rangesMark
            while i < keyRanges.count {
                set.insert(withStoredKey(at: i) { Array($0) })
                i += 2
            }
            largeObjectKeys = set
        }
    }

    /// Calls `body` with the bytes of the key recorded at `keyRanges[i]`, `keyRanges[i + 1]`:
    /// `(~offset, count)` in the input for a key without escapes, `(start, end)` in `keyBytes`
    /// for a decoded one.
    private func withStoredKey<R>(at i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let start = keyRanges[i]
        if start < 0 {
            let input = UnsafeRawBufferPointer(buffer)
            return body(UnsafeRawBufferPointer(rebasing: input[(~start)..<(~start + keyRanges[i + 1])]))
        }
        return keyBytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<keyRanges[i + 1]])) }
    }

    /// Reads an array, calling `body` once per element with its index; `body` reads the element
    /// (or reads nothing to skip it).
    public mutating func readArray(_ body: (inout JSONReader, Int) throws -> Void) throws {
        skipWhitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: "[") else {
            throw mismatch(expected: "an array")
        }
        try enterContainer()
        position += 1
        defer { depth -= 1 }
        skipWhitespace()
        if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
            position += 1
            return
        }
        var index = 0
        while true {
            skipWhitespace()
            let valueStart = position
            do {
                try body(&self, index)
                if position == valueStart {
                    try skipValue()
                }
            } catch var error as JSONError {
                error.prepend(index: index)
                throw error
            }
            skipWhitespace()
            guard position < buffer.count else {
                throw syntaxError("unterminated array")
            }
            let byte = buffer[position]
            position += 1
            if byte == UInt8(ascii: "]") {
                return
            }
            guard byte == UInt8(ascii: ",") else {
                throw syntaxError(
                    "expected ',' or ']' after an array element, got \(describeByte(at: position - 1))",
                    at: position - 1)
            }
            skipWhitespace()
            if position < buffer.count, buffer[position] == UInt8(ascii: "]") {
                throw syntaxError("trailing comma in array")
            }
            index += 1
        }
    }

    /// Skips one value, validating it completely (grammar, UTF-8, duplicate keys, depth).
    public mutating func skipValue() throws {
        skipWhitespace()
        guard position < buffer.count else {
            throw syntaxError("unexpected end of input, expected a value")
        }
        switch buffer[position] {
        case UInt8(ascii: "{"):
            try readObject { _, _ in }
        case UInt8(ascii: "["):
            try readArray { _, _ in }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            try readNull()
        default:
            throw syntaxError("expected a value, got \(describeByte(at: position))")
        }
    }

    // MARK: - Literals

    @inline(__always)
    mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - position >= count else { return false }
        let bytes = literal.utf8Start
        for i in 0..<count where buffer[position + i] != bytes[i] {
            return false
        }
        // `truex` is not `true`: the literal must end at a delimiter.
        if position + count < buffer.count {
            switch buffer[position + count] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                return false
            default:
                break
            }
        }
        position += count
        return true
    }

    public mutating func readBool() throws -> Bool {
        skipWhitespace()
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        if position < buffer.count, buffer[position] == UInt8(ascii: "t") || buffer[position] == UInt8(ascii: "f") {
            throw syntaxError("invalid literal")
        }
        throw mismatch(expected: "a boolean")
    }

    /// Reads `null`.
    public mutating func readNull() throws {
        skipWhitespace()
        if matchLiteral("null") { return }
        if position < buffer.count, buffer[position] == UInt8(ascii: "n") {
            throw syntaxError("invalid literal")
        }
        throw mismatch(expected: "null")
    }

    /// Consumes `null` and returns true if the next value is `null`; otherwise reads nothing.
    public mutating func readNullIfPresent() -> Bool {
        skipWhitespace()
        return matchLiteral("null")
    }
}
