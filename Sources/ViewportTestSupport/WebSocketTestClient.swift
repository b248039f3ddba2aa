/// A small blocking WebSocket client (RFC 6455) for tests, over ``HTTPTestClient``'s raw socket:
/// it does the opening handshake, sends masked frames (whole, fragmented, or deliberately broken
/// ones), reads the server's frames, answers pings when asked to, and waits for the close.
///
/// One client is one connection; use it from one thread at a time.
public final class WebSocketTestClient {
    /// One frame as the server sent it.
    public struct Frame: Sendable, Equatable {
        public var fin: Bool
        public var opcode: UInt8
        public var payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's code (nil when its payload is empty).
        public var closeCode: UInt16? { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        /// A close frame's reason.
        public var closeReason: String { payload.count > 2 ? String(decoding: payload[2...], as: UTF8.self) : "" }

        public init(fin: Bool, opcode: UInt8, payload: [UInt8]) {
            self.fin = fin
            self.opcode = opcode
            self.payload = payload
        }
    }

    public static let text: UInt8 = 0x1
    public static let binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8
    public static let ping: UInt8 = 0x9
    public static let pong: UInt8 = 0xA

    /// The connection (for raw writes and reads).
    public let http: HTTPTestClient
    /// The server's answer to the handshake: 101, or the error it answered instead.
    public let handshake: HTTPTestResponse
    /// Answer pings with pongs while waiting for a message (like a browser). Off: pings are
    /// returned by ``readFrame()`` for the test to see.
    public var answersPings = true

    private init(http: HTTPTestClient, handshake: HTTPTestResponse) {
        self.http = http
        self.handshake = handshake
    }

    /// True when the server switched protocols.
    public var isOpen: Bool { handshake.status == 101 }

    /// A fresh `Sec-WebSocket-Key` (16 random bytes, base64).
    public static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return base64((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The handshake request: GET with `Upgrade`, `Connection`, version 13, a key, offered
    /// `protocols`, then `headers` (which may override any of those by name).
    public static func handshakeRequest(
        path: String, key: String = newKey(), protocols: [String] = [], headers: [(name: String, value: String)] = []
    ) -> [UInt8] {
        var fields: [(name: String, value: String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Key", key),
        ]
        if !protocols.isEmpty { fields.append(("Sec-WebSocket-Protocol", protocols.joined(separator: ", "))) }
        let overridden = Set(headers.map { $0.name.lowercased() })
        fields.removeAll { overridden.contains($0.name.lowercased()) }
        return HTTPTestClient.request(method: "GET", path: path, headers: fields + headers.filter { !$0.value.isEmpty })
    }

    /// Connects and does the handshake. `firstBytes` go out in the same write as the handshake
    /// (frames that arrive right behind it). Check ``isOpen`` / ``handshake`` for the outcome.
    public static func connect(
        host: String = "127.0.0.1", port: Int, path: String, protocols: [String] = [],
        headers: [(name: String, value: String)] = [], firstBytes: [UInt8] = [], timeout: Double = 5
    ) throws(HTTPTestClientError) -> WebSocketTestClient {
        let http = try HTTPTestClient.connect(host: host, port: port, timeout: timeout)
        try http.write(handshakeRequest(path: path, protocols: protocols, headers: headers) + firstBytes)
        let response = try http.readResponse(acceptSwitchingProtocols: true)
        return WebSocketTestClient(http: http, handshake: response)
    }

    // MARK: Sending

    /// One frame, masked with a random key unless `masked` is false; `rsv` sets the RSV bits
    /// (0…7); `declaredLength` overrides the length field (for lies about the size).
    public static func frame(
        opcode: UInt8, payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0, declaredLength: UInt64? = nil
    ) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | (rsv & 7) << 4 | (opcode & 0x0F)]
        let length = declaredLength ?? UInt64(payload.count)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length <= 125 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        guard masked else { return out + payload }
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }
        out += key
        for (i, byte) in payload.enumerated() { out.append(byte ^ key[i & 3]) }
        return out
    }

    /// Sends a text message in one frame.
    public func send(text: String) throws(HTTPTestClientError) {
        try http.write(Self.frame(opcode: Self.text, payload: Array(text.utf8)))
    }

