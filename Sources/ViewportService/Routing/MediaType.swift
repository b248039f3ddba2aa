/// The body formats the API reads, from a request's `Content-Type`.
enum MediaType: Equatable, Sendable {
    case json
    case ndjson
    case other(String)

    /// Absent means JSON (API.md). Parameters (`; charset=utf-8`) are allowed; a charset other
    /// than UTF-8 is not.
    init(contentType: String?) {
        guard let contentType else {
            self = .json
            return
        }
        let parts = contentType.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
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
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
