/// Turns the bytes a client sends into WebSocket events (RFC 6455 §5): frames are checked,
/// unmasked, and fragments reassembled into messages; control frames come out as soon as they
/// are complete, even between the fragments of a message.
///
/// Pure (no I/O): feed bytes with ``append(_:)`` and take events with ``next()`` until it answers
/// nil (more bytes needed). After a ``Event/close(code:reason:)`` or ``Event/failure(code:reason:)``
/// the parser is finished and answers nil forever.
///
/// Limits are enforced as soon as a frame's header arrives: a data frame whose declared length
/// would take its message past `maxMessageBytes` fails with 1009 before any of its payload is
/// buffered.
public struct WebSocketFrameParser: Sendable {
    /// What the bytes so far amount to.
    public enum Event: Sendable, Equatable {
        /// A complete message (text is valid UTF-8).
        case message(binary: Bool, payload: [UInt8])
        /// A ping; answer a pong with the same payload.
        case ping([UInt8])
        /// A pong (an answer to our ping, or unsolicited).
        case pong([UInt8])
        /// The peer closes: its code (nil for an empty close frame) and reason.
        case close(code: UInt16?, reason: String)
        /// The peer broke the protocol: close with this code.
        case failure(code: UInt16, reason: String)
    }

    /// Largest reassembled message accepted.
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    /// Where unparsed bytes start in `buffer` (consumed bytes are dropped in batches).
    private var start = 0
    /// The opcode (text or binary) of the message whose fragments are arriving, if any.
    private var fragmentedOpcode: WebSocketOpcode?
    private var message: [UInt8] = []
    private var finished = false

    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Bytes received and not handed out yet: unparsed frames plus a message being reassembled.
    public var bufferedBytes: Int { buffer.count - start + message.count }

    /// Bytes received from the peer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !finished else { return }
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received from the peer.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next event, or nil when more bytes are needed (or the parser is finished).
    public mutating func next() -> Event? {
        while !finished {
            let available = buffer.count - start
            guard available >= 2 else { return nil }
            let b0 = buffer[start], b1 = buffer[start + 1]
            let fin = b0 & 0x80 != 0
            guard b0 & 0x70 == 0 else { return fail(WebSocketCloseCode.protocolError, "reserved bits set (no extension was negotiated)") }
            guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else {
                return fail(WebSocketCloseCode.protocolError, "unknown opcode \(b0 & 0x0F)")
            }
            guard b1 & 0x80 != 0 else { return fail(WebSocketCloseCode.protocolError, "client frames must be masked") }
            let short = Int(b1 & 0x7F)
            if opcode.isControl {
                guard fin else { return fail(WebSocketCloseCode.protocolError, "control frames must not be fragmented") }
                guard short <= 125 else { return fail(WebSocketCloseCode.protocolError, "control frame payload over 125 bytes") }
            }
            var headerLength = 2
            var length: UInt64
            switch short {
            case 126:
                headerLength += 2
                guard available >= headerLength else { return nil }
                length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            case 127:
                headerLength += 8
                guard available >= headerLength else { return nil }
                length = 0
                for k in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + k]) }
                guard length >> 63 == 0 else { return fail(WebSocketCloseCode.protocolError, "64-bit payload length with the top bit set") }
            default:
                length = UInt64(short)
            }
            switch opcode {
            case .continuation:
                guard fragmentedOpcode != nil else { return fail(WebSocketCloseCode.protocolError, "continuation frame without a message to continue") }
            case .text, .binary:
                guard fragmentedOpcode == nil else { return fail(WebSocketCloseCode.protocolError, "new message before the previous one's final fragment") }
            default:
                break
            }
            if !opcode.isControl {
                // Checked before the payload is read: a huge declared length is never buffered.
                guard length <= UInt64(max(0, maxMessageBytes - message.count)) else {
                    return fail(WebSocketCloseCode.messageTooBig, "message larger than \(maxMessageBytes) bytes")
                }
            }
            let maskOffset = start + headerLength
            headerLength += 4
            let payloadLength = Int(length)
            guard available >= headerLength + payloadLength else { return nil }
            let payloadStart = start + headerLength
            let mask = (buffer[maskOffset], buffer[maskOffset + 1], buffer[maskOffset + 2], buffer[maskOffset + 3])
            start = payloadStart + payloadLength
            if opcode.isControl {
                let payload = Self.unmask(buffer[payloadStart..<(payloadStart + payloadLength)], mask)
                switch opcode {
                case .ping: return .ping(payload)
                case .pong: return .pong(payload)
                default: return closeEvent(payload)
                }
            }
            if opcode != .continuation { fragmentedOpcode = opcode }
            message += Self.unmask(buffer[payloadStart..<(payloadStart + payloadLength)], mask)
            guard fin, let kind = fragmentedOpcode else { continue }
            fragmentedOpcode = nil
            let payload = message
            message = []
            if kind == .text && !Self.isValidUTF8(payload) {
                return fail(WebSocketCloseCode.invalidPayload, "text message is not valid UTF-8")
            }
            return .message(binary: kind == .binary, payload: payload)
        }
        return nil
    }

    private mutating func closeEvent(_ payload: [UInt8]) -> Event {
        if payload.isEmpty {
            finished = true
            return .close(code: nil, reason: "")
        }
        guard payload.count >= 2 else { return fail(WebSocketCloseCode.protocolError, "close frame with a 1-byte payload") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidOnTheWire(code) else { return fail(WebSocketCloseCode.protocolError, "invalid close code \(code)") }
        let reason = Array(payload[2...])
        guard Self.isValidUTF8(reason) else { return fail(WebSocketCloseCode.invalidPayload, "close reason is not valid UTF-8") }
        finished = true
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }

    private mutating func fail(_ code: UInt16, _ reason: String) -> Event {
        finished = true
        buffer = []
        message = []
        return .failure(code: code, reason: reason)
    }

    private static func unmask(_ bytes: ArraySlice<UInt8>, _ mask: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        var out = Array(bytes)
        // The key read from the tuple's own bytes (an array of it was an allocation a message).
        withUnsafeBytes(of: mask) { key in
            out.withUnsafeMutableBufferPointer { out in
                for i in 0..<out.count { out[i] ^= key[i & 3] }
            }
        }
        return out
    }

    /// Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF), as RFC 6455 §8.1
    /// requires of text messages.
    ///
    /// ASCII, which every JSON message in practice is, is valid: one pass over the bytes. Anything
    /// else goes through the standard library's validation, which builds a `String` and runs its
    /// generic code (a metadata lookup and an allocation a message: `perf` of a pipelined
    /// WebSocket stream had it at about 6 % of the connection thread).
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        let ascii = bytes.withUnsafeBufferPointer { buffer in
            var seen: UInt8 = 0
            for byte in buffer { seen |= byte }
            return seen < 0x80
        }
        return ascii || bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
    }
}
