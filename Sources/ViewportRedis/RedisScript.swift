/// A Lua script run with `EVALSHA`. Its SHA-1 (lowercase hex) is computed here, so the first
/// call needs no `SCRIPT LOAD`: a server that does not have it answers `NOSCRIPT` and the
/// connection sends it once as `EVAL` (which caches it on the server).
public struct RedisScript: Sendable, Hashable {
    public let source: String
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        self.sha1 = SHA1.hex(Array(source.utf8))
    }
}