    /// Sends a binary message in one frame.
    public func send(binary: [UInt8]) throws(HTTPTestClientError) {
        try http.write(Self.frame(opcode: Self.binary, payload: binary))
    }

    /// Sends a text message as fragments of at most `size` bytes (in separate writes).
    public func send(text: String, fragmentSize size: Int) throws(HTTPTestClientError) {
        let bytes = Array(text.utf8)
        var start = 0
        repeat {
            let end = min(bytes.count, start + max(1, size))
            try http.write(Self.frame(opcode: start == 0 ? Self.text : 0, payload: Array(bytes[start..<end]), fin: end == bytes.count))
            start = end
        } while start < bytes.count
    }

    /// Sends raw bytes.
    public func send(raw: [UInt8]) throws(HTTPTestClientError) {
        try http.write(raw)
    }

    /// Sends a close frame (with `code`, unless nil).
    public func sendClose(code: UInt16? = 1000, reason: String = "") throws(HTTPTestClientError) {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8) }
        try http.write(Self.frame(opcode: Self.close, payload: payload))
    }

    // MARK: Receiving

    /// The next frame; fails if the server masked it (servers must not).
    public func readFrame(timeout: Double? = nil) throws(HTTPTestClientError) -> Frame {
        let head = try http.read(exactly: 2, timeout: timeout)
        guard head[1] & 0x80 == 0 else { throw .malformed("the server sent a masked frame") }
        var length = UInt64(head[1] & 0x7F)
        if length == 126 {
            let b = try http.read(exactly: 2, timeout: timeout)
            length = UInt64(b[0]) << 8 | UInt64(b[1])
        } else if length == 127 {
            length = try http.read(exactly: 8, timeout: timeout).reduce(0) { $0 << 8 | UInt64($1) }
        }
        let payload = try http.read(exactly: Int(length), timeout: timeout)
        return Frame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: payload)
    }

    /// The next data frame (text or binary), answering pings on the way when ``answersPings``;
    /// throws `.closedByPeer` with a close frame's code in ``lastClose`` if the server closes.
    public func readMessage(timeout: Double? = nil) throws(HTTPTestClientError) -> Frame {
        while true {
            let frame = try readFrame(timeout: timeout)
            switch frame.opcode {
            case Self.ping where answersPings:
                try http.write(Self.frame(opcode: Self.pong, payload: frame.payload))
            case Self.pong, Self.ping:
                continue
            case Self.close:
                lastClose = frame
                throw .closedByPeer
            default:
                return frame
            }
        }
    }

    /// The next text message.
    public func readText(timeout: Double? = nil) throws(HTTPTestClientError) -> String {
        try readMessage(timeout: timeout).text
    }

    /// The last close frame ``readMessage(timeout:)`` met.
    public private(set) var lastClose: Frame?

    /// Reads frames until the server's close frame (data frames are dropped; pings answered when
    /// ``answersPings``), answers it with a close echoing its code (when `echo`), and returns it;
    /// nil when the connection ended or `seconds` passed without one.
    public func waitForClose(seconds: Double = 5, echo: Bool = true) -> Frame? {
        if let lastClose {
            if echo { try? sendClose(code: lastClose.closeCode) }
            return lastClose
        }
        while true {
            guard let frame = try? readFrame(timeout: seconds) else { return nil }
            if frame.opcode == Self.ping && answersPings { try? http.write(Self.frame(opcode: Self.pong, payload: frame.payload)) }
            if frame.opcode == Self.close {
                lastClose = frame
                if echo { try? sendClose(code: frame.closeCode) }
                return frame
            }
        }
    }

    /// Closes the socket (no close frame).
    public func disconnect() {
        http.close()
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var i = 0
        while i < bytes.count {
            let n = Int(bytes[i]) << 16 | (i + 1 < bytes.count ? Int(bytes[i + 1]) << 8 : 0) | (i + 2 < bytes.count ? Int(bytes[i + 2]) : 0)
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            out.append(i + 1 < bytes.count ? alphabet[n >> 6 & 63] : "=")
            out.append(i + 2 < bytes.count ? alphabet[n & 63] : "=")
            i += 3
        }
        return out
    }
}
