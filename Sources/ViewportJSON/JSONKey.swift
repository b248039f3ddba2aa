/// An object key handed to the closure of ``JSONReader/readObject(_:)``: a view of the key's
/// UTF-8 bytes, compared without allocating.
///
/// ```swift
/// switch key {
/// case "offset": ...            // StaticString patterns compare bytes
/// default: throw r.unknownField(key)
/// }
/// ```
///
/// A key without escapes points into the reader's input; it is only valid inside the closure
/// it was passed to. Use ``string`` to keep it.
public struct JSONKey {
    /// The key's bytes when they are the input's bytes (no escapes).
    @usableFromInline let raw: UnsafeRawBufferPointer
    /// The decoded key when it had escapes.
    @usableFromInline let decoded: [UInt8]?

    @inlinable init(raw: UnsafeRawBufferPointer) {
        self.raw = raw
        self.decoded = nil
    }

    init(decoded: [UInt8]) {
        self.raw = UnsafeRawBufferPointer(start: nil, count: 0)
        self.decoded = decoded
    }

    /// Number of UTF-8 bytes in the key.
    @inlinable public var utf8Count: Int { decoded?.count ?? raw.count }

    /// Calls `body` with the key's (validated, unescaped) UTF-8 bytes.
    @inlinable public func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let decoded {
            return try decoded.withUnsafeBytes(body)
        }
        return try body(raw)
    }

    /// The key as a `String` (allocates when longer than 15 bytes).
    public var string: String {
        withUTF8 { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the key equals `text`, comparing UTF-8 bytes.
    public func equals(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { other in
            withUTF8 { mine in Self.bytesEqual(mine, UnsafeRawBufferPointer(other)) }
        }
    }

    @inlinable public static func == (lhs: JSONKey, rhs: StaticString) -> Bool {
        guard rhs.hasPointerRepresentation else {
            return lhs.equals(rhs.description)
        }
        let other = UnsafeRawBufferPointer(start: rhs.utf8Start, count: rhs.utf8CodeUnitCount)
        return lhs.withUTF8 { bytesEqual($0, other) }
    }

    @inlinable public static func != (lhs: JSONKey, rhs: StaticString) -> Bool {
        !(lhs == rhs)
    }

    /// Lets `switch key { case "offset": … }` compare bytes.
    @inlinable public static func ~= (pattern: StaticString, value: JSONKey) -> Bool {
        value == pattern
    }

    @inlinable static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i < a.count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }
}
