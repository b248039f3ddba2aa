import ViewportCore
import ViewportTestSupport

/// The core tests' random numbers: seeded, printed, replayable (see `TestRandom`).
typealias SeededRandom = TestRandom

struct ItemSpec {
    var id: String
    var rect: Rect
    var reuse: String?
}

func makeLayout(_ items: [ItemSpec], contentSize: Size? = nil) throws -> Layout {
    var builder = LayoutBuilder(expectedCount: items.count)
    for item in items { try builder.append(id: item.id, rect: item.rect, reuse: item.reuse) }
    if let contentSize { try builder.setContentSize(contentSize) }
    return try builder.build()
}

/// The region a test expects, computed from what the test sent with the test's own arithmetic
/// (docs/api.md "The materialized region"): never the session's `region` nor `Region.intersects`, so a session
/// that computes its region wrongly (a size ignored after a rotation, a buffer misapplied) fails.
struct SentRegion: CustomStringConvertible {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double

    init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        (self.minX, self.minY, self.maxX, self.maxY) = (minX, minY, maxX, maxY)
    }

    /// The viewport at `offset`, `buffer` points wider on every side.
    init(offset: Point, viewport: Size, buffer: Double) {
        self.init(
            minX: offset.x - buffer, minY: offset.y - buffer,
            maxX: offset.x + viewport.width + buffer, maxY: offset.y + viewport.height + buffer)
    }

    /// Strict intersection: an item that only touches an edge is outside, a zero-size item
    /// strictly inside is inside.
    func meets(_ r: Rect) -> Bool {
        r.x < maxX && r.x + r.width > minX && r.y < maxY && r.y + r.height > minY
    }

    /// The same edges as the core's `Region`, for queries of the index under test.
    var region: Region { Region(minX: minX, minY: minY, maxX: maxX, maxY: maxY) }

    var description: String { "[\(minX), \(minY)] – [\(maxX), \(maxY)]" }
}

/// Brute force over the rects the test made: every item strictly intersecting `region`, in order.
func oracle(_ rects: [Rect], _ region: SentRegion) -> [Int] {
    rects.indices.filter { region.meets(rects[$0]) }
}

/// Brute force over a layout's own rects, for tests that check those rects against a model of
/// their own (stack layouts against `FlowModel`); the region is still the test's.
func oracle(_ layout: Layout, _ region: SentRegion) -> [Int] {
    oracle(Array(layout.rects), region)
}

/// Brute force over the test's item specs.
func oracle(_ specs: [ItemSpec], _ region: SentRegion) -> [Int] {
    oracle(specs.map(\.rect), region)
}

/// What a test sent to a session, tracked by the test: the offset (as sent), the viewport
/// (including sizes sent with updates, as after a rotation) and the buffer.
struct SentState {
    var offset: Point
    var viewport: Size
    let buffer: Double

    /// Records an update with an offset (and maybe a new size).
    mutating func send(offset: Point, size: Size? = nil) {
        self.offset = offset
        if let size { viewport = size }
    }

    var region: SentRegion { SentRegion(offset: offset, viewport: viewport, buffer: buffer) }
    var screen: SentRegion { SentRegion(offset: offset, viewport: viewport, buffer: 0) }
}

/// The reuse identifier of each spec as the client knows it (nil or empty: never reused).
func reuseNames(_ specs: [ItemSpec]) -> [String?] {
    specs.map { $0.reuse.flatMap { $0.isEmpty ? nil : $0 } }
}

/// A pool's cap as docs/api.md "Plans" states it: `perReuse[name]`, else `max`, else none.
func poolCap(_ caps: PoolCaps, _ reuse: String) -> Int? {
    if let own = caps.perReuse[reuse] { return own }
    return caps.max
}

enum LayoutKind: String, CaseIterable {
    case vertical, horizontal, grid, scattered
}

/// Random layouts of every shape the index must handle. Integer coordinates make items touch the
/// region's edges often.
func randomLayoutSpecs(_ kind: LayoutKind, count: Int, using rng: inout SeededRandom) -> [ItemSpec] {
    let reuses: [String?] = ["a", "b", "c", nil, ""]
    var items: [ItemSpec] = []
    var cursor = 0.0
    let columns = Int.random(in: 1...5, using: &rng)
    for i in 0..<count {
        let reuse = reuses.randomElement(using: &rng) ?? nil
        let rect: Rect
        switch kind {
        case .vertical:
            let h = Double(Int.random(in: 0...120, using: &rng))
            rect = Rect(x: 0, y: cursor, width: 375, height: h)
            cursor += h + Double(Int.random(in: 0...10, using: &rng))
        case .horizontal:
            let w = Double(Int.random(in: 0...120, using: &rng))
            rect = Rect(x: cursor, y: 0, width: w, height: 44)
            cursor += w + Double(Int.random(in: 0...10, using: &rng))
        case .grid:
            let cell = 60.0
            rect = Rect(x: Double(i % columns) * (cell + 5), y: Double(i / columns) * (cell + 5), width: cell, height: cell)
        case .scattered:
            rect = Rect(
                x: Double(Int.random(in: -100...1500, using: &rng)), y: Double(Int.random(in: -100...3000, using: &rng)),
                width: Double(Int.random(in: 0...400, using: &rng)), height: Double(Int.random(in: 0...400, using: &rng)))
        }
        items.append(ItemSpec(id: "\(kind.rawValue)-\(i)", rect: rect, reuse: reuse))
    }
    return items
}
