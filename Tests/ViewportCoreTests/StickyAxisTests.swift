import Testing
import ViewportCore
import ViewportTestSupport

/// Sticky items pin along the layout's axis (docs/api.md "Viewability, direction-aware buffers,
/// time"): at the left (`offset.x + insets.left`) when it is `x`, against a brute-force model.
struct StickyAxisTests {
    /// Sections of a header (44 pt wide, sticky) and a few columns (60 pt), along x.
    static func layout(sections: [Int], axis: Axis = .x) throws -> Layout {
        var builder = LayoutBuilder()
        builder.setAxis(axis)
        var x = 0.0
        for (s, columns) in sections.enumerated() {
            try builder.append(id: "h\(s)", rect: Rect(x: x, y: 0, width: 44, height: 300), reuse: "header", sticky: true)
            x += 44
            for c in 0..<columns {
                try builder.append(id: "s\(s)c\(c)", rect: Rect(x: x, y: 0, width: 60, height: 300), reuse: "column")
                x += 60
            }
        }
        return try builder.build()
    }

    /// Brute force: (pinned item, pinned x).
    static func expectedPin(_ layout: Layout, offsetX: Double, insetLeft: Double) -> (Int, Double)? {
        let left = offsetX + insetLeft
        let headers = (0..<layout.count).filter { layout.id(at: $0).hasPrefix("h") }
        guard let index = headers.lastIndex(where: { layout.rects[$0].x < left }) else { return nil }
        let header = headers[index]
        let nextLeft = index + 1 < headers.count ? layout.rects[headers[index + 1]].x : layout.contentSize.width
        guard nextLeft > left else { return nil }
        return (header, max(layout.rects[header].x, min(left, nextLeft - 44)))
    }

    @Test(arguments: 0..<6)
    func headersPinAtTheLeftAlongAnXLayoutAndArePushedByTheNext(seed: Int) throws {
        print("StickyAxisTests seed \(seed)")
        var rng = SeededRandom(seed: UInt64(seed) &+ 900)
        let layout = try Self.layout(sections: (0..<12).map { _ in Int.random(in: 0...8, using: &rng) })
        #expect(layout.axis == .x)
        let insetLeft = seed % 2 == 0 ? 0.0 : 30
        var session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(viewport: Size(width: 320, height: 300), buffer: 10, insets: Insets(top: 7, left: insetLeft, bottom: 0, right: 0)))
        var shown = Dictionary(uniqueKeysWithValues: session.lastPlan.create.map { ($0.item, $0.view) })
        var x = 0.0
        for step in 0..<400 {
            x = step % 50 == 0 ? Double(Int.random(in: -100...Int(layout.contentSize.width), using: &rng)) : x + Double(Int.random(in: -25...40, using: &rng))
            let plan = try session.apply(ViewportUpdate(offset: Point(x: x, y: 0)))
            for entry in plan.recycle + plan.discard { shown[entry.item] = nil }
            for entry in plan.reuse { shown[entry.item] = entry.view }
            for entry in plan.create { shown[entry.item] = entry.view }
            let expected = Self.expectedPin(layout, offsetX: x, insetLeft: insetLeft)
            // The region from what was sent: x, the viewport 320 × 300, a buffer of 10.
            var materialized = Set(oracle(Array(layout.rects), SentRegion(offset: Point(x: x, y: 0), viewport: Size(width: 320, height: 300), buffer: 10)))
            if let (item, _) = expected { materialized.insert(item) }
            #expect(Set(shown.keys) == materialized, "seed \(seed) step \(step) x \(x)")
            #expect(session.pinned?.item == expected?.0, "seed \(seed) step \(step)")
            #expect(session.pinned?.rect.x == expected?.1, "seed \(seed) step \(step)")
            if let pinned = session.pinned {
                #expect(pinned.rect.y == layout.rects[pinned.item].y)  // only x moves
            }
            for entry in plan.pin { #expect(shown[entry.item] == entry.view && entry.rect == session.pinned?.rect) }
        }
    }

    @Test func theSameHeadersAlongYPinAtTheTopAsBefore() throws {
        // Built along y, a header row whose top scrolled away pins at the top; x is ignored.
        var builder = LayoutBuilder()
        try builder.append(id: "h0", rect: Rect(x: 0, y: 0, width: 375, height: 44), reuse: "h", sticky: true)
        try builder.append(id: "r0", rect: Rect(x: 0, y: 44, width: 375, height: 500), reuse: "r")
        let layout = try builder.build()
        #expect(layout.axis == .y)
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 300), buffer: 0))
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 50, y: 100)))
        #expect(plan.pin.first?.rect == Rect(x: 0, y: 100, width: 375, height: 44))
    }

    @Test func aLayoutsIDCoversStickyItemsAlongXButNotAnAxisWithoutThem() throws {
        func layout(sticky: Bool, axis: Axis) throws -> Layout {
            var builder = LayoutBuilder()
            builder.setAxis(axis)
            try builder.append(id: "h", rect: Rect(x: 0, y: 0, width: 44, height: 44), reuse: "h", sticky: sticky)
            try builder.append(id: "r", rect: Rect(x: 44, y: 0, width: 100, height: 44), reuse: "r")
            return try builder.build()
        }
        let plainY = try layout(sticky: false, axis: .y)
        let plainX = try layout(sticky: false, axis: .x)
        let stickyY = try layout(sticky: true, axis: .y)
        let stickyX = try layout(sticky: true, axis: .x)
        #expect(plainY.digest == plainX.digest)
        #expect(stickyX.digest != stickyY.digest && stickyX.digest != plainX.digest)
        // Generated along x with a sticky item: the same id as the same items sent with axis x.
        var stack = SectionStack(axis: .x)
        var builder = LayoutBuilder()
        try stack.append(SectionSpec(id: "a", shape: .items([
            SectionSpec.Item(id: "h", rect: Rect(x: 0, y: 0, width: 44, height: 44), reuse: "h", sticky: true),
            SectionSpec.Item(id: "r", rect: Rect(x: 44, y: 0, width: 100, height: 44), reuse: "r"),
        ])), to: &builder)
        let generated = try builder.build()
        #expect(generated.axis == .x && generated.digest == stickyX.digest)
    }
}
