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
    /// Header fields in the order received (names as sent).
    public let headers: [(name: String, value: String)]

    /// Creates a head; the server builds these, tests and routers may too.
    public init(
        method: String, path: String, query: String? = nil,
        headers: [(name: String, value: String)] = [], contentLength: Int? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.contentLength = contentLength
    }

    /// The first value of the header `name`, compared case-insensitively (ASCII).
    /// - Complexity: O(number of headers).
    public func header(_ name: String) -> String? {
        for field in headers where asciiCaseInsensitiveEquals(field.name, name) {
            return field.value
        }
        return nil
    }

    /// Every value of the header `name` (a field may be repeated), in order.
    /// - Complexity: O(number of headers).
    public func values(of name: String) -> [String] {
        headers.filter { asciiCaseInsensitiveEquals($0.name, name) }.map(\.value)
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
}

/// ASCII case-insensitive comparison of two header names without allocating.
@inline(__always)
func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
        switch (left.next(), right.next()) {
        case (nil, nil):
            return true
        case let (l?, r?):
            if l != r {
                let folded = l | 0x20
                guard folded == r | 0x20, folded >= 0x61, folded <= 0x7A else { return false }
            }
        default:
            return false
        }
    }
}
