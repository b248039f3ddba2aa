import ViewportCore

/// Deterministic random numbers (SplitMix64), so a failing seed can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

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

/// Brute force: every item strictly intersecting the region, in layout order.
func oracle(_ layout: Layout, _ region: Region) -> [Int] {
    (0..<layout.count).filter { region.intersects(layout.rects[$0]) }
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
