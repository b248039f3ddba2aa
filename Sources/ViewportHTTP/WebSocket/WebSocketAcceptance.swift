/// The application's yes to a WebSocket handshake (see ``HTTPRequestAction/webSocket(_:)``).
public struct WebSocketAcceptance: Sendable {
    /// The validated handshake (from ``WebSocketHandshake/validate(_:)``).
    public let handshake: WebSocketHandshake
    /// The subprotocol to confirm in `Sec-WebSocket-Protocol`; must be one the client offered.
    public let subprotocol: String?
    /// Largest message accepted, in bytes; a frame whose declared length would take its message
    /// past it closes the connection with 1009 before the payload is read.
    public let maxMessageBytes: Int
    /// Receives the connection's messages, on the connection's own thread.
    public let handler: any WebSocketMessageHandler

    public init(handshake: WebSocketHandshake, subprotocol: String? = nil, maxMessageBytes: Int, handler: any WebSocketMessageHandler) {
        self.handshake = handshake
        self.subprotocol = subprotocol
        self.maxMessageBytes = maxMessageBytes
        self.handler = handler
    }
}
