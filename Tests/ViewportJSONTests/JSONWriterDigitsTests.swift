import Testing

@testable import ViewportJSON

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

    @Test func quadsAreWrittenAsFourNumbers() {
        // The fast path's edges (each digit count, 0, -0.0, 99,999,999 and 100,000,000), values
        // it leaves to `rawNumber` (negative, fractional, large), then random mixes of both.
        let edges: [Double] = [
            0, -0.0, 1, 9, 10, 99, 100, 101, 999, 1000, 1001, 9999, 10_000, 10_001, 99_999, 100_000, 100_001,
            999_999, 1_000_000, 1_000_001, 9_999_999, 10_000_000, 10_000_001, 50_000_050, 99_999_999,
            100_000_000, 100_000_001, 99_999_999.5, -1, -50, 0.5, 375.25, 1e-7, 1e15, 2.5e6, 9_007_199_254_740_992,
        ]
        let seed = UInt64.random(in: 0...UInt64.max)
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        var quads: [[Double]] = edges.map { [$0, $0, $0, $0] }
        for a in edges { quads.append([a, 0, 375, 50]); quads.append([0, a, 50, 375]) }
        for _ in 0..<20_000 {
            quads.append((0..<4).map { _ in
                switch next() % 5 {
                case 0: Double(next() % 10)
                case 1: Double(next() % 1_200_000)
                case 2: edges[Int(next() % UInt64(edges.count))]
                case 3: Double(next() % 120_000_000)
                default: Double(Int(next() % 2_000_000) - 1_000_000) / 4
                }
            })
        }
        for q in quads {
            let expected = Self.written { w in
                w.raw(byte: UInt8(ascii: "["))
                for (k, value) in q.enumerated() {
                    if k > 0 { w.raw(byte: UInt8(ascii: ",")) }
                    w.rawNumber(value)
                }
                w.raw(byte: UInt8(ascii: "]"))
            }
            #expect(Self.written { $0.rawQuad(q[0], q[1], q[2], q[3]) } == expected, "\(q), seed \(seed)")
            // After other output, on a small buffer's edge: the one capacity check covers it all.
            #expect(Self.written { w in w.raw("0123456789abc"); w.rawQuad(q[0], q[1], q[2], q[3]) } == "0123456789abc" + expected, "seed \(seed)")
        }
        #expect(Self.written { $0.rawQuad(0, 21_250, 375, 50) } == "[0,21250,375,50]")
        #expect(Self.written { $0.rawQuad(12_345_678, 46_906_850, 375, 99_999_999) } == "[12345678,46906850,375,99999999]")
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
