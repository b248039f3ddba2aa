/// What a ``WebSocketMessageHandler`` answers to one message.
public struct WebSocketReply: Sendable {
    /// A text message to send (valid UTF-8), or nil for none.
    public var text: [UInt8]?
    /// After the text, close the connection with this code and reason.
    public var close: (code: UInt16, reason: String)?

    public init(text: [UInt8]? = nil, close: (code: UInt16, reason: String)? = nil) {
        self.text = text
        self.close = close
    }

    /// Send nothing back.
    public static let none = WebSocketReply()

    /// Send one text message.
    public static func text(_ bytes: [UInt8]) -> WebSocketReply { WebSocketReply(text: bytes) }
}
