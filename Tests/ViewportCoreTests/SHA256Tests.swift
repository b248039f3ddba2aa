import Testing

@testable import ViewportCore

/// The layout id's hash against FIPS 180-4's test vectors (one block, two blocks, a million bytes
/// fed in uneven pieces), and the digest writer against a plain update of the same bytes.
struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    static func hash(_ bytes: [UInt8], pieces: Int = 1) -> String {
        var sha = SHA256()
        let step = max(1, bytes.count / pieces)
        var at = 0
        while at < bytes.count {
            let end = min(bytes.count, at + step + (at % 7))
            bytes[at..<end].withUnsafeBytes { sha.update($0) }
            at = end
        }
        return hex(sha.finalize())
    }

    @Test func knownVectors() {
        #expect(Self.hash(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hash([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let two = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(Self.hash(two, pieces: 3) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(Self.hash(million, pieces: 97) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func theDigestWriterHashesWhatItIsGiven() {
        var plain = SHA256()
        var w = DigestWriter()
        defer { w.deallocate() }
        var rng = SeededRandom(seed: 3)
        for k in 0..<20_000 {
            let id = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let x = Double(k) * 0.5
            w.u32(UInt32(id.count))
            id.withUnsafeBytes { w.bytes($0) }
            w.double(x)
            plain.update(integer: UInt32(id.count))
            id.withUnsafeBytes { plain.update($0) }
            plain.update(double: x)
        }
        let long = [UInt8](repeating: 7, count: 100_000)
        long.withUnsafeBytes { w.bytes($0) }
        long.withUnsafeBytes { plain.update($0) }
        var written = w.finish()
        #expect(Self.hex(written.finalize()) == Self.hex(plain.finalize()))
    }
}
