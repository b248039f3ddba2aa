/// A response read by ``HTTPTestClient``.
public struct HTTPTestResponse: Sendable {
    /// Status code.
    public var status: Int
    /// Reason phrase.
    public var reason: String
    /// Header fields as received.
    public var headers: [(name: String, value: String)]
    /// The body (de-chunked when it was sent chunked).
    public var body: [UInt8]
    /// True when the body came with `Transfer-Encoding: chunked`.
    public var wasChunked: Bool

    /// Creates a response value.
    public init(status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8], wasChunked: Bool) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.wasChunked = wasChunked
    }

    /// The body decoded as UTF-8.
    public var bodyString: String { String(decoding: body, as: UTF8.self) }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// True when the server announced it closes the connection.
    public var closesConnection: Bool {
        header("Connection")?.lowercased().contains("close") ?? false
    }
}
