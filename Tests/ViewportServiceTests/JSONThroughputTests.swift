import Foundation
import Testing
import ViewportJSON

@testable import ViewportService

/// Throughput of the reader on the shapes it is built for; printed, not asserted (timings on
/// shared CI machines are noise). Run with `swift test -c release -Xswiftc -enable-testing
/// --filter JSONThroughput` for meaningful numbers.
@Suite struct JSONThroughputTests {
    #if DEBUG
    static let itemCount = 50_000
    static let updateCount = 20_000
    #else
    static let itemCount = 1_000_000
    static let updateCount = 2_000_000
    #endif

    /// `{"items":[{"id":"i0","rect":[0,0,375,100],"reuse":"card"},…]}`
    static func layout(items: Int) -> [UInt8] {
        var writer = JSONWriter(capacity: items * 64)
        writer.object { w in
            w.key("items")
            w.array { w in
                for index in 0..<items {
                    w.object { w in
                        w.key("id"); w.string("i\(index)")
                        w.key("rect")
                        w.array { w in
                            w.number(Double(index % 2) * 187.5); w.number(Double(index) * 100.25)
                            w.number(187.5); w.number(100)
                        }
                        w.key("reuse"); w.string(index % 3 == 0 ? "card" : "banner")
                    }
                }
            }
            w.key("contentSize"); w.array { w in w.number(375); w.number(Double(items) * 100.25) }
        }
        return writer.bytes
    }

    /// A decoder like the service's: ids as bytes, rects without allocation.
    static func decodeLayout(_ bytes: [UInt8]) throws -> (count: Int, checksum: Double) {
        try JSONReader.read(bytes) { r in
            var count = 0
            var checksum = 0.0
            var ids: [UInt8] = []
            ids.reserveCapacity(bytes.count / 8)
            try r.readObject { r, key in
                switch key {
                case "items":
                    try r.readArray { r, _ in
                        var hasRect = false
                        try r.readObject { r, key in
                            switch key {
                            case "id": try r.readStringBytes(into: &ids)
                            case "rect":
                                let rect = try r.readDoubleQuad()
                                checksum += rect.1 + rect.3
                                hasRect = true
                            case "reuse": if !r.readNullIfPresent() { _ = try r.withStringBytes { $0.count } }
                            default: throw r.unknownField(key)
                            }
                        }
                        if !hasRect { throw r.missingField("rect") }
                        count += 1
                    }
                case "contentSize": _ = try r.readDoublePair()
                default: throw r.unknownField(key)
                }
            }
            try r.finish()
            return (count, checksum)
        }
    }

    @Test func printsLayoutParsingThroughput() throws {
        let bytes = Self.layout(items: Self.itemCount)
        var best = Double.infinity
        var result = (count: 0, checksum: 0.0)
        for _ in 0..<3 {
            let start = ContinuousClock.now
            result = try Self.decodeLayout(bytes)
            best = min(best, ServiceConfiguration.seconds(ContinuousClock.now - start))
        }
        #expect(result.count == Self.itemCount)
        let megabytes = Double(bytes.count) / 1_000_000
        print(
            "JSONReader layout: \(Self.itemCount) items, \(String(format: "%.1f", megabytes)) MB in "
                + "\(String(format: "%.3f", best)) s = \(String(format: "%.0f", megabytes / best)) MB/s")
    }

    @Test func printsUpdateParsingThroughput() throws {
        let line = Array(#"{"offset":[0,1200],"seq":8}"#.utf8)
        var sum = 0.0
        let start = ContinuousClock.now
        try line.withUnsafeBufferPointer { buffer in
            for _ in 0..<Self.updateCount {
                var r = JSONReader(buffer)
                try r.readObject { r, key in
                    switch key {
                    case "offset": sum += try r.readDoublePair().1
                    case "seq": sum += Double(try r.readInt())
                    default: throw r.unknownField(key)
                    }
                }
                try r.finish()
            }
        }
        let seconds = ServiceConfiguration.seconds(ContinuousClock.now - start)
        #expect(sum == Double(Self.updateCount) * 1208)
        print(
            "JSONReader update lines: \(String(format: "%.2f", Double(Self.updateCount) / seconds / 1e6)) M/s "
                + "(\(String(format: "%.0f", seconds / Double(Self.updateCount) * 1e9)) ns each)")
    }

    @Test func printsWriterThroughput() {
        let start = ContinuousClock.now
        let bytes = Self.layout(items: Self.itemCount)
        let seconds = ServiceConfiguration.seconds(ContinuousClock.now - start)
        print(
            "JSONWriter layout: \(String(format: "%.0f", Double(bytes.count) / 1e6 / seconds)) MB/s")
    }
}
