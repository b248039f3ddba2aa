import Testing
import ViewportTestSupport

@testable import ViewportJSON

private func written(_ body: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter(capacity: 64)
    body(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

@Suite struct JSONWriterTests {
    @Test func writesIntegralNumbersWithoutAFraction() {
        #expect(written { $0.number(1200) } == "1200")
        #expect(written { $0.number(-5) } == "-5")
        #expect(written { $0.number(-0.0) } == "0")
        #expect(written { $0.number(9_007_199_254_740_991) } == "9007199254740991")
        #expect(written { $0.int(Int.min) } == "-9223372036854775808")
        #expect(written { $0.int(0) } == "0")
    }

    @Test func writesOtherNumbersInShortestValidForm() throws {
        #expect(written { $0.number(0.1) } == "0.1")
        #expect(written { $0.number(1e-7) } == "1e-07")
        #expect(written { $0.number(1.7976931348623157e308) } == "1.7976931348623157e+308")
        #expect(written { $0.number(9_007_199_254_740_992) } == "9007199254740992.0")
        #expect(written { $0.number(1e16) } == "1e+16")
        #expect(written { $0.number(-2.5) } == "-2.5")
    }

    @Test func writtenDoublesReadBackExactly() throws {
        var random = TestRandom(seed: 42)
        var values: [Double] = [
            0, -0.0, 0.1, 1e-7, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            Double.leastNormalMagnitude.nextDown, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, .leastNormalMagnitude, 123456789.123, 1e21, 1e22, 1e23, 0.5, -1,
        ]
        for _ in 0..<20_000 {
            // Random bit patterns cover subnormals and huge values; skip NaN and infinity.
            let value = Double(bitPattern: random.next())
            if value.isFinite { values.append(value) }
            values.append(Double.random(in: -100_000...100_000, using: &random).rounded() / 4)
        }
        var writer = JSONWriter(capacity: 1 << 20)
        writer.array { w in for value in values { w.number(value) } }
        let back = try JSONReader.read(writer.bytes) { r in
            var read: [Double] = []
            try r.readArray { r, _ in read.append(try r.readDouble()) }
            try r.finish()
            return read
        }
        #expect(back.count == values.count)
        for (value, readBack) in zip(values, back) where value != readBack {
            Issue.record("\(value) read back as \(readBack)")
        }
    }

    @Test func escapesEveryControlCharacterAndKeepsUnicode() throws {
        var text = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        text += "\"\\/ é€😀\u{7F}\u{2028}"
        let json = written { $0.string(text) }
        #expect(json.hasPrefix(#""\u0000\u0001"#))
        #expect(json.contains(#"\b\t\n\u000b\f\r"#))
        #expect(json.contains(#"\"\\/ é€😀"#))
        for byte in json.utf8 { #expect(byte >= 0x20) }
        let back = try JSONReader.read(json) { try $0.readString() }
        #expect(back == text)
    }

    @Test func writesStringsFromBytes() {
        #expect(written { $0.string(utf8: Array("a\"b".utf8)) } == #""a\"b""#)
    }

    @Test func separatesMembersAndElementsWithCommas() {
        let json = written { w in
            w.object { w in
                w.key("seq"); w.int(7)
                w.key("offset"); w.array { w in w.number(0); w.number(1200) }
                w.key("empty"); w.array { _ in }
                w.key("create")
                w.array { w in
                    w.object { w in w.key("id"); w.string("2/1"); w.key("view"); w.int(9) }
                    w.object { w in w.key("ok"); w.bool(true); w.key("none"); w.null() }
                }
                w.key(escaping: "dyn\"key"); w.bool(false)
            }
            w.raw(byte: 0x0A)
            w.object { _ in }
        }
        #expect(
            json == #"{"seq":7,"offset":[0,1200],"empty":[],"create":[{"id":"2/1","view":9},{"ok":true,"none":null}],"dyn\"key":false}"# + "\n{}")
    }

    @Test func growsPastItsInitialCapacityKeepingEveryByte() {
        var writer = JSONWriter(capacity: 1)
        writer.array { w in for k in 0..<5_000 { w.string("item-\(k)") } }
        let expected = "[" + (0..<5_000).map { "\"item-\($0)\"" }.joined(separator: ",") + "]"
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        let count = writer.count
        #expect(count == expected.utf8.count)
        writer.removeAll()
        let isEmpty = writer.isEmpty
        #expect(isEmpty)
        writer.int(-42)
        #expect(writer.bytes == Array("-42".utf8))
    }
}
