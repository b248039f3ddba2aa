/// An error found while reading JSON: a syntax error, a value of the wrong type or shape, or a
/// semantic problem reported by a decoder.
///
/// `path` names where in the document the problem is (`items[3].rect[2]`), `message` says what
/// is wrong, naming the field where there is one. `description` combines both and is what goes
/// into a problem response's `detail`.
///
/// The path is assembled while the error propagates out of ``JSONReader/readObject(_:)`` and
/// ``JSONReader/readArray(_:)`` (each level prepends its key or index), so keeping track of the
/// path costs nothing while parsing succeeds.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem this is; all kinds but ``value`` are client errors of form (400),
    /// ``value`` is a well-formed request with invalid content (422).
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Not JSON: unexpected character, trailing comma, leading zero, unterminated string, …
        case syntax
        /// Valid JSON of the wrong type or shape (a string where a number belongs, a wrong-length array).
        case type
        /// A field the decoder does not know (typos must not be silently ignored).
        case unknownField
        /// A required field is absent.
        case missingField
        /// The same key twice in one object.
        case duplicateField
        /// A number outside the range of `Double` (`1e400`).
        case nonFinite
        /// A string that is not valid UTF-8 or has a lone surrogate escape.
        case invalidUTF8
        /// Nesting deeper than the reader's limit.
        case tooDeep
        /// Semantically invalid content (negative size, value outside an enumeration handled as
        /// such by a decoder, …): HTTP 422.
        case value
    }

    /// One step of a path: an object key or an array index.
    public enum PathComponent: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    public var kind: Kind
    /// What is wrong, without the path (`unknown field "ofset"`).
    public var message: String
    /// Byte offset in the input where the problem was detected, when known.
    public var offset: Int?
    /// The path from the document root, outermost first.
    public var components: [PathComponent]

    /// Errors about a key of an object (unknown or duplicate field) are raised inside the
    /// member's closure but belong to the object, not to the member: the innermost object that
    /// sees such an error does not prepend the member's key.
    var belongsToContainer: Bool

    public init(
        _ kind: Kind, _ message: String, path components: [PathComponent] = [], offset: Int? = nil
    ) {
        self.kind = kind
        self.message = message
        self.offset = offset
        self.components = components
        self.belongsToContainer = false
    }

    /// A semantic (422) error, for decoders that validate after parsing.
    public static func value(_ message: String, path: [PathComponent] = []) -> JSONError {
        JSONError(.value, message, path: path)
    }

    /// The HTTP status this error answers: 422 for ``Kind/value``, 400 for everything else.
    public var httpStatus: Int { kind == .value ? 422 : 400 }

    /// The path as text: `items[3].rect[2]`, empty at the document root. Keys that are not
    /// simple names are quoted: `pool.perReuse["a.b"]`.
    public var path: String {
        var result = ""
        for component in components {
            switch component {
            case .index(let index):
                result += "[\(index)]"
            case .key(let key):
                if Self.isSimpleName(key) {
                    if !result.isEmpty { result += "." }
                    result += key
                } else {
                    result += "[" + Self.quoted(key) + "]"
                }
            }
        }
        return result
    }

    /// `path: message`, or just the message at the root.
    public var description: String {
        let path = self.path
        return path.isEmpty ? message : "\(path): \(message)"
    }

    public static func == (lhs: JSONError, rhs: JSONError) -> Bool {
        lhs.kind == rhs.kind && lhs.message == rhs.message && lhs.components == rhs.components
            && lhs.offset == rhs.offset
    }

    /// Called by the reader as the error leaves a member of an object.
    mutating func prepend(key: String) {
        if belongsToContainer {
            belongsToContainer = false
        } else {
            components.insert(.key(key), at: 0)
        }
    }

    /// Called by the reader as the error leaves an element of an array.
    mutating func prepend(index: Int) {
        belongsToContainer = false
        components.insert(.index(index), at: 0)
    }

    static func isSimpleName(_ key: String) -> Bool {
        guard !key.isEmpty else { return false }
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    /// A key or value quoted for a message, with quotes, backslashes and control characters escaped.
    package static func quoted(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 2)
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
