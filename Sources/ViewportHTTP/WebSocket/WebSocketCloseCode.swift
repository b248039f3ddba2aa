/// The close status codes viewportd sends (RFC 6455 §7.4.1), and the rule for which codes a peer
/// may send.
public enum WebSocketCloseCode {
    /// The purpose of the connection is fulfilled (e.g. the session ended).
    public static let normal: UInt16 = 1000
    /// The server is going away (stopping) or the peer went silent.
    public static let goingAway: UInt16 = 1001
    /// The peer broke the framing rules.
    public static let protocolError: UInt16 = 1002
    /// A text message (or close reason) is not valid UTF-8.
    public static let invalidPayload: UInt16 = 1007
    /// A message is larger than the server accepts.
    public static let messageTooBig: UInt16 = 1009
    /// The server is busy (its shared budget for bytes being received is spent): retry later.
    public static let tryAgainLater: UInt16 = 1013

    /// Whether a peer may put `code` in a close frame (§7.4.1–7.4.2): 1000–1003, 1007–1014 and
    /// the private/registered range 3000–4999. 1004–1006 and 1015 are reserved for local use
    /// and must never go over the wire.
    public static func isValidOnTheWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }
}
