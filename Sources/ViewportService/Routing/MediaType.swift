/// The body formats the API reads, from a request's `Content-Type`.
enum MediaType: Equatable, Sendable {
    case json
    case ndjson
    case other(String)

    /// Absent means JSON (docs/api.md "Bodies and media types"). Parameters (`; charset=utf-8`) are allowed; a charset other
    /// than UTF-8 is not. Media types compare without regard to case.
    ///
    /// On the hot path (every update): the exact `application/json` is matched first, without
    /// building any string.
    init(contentType: String?) {
        guard let contentType else {
            self = .json
            return
        }
        if contentType == "application/json" {
            self = .json
            return
        }
        let parts = contentType.split(separator: ";").map { Self.trimmed($0).lowercased() }
        let essence = parts.first ?? ""
        let charsetOK = parts.dropFirst().allSatisfy { parameter in
            !parameter.hasPrefix("charset=") || ["charset=utf-8", "charset=\"utf-8\""].contains(parameter)
        }
        switch essence {
        case "application/json" where charsetOK: self = .json
        case "application/x-ndjson" where charsetOK, "application/ndjson" where charsetOK: self = .ndjson
        default: self = .other(contentType)
        }
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return text[first...last]
    }
}
