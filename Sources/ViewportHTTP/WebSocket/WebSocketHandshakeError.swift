/// Why a request is not an acceptable WebSocket handshake: the status to answer, a sentence for
/// a person, and the header fields RFC 6455 asks for with that status (`Sec-WebSocket-Version:
/// 13` with a version mismatch, `Upgrade: websocket` with 426). The application renders the body.
public struct WebSocketHandshakeError: Error, Sendable, CustomStringConvertible {
    /// 400, 405 or 426.
    public let status: Int
    /// What is wrong, naming the header.
    public let message: String
    /// Header fields to add to the error response.
    public let headers: [(name: String, value: String)]

    public init(status: Int, message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status): \(message)" }
}
