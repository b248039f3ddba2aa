import Testing
import ViewportCore

@testable import ViewportService

/// The shortcut for `{"offset":[x,y]}` reads exactly what the general reader reads, and leaves
/// everything else (other fields, bad numbers, bad JSON) to it.
@Suite struct UpdateRequestFastPathTests {
    private static func offsetOnly(_ text: String) -> Point? {
        Array(text.utf8).withUnsafeBytes { UpdateRequest.offsetOnly($0) }
    }

    private static func general(_ text: String) -> Point? {
        guard let request = try? Array(text.utf8).withUnsafeBytes({ try UpdateRequest.decodeObject($0) }) else { return nil }
        guard case .offset(let point) = request.destination, request.size == nil, request.velocity == nil, request.seq == nil,
            request.select == nil, request.time == nil, request.phase == .idle
        else { return nil }
        return point
    }

    @Test func takesOnlyAPlainOffsetAndReadsItAsTheGeneralReaderDoes() {
        let accepted = [
            #"{"offset":[0,1200]}"#, #" { "offset" : [ -3.5 , 1e3 ] } "#, "{\"offset\":[0,1]}\n", #"{"offset":[0.1,-0]}"#,
            #"{"offset":[123456789012345678,2.2250738585072014e-308]}"#,
        ]
        for text in accepted {
            let fast = Self.offsetOnly(text)
            #expect(fast != nil, "\(text)")
            #expect(fast == Self.general(text), "\(text)")
        }
        let declined = [
            #"{"offset":[0,1200],"seq":3}"#, #"{"seq":3,"offset":[0,1]}"#, #"{"offset":[0,1,2]}"#, #"{"offset":[0]}"#,
            #"{"offset":[0,1e400]}"#, #"{"offset":[0,NaN]}"#, #"{"offset":[0,01]}"#, #"{"offset":[0,1]}x"#, #"{"offset":[0,1]"#,
            #"{"offse\u0074":[0,1]}"#, #"{"offset":"0,1"}"#, #"[0,1]"#, "", #"{"offset":[0,1],}"#, #"{"offset":[0,1]}{}"#,
        ]
        for text in declined {
            #expect(Self.offsetOnly(text) == nil, "\(text)")
        }
    }

    @Test func randomOffsetsReadTheSameBothWays() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("UpdateRequestFastPathTests seed \(seed)")
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        for _ in 0..<2000 {
            let x = Double(Int64(bitPattern: next() << 11) >> Int64(next() % 60)) / Double(1 << (next() % 20))
            let y = Double(next() % 10_000_000) / 8
            let text = #"{"offset":[\#(x),\#(y)]}"#
            #expect(Self.offsetOnly(text) == Self.general(text), "seed \(seed): \(text)")
            #expect(Self.offsetOnly(text) == Point(x: x, y: y), "seed \(seed): \(text)")
        }
    }
}
