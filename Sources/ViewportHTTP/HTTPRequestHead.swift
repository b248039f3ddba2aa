#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The request line and headers of one request, captured when its head is complete.
public struct HTTPRequestHead: Sendable {
    /// Request method as sent (`GET`, `POST`, …).
    public let method: String
    /// URL path without the query string, as sent (not percent-decoded).
    public let path: String
    /// Raw query string after `?` (not decoded), or nil when the URL has none.
    public let query: String?
    /// Value of `Content-Length`, or nil when absent (e.g. a chunked upload).
    public let contentLength: Int?
    /// The header fields, in the order received, as one byte buffer: per field a 4-byte name
    /// length, a 4-byte value length, the name, the value. One allocation for all of them (an
    /// array of string pairs was a few allocations per request, and most are never read).
    private let fields: [UInt8]

    /// Creates a head; the server builds these, tests and routers may too.
    public init(
        method: String, path: String, query: String? = nil,
        headers: [(name: String, value: String)] = [], contentLength: Int? = nil
    ) {
        var fields = Fields()
        for field in headers {
            var name = field.name
            var value = field.value
            name.withUTF8 { n in value.withUTF8 { v in fields.append(name: UnsafeRawBufferPointer(n), value: UnsafeRawBufferPointer(v)) } }
        }
        self.init(method: method, path: path, query: query, fields: fields, contentLength: contentLength)
    }

    init(method: String, path: String, query: String?, fields: Fields, contentLength: Int?) {
        self.method = method
        self.path = path
        self.query = query
        self.fields = fields.bytes
        self.contentLength = contentLength
    }

    /// Header fields in the order received (names as sent). Built on each call: prefer
    /// ``header(_:)``, ``values(of:)`` and ``tokens(of:)``, which make only the strings they return.
    public var headers: [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        forEachField { name, value in
            result.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return result
    }

    /// The first value of the header `name`, compared case-insensitively (ASCII).
    /// - Complexity: O(size of the headers).
    public func header(_ name: String) -> String? {
        var found: String?
        var name = name
        name.withUTF8 { wanted in
            forEachField { fieldName, value in
                guard asciiCaseInsensitiveEquals(fieldName, UnsafeRawBufferPointer(wanted)) else { return true }
                found = String(decoding: value, as: UTF8.self)
                return false
            }
        }
        return found
    }

    /// Whether the header `name` is present with exactly `value` (bytes compared, the name
    /// case-insensitively), without making a string.
    /// - Complexity: O(size of the headers).
    public func header(_ name: StaticString, is value: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount)
        var result = false
        forEachField { fieldName, fieldValue in
            guard asciiCaseInsensitiveEquals(fieldName, name) else { return true }
            if fieldValue.count == expected.count, let a = fieldValue.baseAddress, let b = expected.baseAddress {
                result = memcmp(a, b, expected.count) == 0
            } else {
                result = fieldValue.isEmpty && expected.isEmpty
            }
            return false
        }
        return result
    }

    /// Every value of the header `name` (a field may be repeated), in order.
    /// - Complexity: O(size of the headers).
    public func values(of name: String) -> [String] {
        var result: [String] = []
        var name = name
        name.withUTF8 { wanted in
            forEachField { fieldName, value in
                if asciiCaseInsensitiveEquals(fieldName, UnsafeRawBufferPointer(wanted)) {
                    result.append(String(decoding: value, as: UTF8.self))
                }
                return true
            }
        }
        return result
    }

    /// The comma-separated list elements of every `name` header, trimmed, empty ones dropped
    /// (RFC 9110 §5.6.1: `Connection: keep-alive, Upgrade`).
    public func tokens(of name: String) -> [String] {
        values(of: name).flatMap { $0.split(separator: ",") }
            .map { String(String($0).trimmingASCIISpaces()) }
            .filter { !$0.isEmpty }
    }

    /// True when the body uses chunked transfer encoding.
    public var isChunked: Bool {
        guard let encoding = header("Transfer-Encoding") else { return false }
        return encoding.lowercased().contains("chunked")
    }

    /// True when a body follows the head (declared length above 0, or chunked).
    public var hasBody: Bool {
        if let contentLength { return contentLength > 0 }
        return isChunked
    }

    /// Calls `body` with each field's name and value bytes, in order, while it returns true.
    private func forEachField(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool) {
        fields.withUnsafeBytes { raw in
            var at = 0
            while at + 8 <= raw.count {
                let nameCount = Int(raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                let valueCount = Int(raw.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))
                let nameStart = at + 8
                let valueStart = nameStart + nameCount
                at = valueStart + valueCount
                guard at <= raw.count else { return }
                let name = UnsafeRawBufferPointer(rebasing: raw[nameStart..<valueStart])
                let value = UnsafeRawBufferPointer(rebasing: raw[valueStart..<at])
                if !body(name, value) { return }
            }
        }
    }

    /// Header fields being collected into the head's storage.
    struct Fields {
        private(set) var bytes: [UInt8]

        init(capacity: Int = 0) {
            bytes = []
            bytes.reserveCapacity(capacity)
        }

        /// Fields already encoded (see ``Encoder``).
        init(encoded: [UInt8]) {
            bytes = encoded
        }

        /// Bytes one field takes.
        static func size(name: Int, value: Int) -> Int { 8 + name + value }

        mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: Self.size(name: name.count, value: value.count)))
            bytes.withUnsafeMutableBytes { raw in
                var encoder = Encoder(UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
                encoder.append(name: name, value: value)
            }
        }
    }

    /// Writes fields into memory sized beforehand with ``Fields/size(name:value:)``.
    struct Encoder {
        private let base: UnsafeMutableRawBufferPointer
        private(set) var count = 0

        init(_ base: UnsafeMutableRawBufferPointer) {
            self.base = base
        }

        mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            guard count + Fields.size(name: name.count, value: value.count) <= base.count, let start = base.baseAddress else { return }
            // Unaligned stores are allowed for trivial types (SE-0349).
            start.storeBytes(of: UInt32(truncatingIfNeeded: name.count).littleEndian, toByteOffset: count, as: UInt32.self)
            start.storeBytes(of: UInt32(truncatingIfNeeded: value.count).littleEndian, toByteOffset: count + 4, as: UInt32.self)
            if let from = name.baseAddress { (start + count + 8).copyMemory(from: from, byteCount: name.count) }
            if let from = value.baseAddress { (start + count + 8 + name.count).copyMemory(from: from, byteCount: value.count) }
            count += Fields.size(name: name.count, value: value.count)
        }
    }
}

/// ASCII case-insensitive comparison of two header names without allocating.
@inline(__always)
func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { l in rhs.withUTF8 { r in asciiCaseInsensitiveEquals(UnsafeRawBufferPointer(l), UnsafeRawBufferPointer(r)) } }
}

/// ASCII case-insensitive comparison of two byte strings (header names).
@inline(__always)
func asciiCaseInsensitiveEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    for i in 0..<lhs.count {
        let l = lhs[i]
        let r = rhs[i]
        if l != r {
            let folded = l | 0x20
            guard folded == r | 0x20, folded >= 0x61, folded <= 0x7A else { return false }
        }
    }
    return true
}

/// ASCII case-insensitive comparison of a header name with a literal.
@inline(__always)
func asciiCaseInsensitiveEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: StaticString) -> Bool {
    asciiCaseInsensitiveEquals(lhs, UnsafeRawBufferPointer(start: rhs.utf8Start, count: rhs.utf8CodeUnitCount))
}
