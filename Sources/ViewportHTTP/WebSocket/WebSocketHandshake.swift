import Crypto
import ExtrasBase64

/// A valid WebSocket opening handshake (RFC 6455 §4.2.1), as read from a request head.
///
/// The HTTP layer only validates; the application decides (auth, subprotocol, routing) and
/// answers ``HTTPRequestAction/webSocket(_:)`` with a ``WebSocketAcceptance``, or turns a
/// ``WebSocketHandshakeError`` into its own error response.
public struct WebSocketHandshake: Sendable, Equatable {
    /// The GUID RFC 6455 appends to the key before hashing.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Key` as sent (base64 of 16 bytes).
    public let key: String
    /// The subprotocols offered in `Sec-WebSocket-Protocol` (every such header, comma-separated
    /// lists split, spaces trimmed), in the client's order of preference.
    public let offeredProtocols: [String]

    /// The value of `Sec-WebSocket-Accept` for this handshake.
    public var acceptValue: String { Self.acceptValue(forKey: key) }

    /// base64(SHA-1(key + GUID)), RFC 6455 §4.2.2 step 5.4 (swift-crypto's SHA-1, which RFC 6455
    /// requires here: it is not used for security).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encodeToString(bytes: Array(Insecure.SHA1.hash(data: Array((key + guid).utf8))))
    }

    /// Whether `key` is canonical padded base64 of exactly 16 bytes: it decodes, and encoding the
    /// bytes again gives the same text (so non-zero padding bits are refused too).
    static func isValidKey(_ key: String) -> Bool {
        guard let bytes = try? Base64.decode(string: key), bytes.count == 16 else { return false }
        return Base64.encodeToString(bytes: bytes) == key
    }

    /// Checks a request head in this order: `GET` (else 405), an upgrade to `websocket`
    /// (`Upgrade` lists the token `websocket` and `Connection` the token `upgrade`, both
    /// case-insensitive; else 426), `Sec-WebSocket-Version: 13` (else 426), a
    /// `Sec-WebSocket-Key` that is base64 of 16 bytes (else 400), and no body (else 400).
    public static func validate(_ head: HTTPRequestHead) -> Result<WebSocketHandshake, WebSocketHandshakeError> {
        guard head.method == "GET" else {
            return .failure(WebSocketHandshakeError(status: 405, message: "a WebSocket handshake is a GET, not \(head.method)", headers: [("Allow", "GET")]))
        }
        let upgrade = head.tokens(of: "Upgrade").contains { asciiCaseInsensitiveEquals($0, "websocket") }
        let connection = head.tokens(of: "Connection").contains { asciiCaseInsensitiveEquals($0, "upgrade") }
        if !upgrade || !connection {
            var missing: [String] = []
            if !upgrade { missing.append("Upgrade: websocket") }
            if !connection { missing.append("Connection: Upgrade") }
            return .failure(WebSocketHandshakeError(
                status: 426, message: "this path only speaks WebSocket; the request lacks \(missing.joined(separator: " and "))",
                headers: [("Upgrade", "websocket"), ("Connection", "Upgrade")]))
        }
        let versions = head.tokens(of: "Sec-WebSocket-Version")
        guard versions == ["13"] else {
            let given = versions.isEmpty ? "none" : versions.joined(separator: ", ")
            return .failure(WebSocketHandshakeError(
                status: 426, message: "Sec-WebSocket-Version must be 13 (given: \(given))",
                headers: [("Sec-WebSocket-Version", "13")]))
        }
        let keys = head.values(of: "Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first.map({ String($0.trimmingASCIISpaces()) }), isValidKey(key) else {
            return .failure(WebSocketHandshakeError(
                status: 400, message: "Sec-WebSocket-Key must be one base64-encoded 16-byte value"))
        }
        guard !head.hasBody else {
            return .failure(WebSocketHandshakeError(status: 400, message: "a WebSocket handshake carries no body"))
        }
        return .success(WebSocketHandshake(key: key, offeredProtocols: head.tokens(of: "Sec-WebSocket-Protocol")))
    }
}
