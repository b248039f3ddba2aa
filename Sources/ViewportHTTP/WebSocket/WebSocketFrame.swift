/// Builds the frames the server sends (RFC 6455 §5.2): always final (one frame per message) and
/// never masked (only clients mask).
public enum WebSocketFrame {
    /// One unmasked final frame: header then payload, in one buffer (one `send`).
    public static func encode(_ opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 10)
        append(opcode, payload: payload, to: &out)
        return out
    }

    /// Appends one unmasked final frame to `out` (replies to pipelined messages go out together).
    public static func append(_ opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(0x80 | opcode.rawValue)
        switch payload.count {
        case 0...125:
            out.append(UInt8(payload.count))
        case 126...0xFFFF:
            out.append(126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(truncatingIfNeeded: payload.count))
        default:
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> UInt64(shift))) }
        }
        out.append(contentsOf: payload)
    }

    /// One unmasked final frame.
    public static func encode(_ opcode: WebSocketOpcode, payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { encode(opcode, payload: $0) }
    }

    /// A close frame with `code` (nil: an empty close frame) and a reason cut to fit the
    /// 125-byte control-frame limit (at a character boundary).
    public static func close(code: UInt16?, reason: String = "") -> [UInt8] {
        guard let code else { return encode(.close, payload: []) }
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]
        var room = 123
        for scalar in reason.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            guard bytes.count <= room else { break }
            payload += bytes
            room -= bytes.count
        }
        return encode(.close, payload: payload)
    }
}
