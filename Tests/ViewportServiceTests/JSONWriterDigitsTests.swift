import Testing

@testable import ViewportService

/// The writer's in-place decimal digits (two per division) and its one-copy keys and strings,
/// against `String(describing:)` and a byte-by-byte reference.
@Suite struct JSONWriterDigitsTests {
    private static func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter(capacity: 16)
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func integersOfEveryLengthAndSignAreWrittenAsSwiftPrintsThem() {
        // Every value around the one- and two-digit fast paths, then the edges of each length.
        var values: [Int] = Array(-120...120) + [999, 1000, 9999, 10_000, 99_999, 100_000, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        print("JSONWriterDigitsTests seed \(seed)")
        var state = seed
        for _ in 0..<10_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.append(Int(truncatingIfNeeded: state) >> Int(state % 63))
        }
        for value in values {
            #expect(Self.written { $0.int(value) } == String(value), "seed \(seed)")
            if value.magnitude < 1 << 53 {
                #expect(Self.written { $0.number(Double(value)) } == String(value), "seed \(seed)")
            }
        }
    }

    @Test func keysAndStringsAreSeparatedAndEscapedAsBefore() {
        let text = Self.written { w in
            w.beginObject()
            w.key("id")
            w.string("card-7")
            w.key("note")
            w.string("a \"quoted\"\\ line\n")
            w.key("list")
            w.beginArray()
            w.string("")
            w.string("x")
            w.endArray()
            w.endObject()
        }
        #expect(text == #"{"id":"card-7","note":"a \"quoted\"\\ line\n","list":["","x"]}"#)
    }
}
