/// A response: status, header fields and a body.
public struct HTTPResponse: Sendable {
    /// HTTP status code.
    public var status: Int
    /// Header fields to send (MHD adds `Content-Length` or `Transfer-Encoding` and `Date`).
    public var headers: [(name: String, value: String)]
    /// The body, in memory or streamed.
    public var body: HTTPResponseBody

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: HTTPResponseBody = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a UTF-8 body and the given content type.
    public init(status: Int, contentType: String, body: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.headers = [("Content-Type", contentType)] + headers
        self.body = .bytes(Array(body.utf8))
    }

    /// True when the response asks for the connection to be closed after it.
    var closesConnection: Bool {
        for field in headers where asciiCaseInsensitiveEquals(field.name, "Connection") {
            return field.value.lowercased().contains("close")
        }
        return false
    }

    /// This response with `Connection: close` added (unless already present).
    func closingConnection() -> HTTPResponse {
        if closesConnection { return self }
        var copy = self
        copy.headers.append(("Connection", "close"))
        return copy
    }
}
