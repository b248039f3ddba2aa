import Crypto

/// A Lua script run with `EVALSHA`. Its SHA-1 (lowercase hex) is computed here, so the first
/// call needs no `SCRIPT LOAD`: a server that does not have it answers `NOSCRIPT` and the
/// connection sends it once as `EVAL` (which caches it on the server).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        // Redis names scripts by the SHA-1 of their source (nothing security-relevant).
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in Insecure.SHA1.hash(data: Array(source.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 15)])
        }
        self.sha1 = String(decoding: hex, as: UTF8.self)
    }
}
