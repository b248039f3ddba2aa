import ViewportHTTP
import ViewportJSON

/// An RFC 9457 problem: the body of every error response (`application/problem+json`).
///
/// Thrown by decoders, stores and routes; the router turns it into a response. `detail` always
/// names the offending field or value.
public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    /// A URI naming the kind of problem: `about:blank` for plain HTTP errors, a
    /// `urn:viewportd:problem:…` for the API's own.
    public var type: String
    public var title: String
    public var detail: String
    /// Extra members: `seq` on a 409, `line` on a stream's problem line, `message` on a
    /// WebSocket's problem message.
    public var seq: UInt64?
    public var line: Int?
    public var message: Int?
    public var allow: String?
    /// On a 409 from a session that lost updates (its instance died): the client should resync
    /// (`POST /v1/sessions/{id}/resync`).
    public var resync: Bool?
    /// On a 503: seconds for its `Retry-After` header, and its `retryAfter` member (a stream's
    /// problem line or a socket's problem message has no header to carry it).
    public var retryAfter: Int?

    public init(status: Int, type: String = "about:blank", title: String? = nil, detail: String) {
        self.status = status
        self.type = type
        self.title = title ?? Problem.reasonPhrase(status)
        self.detail = Problem.bounded(detail)
    }

    /// Longest `detail` kept whole, in bytes of UTF-8. A detail quotes what the client sent
    /// (an unknown id in `select` or `remove`, say), which can be megabytes: past this, its first
    /// 1,024 characters and its length (a 5 MB id had been echoed whole, in the problem and in
    /// `replay`'s message).
    static let detailLimit = 2048

    static func bounded(_ detail: String) -> String {
        let bytes = detail.utf8.count
        guard bytes > detailLimit else { return detail }
        let kept = String(String.UnicodeScalarView(detail.unicodeScalars.prefix(1024)))
        return kept + "… (\(bytes) bytes of detail, cut)"
    }

    public var description: String { "\(status) \(title): \(detail)" }

    static func badRequest(_ detail: String) -> Problem {
        Problem(status: 400, type: "urn:viewportd:problem:invalid-request", title: "Invalid request body", detail: detail)
    }

    static func invalid(_ detail: String) -> Problem {
        Problem(status: 422, type: "urn:viewportd:problem:invalid-value", title: "Invalid value", detail: detail)
    }

    static func notFound(_ detail: String) -> Problem { Problem(status: 404, detail: detail) }

    static func tooLarge(_ detail: String) -> Problem { Problem(status: 413, detail: detail) }

    static func capacity(_ detail: String) -> Problem {
        Problem(status: 429, type: "urn:viewportd:problem:capacity", title: "Capacity full", detail: detail)
    }

    /// 503 with `Retry-After`: the shared store is needed and cannot answer now (or another
    /// instance holds the session and did not hand it over in time).
    static func unavailable(_ detail: String, retryAfter: Int = 1) -> Problem {
        var problem = Problem(status: 503, type: "urn:viewportd:problem:store-unavailable", title: "Service Unavailable", detail: detail)
        problem.retryAfter = max(1, retryAfter)
        return problem
    }

    static func sequenceConflict(current: UInt64, detail: String) -> Problem {
        var problem = Problem(status: 409, type: "urn:viewportd:problem:sequence", title: "Sequence conflict", detail: detail)
        problem.seq = current
        return problem
    }

    /// The problem as JSON (one line, no trailing newline).
    func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.key("type")
        w.string(type)
        w.key("title")
        w.string(title)
        w.key("status")
        w.int(status)
        w.key("detail")
        w.string(detail)
        if let seq {
            w.key("seq")
            w.int(Int(truncatingIfNeeded: seq))
        }
        if let line {
            w.key("line")
            w.int(line)
        }
        if let message {
            w.key("message")
            w.int(message)
        }
        if let resync {
            w.key("resync")
            w.bool(resync)
        }
        if let retryAfter {
            w.key("retryAfter")
            w.int(retryAfter)
        }
        w.endObject()
    }

    public var response: HTTPResponse {
        var w = JSONWriter(capacity: 256)
        encode(into: &w)
        var headers: [(name: String, value: String)] = [("Content-Type", "application/problem+json")]
        if let allow { headers.append(("Allow", allow)) }
        if status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        return HTTPResponse(status: status, headers: headers, body: .bytes(w.bytes))
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 503: return "Service Unavailable"
        default: return "Error"
        }
    }
}

extension Problem {
    /// A JSON decoding error: 400, or 422 for a semantic one.
    init(_ error: JSONError) {
        if error.httpStatus == 422 {
            self = .invalid(error.description)
        } else {
            self = .badRequest(error.description)
        }
    }
}
