/// Redis Cluster's hash slots: a key lives in slot CRC16(key) mod 16,384, where CRC16 is the
/// XMODEM variant (polynomial 0x1021, initial value 0, no reflection) and `key` is only the part
/// inside the first `{…}` when that part is not empty (a hash tag: keys sharing a tag share a
/// slot, so one script or transaction may touch them all).
public enum RedisHashSlot {
    public static let count = 16_384

    /// The slot of `key`.
    /// - Complexity: O(key length).
    public static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer { bytes in
            // The first `{`, then the first `}` after it; a tag only when something is between.
            if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
                let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
            {
                return Int(crc16(bytes[(open + 1)..<close]) & UInt16(count - 1))
            }
            return Int(crc16(bytes[...]) & UInt16(count - 1))
        }
    }

    /// The slot of a key given as text.
    public static func of(_ key: String) -> Int { of(Array(key.utf8)) }

    /// CRC16/XMODEM of `bytes` (the Redis Cluster specification's `crc16`; `"123456789"` →
    /// 0x31C3).
    /// - Complexity: O(bytes).
    public static func crc16(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    /// CRC16/XMODEM of `bytes`.
    public static func crc16(_ bytes: [UInt8]) -> UInt16 {
        bytes.withUnsafeBufferPointer { crc16($0[...]) }
    }

    /// A short hash tag of each slot: a key holding `{` + `tag(forSlot: s)` + `}` is in slot `s`
    /// (for records that must share a slot with another key's, in one script).
    /// - Complexity: O(1) (the table is made on first use: about 170,000 short CRCs).
    public static func tag(forSlot slot: Int) -> String { tags[slot] }

    /// The first base-36 number (`0`, `1`, … `z`, `10`…) in each slot.
    private static let tags: [String] = {
        var found = [String](repeating: "", count: count)
        var left = count
        var n = 0
        while left > 0 {
            let tag = String(n, radix: 36)
            let slot = of(Array(tag.utf8))
            if found[slot].isEmpty {
                found[slot] = tag
                left -= 1
            }
            n += 1
        }
        return found
    }()

    /// The CRC of each byte value, one byte at a time instead of one bit.
    private static let table: [UInt16] = (0..<256).map { (value: Int) -> UInt16 in
        var crc = UInt16(value) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}
