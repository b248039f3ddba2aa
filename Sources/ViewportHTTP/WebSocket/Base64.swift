/// Standard base64 (RFC 4648 §4, with `=` padding), for the WebSocket handshake: encoding the
/// accept value and checking that a `Sec-WebSocket-Key` decodes to 16 bytes.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil when `text` is not canonical padded base64 (wrong length,
    /// characters outside the alphabet, misplaced `=`, or non-zero bits in the padding).
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        for group in stride(from: 0, to: input.count, by: 4) {
            let isLast = group + 4 == input.count
            var values: [UInt8] = []
            var padding = 0
            for k in 0..<4 {
                let c = input[group + k]
                if c == UInt8(ascii: "=") {
                    guard isLast, k >= 2 else { return nil }
                    padding += 1
                    continue
                }
                guard padding == 0, let value = sextet(c) else { return nil }
                values.append(value)
            }
            let bits = values.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << UInt32(18 - 6 * $1.offset) }
            let produced = 3 - padding
            // Canonical: the bits that padding drops must be zero.
            guard bits & ((1 << UInt32(8 * (3 - produced))) - 1) == 0 else { return nil }
            for k in 0..<produced { out.append(UInt8(truncatingIfNeeded: bits >> UInt32(16 - 8 * k))) }
        }
        return out
    }

    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
