import FuzzSupport
import ViewportService

/// A JSON document as a tree, read with the service's ``JSONReader``.
public indirect enum JSONValue: Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    /// Reads one value of any kind.
    public static func read(_ r: inout JSONReader) throws -> JSONValue {
        switch r.peekKind() {
        case .object?:
            var members: [(String, JSONValue)] = []
            try r.readObject { r, key in members.append((key.string, try read(&r))) }
            return .object(members)
        case .array?:
            var elements: [JSONValue] = []
            try r.readArray { r, _ in elements.append(try read(&r)) }
            return .array(elements)
        case .string?: return .string(try r.readString())
        case .number?: return .number(try r.readDouble())
        case .bool?: return .bool(try r.readBool())
        case .null?:
            try r.readNull()
            return .null
        case nil:
            throw r.typeMismatch(expected: "a JSON value")
        }
    }

    /// Parses a whole document.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var r = JSONReader(bytes)
        let value = try read(&r)
        try r.finish()
        return value
    }

    /// Writes the value with the service's ``JSONWriter``.
    public func write(into w: inout JSONWriter) {
        switch self {
        case .object(let members):
            w.beginObject()
            for (k, v) in members {
                w.key(escaping: k)
                v.write(into: &w)
            }
            w.endObject()
        case .array(let elements):
            w.beginArray()
            for v in elements { v.write(into: &w) }
            w.endArray()
        case .string(let s): w.string(s)
        case .number(let d): w.number(d)
        case .bool(let b): w.bool(b)
        case .null: w.null()
        }
    }

    /// Whether any `null` occurs (plans and states never carry one: a non-finite number is
    /// written as `null`).
    public var containsNull: Bool {
        switch self {
        case .null: true
        case .object(let members): members.contains { $0.1.containsNull }
        case .array(let elements): elements.contains { $0.containsNull }
        default: false
        }
    }
}

/// Checks that `bytes` (a plan, a state, a problem) is one JSON object without `null`: every
/// number the service wrote was finite.
public func requireFiniteJSON(_ bytes: [UInt8], _ what: @autoclosure () -> String) {
    let value = bytes.withUnsafeBytes { try? JSONValue.parse($0) }
    guard let value else { fatalError("fuzz check failed: \(what()) is not JSON: \(escaped(bytes))") }
    guard case .object = value else { fatalError("fuzz check failed: \(what()) is not an object: \(escaped(bytes))") }
    require(!value.containsNull, "\(what()) carries null (a non-finite number): \(escaped(bytes))")
}
