import Testing
import ViewportCore
import ViewportTestSupport

/// Sticky headers against a brute-force model of API behaviour: the last header above the
/// viewport's top whose section is still on screen is pinned at the top, pushed up by the next.
struct StickyHeaderTests {
    /// Sections of a header (44 pt, sticky) and a few rows.
    static func specs(sections: [Int]) -> [ItemSpec] {
        var items: [ItemSpec] = []
        var y = 0.0
        for (s, rows) in sections.enumerated() {
            items.append(ItemSpec(id: "h\(s)", rect: Rect(x: 0, y: y, width: 375, height: 44), reuse: "header"))
            y += 44
            for r in 0..<rows {
                items.append(ItemSpec(id: "s\(s)r\(r)", rect: Rect(x: 0, y: y, width: 375, height: 60), reuse: "row"))
                y += 60
            }
        }
        return items
    }

    static func layout(sections: [Int]) throws -> Layout {
        var builder = LayoutBuilder()
        for item in specs(sections: sections) {
            try builder.append(id: item.id, rect: item.rect, reuse: item.reuse, sticky: item.id.hasPrefix("h"))
        }
        return try builder.build()
    }

    /// Brute force over the specs: (pinned item, pinned y). The content ends at the last item's
    /// bottom (no content size is sent).
    static func expectedPin(_ specs: [ItemSpec], offsetY: Double, insetTop: Double) -> (Int, Double)? {
        let top = offsetY + insetTop
        let headers = specs.indices.filter { specs[$0].id.hasPrefix("h") }
        let contentHeight = specs.map { $0.rect.y + $0.rect.height }.max() ?? 0
        guard let index = headers.lastIndex(where: { specs[$0].rect.y < top }) else { return nil }
        let header = headers[index]
        let nextTop = index + 1 < headers.count ? specs[headers[index + 1]].rect.y : contentHeight
        guard nextTop > top else { return nil }
        return (header, max(specs[header].rect.y, min(top, nextTop - 44)))
    }

    @Test(arguments: 0..<8)
    func headersPinWhileTheirSectionIsOnScreenAndArePushedByTheNext(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 500)
        let sections = (0..<12).map { _ in Int.random(in: 0...8, using: &rng) }
        let specs = Self.specs(sections: sections)
        let layout = try Self.layout(sections: sections)
        let contentHeight = specs.map { $0.rect.y + $0.rect.height }.max() ?? 0
        let insetTop = seed % 2 == 0 ? 0.0 : 64
        var session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(viewport: Size(width: 375, height: 300), buffer: 10, insets: Insets(top: insetTop, left: 0, bottom: 0, right: 0)))
        var shown = Dictionary(uniqueKeysWithValues: session.lastPlan.create.map { ($0.item, $0.view) })
        var pinnedView: (Int, Double)? = session.lastPlan.pin.first.map { ($0.item, $0.rect.y) }
        #expect(session.pinned?.item == Self.expectedPin(specs, offsetY: 0, insetTop: insetTop)?.0)
        var y = 0.0
        for step in 0..<400 {
            y = step % 50 == 0 ? Double(Int.random(in: -100...Int(contentHeight), using: &rng)) : y + Double(Int.random(in: -25...40, using: &rng))
            let plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: y)))
            for entry in plan.recycle + plan.discard { shown[entry.item] = nil }
            for entry in plan.reuse { shown[entry.item] = entry.view }
            for entry in plan.create { shown[entry.item] = entry.view }
            let expected = Self.expectedPin(specs, offsetY: y, insetTop: insetTop)
            // Materialized: the region's items plus the pinned header.
            var materialized = Set(oracle(specs, SentRegion(offset: Point(x: 0, y: y), viewport: Size(width: 375, height: 300), buffer: 10)))
            if let (item, _) = expected { materialized.insert(item) }
            #expect(Set(shown.keys) == materialized, "step \(step) y \(y)")
            #expect(session.pinned?.item == expected?.0)
            #expect(session.pinned?.rect.y == expected?.1)
            // The plan reports every change of the pin.
            for entry in plan.unpin {
                #expect(entry.item == pinnedView?.0)
                #expect(entry.rect == specs[entry.item].rect)
                pinnedView = nil
            }
            for entry in plan.pin {
                #expect(shown[entry.item] == entry.view)
                pinnedView = (entry.item, entry.rect.y)
            }
            if let expected {
                #expect(pinnedView?.0 == expected.0 && pinnedView?.1 == expected.1, "step \(step): the client's pin is stale")
            } else if let (item, _) = pinnedView {
                // Unpinned by leaving: it must be gone from the client.
                #expect(shown[item] == nil || plan.unpin.contains { $0.item == item })
                pinnedView = nil
            }
        }
    }

    @Test func theNextHeaderPushesThePinnedOneUp() throws {
        // h0 at 0, rows to 164, h1 at 164.
        let layout = try Self.layout(sections: [2, 2])
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 300), buffer: 0))
        #expect(session.pinned == nil)
        let pinnedAt = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 50)))
        #expect(pinnedAt.pin == [PinEntry(item: 0, view: session.visible[0].view, rect: Rect(x: 0, y: 50, width: 375, height: 44))])
        // h1's top at 164 reaches the pinned header's bottom at offset 120: pushed.
        let pushed = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 140)))
        #expect(pushed.pin.first?.rect.y == 120)
        // Past h1's top, h1 is pinned and h0 (its rect off the region, its section gone) leaves.
        let next = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 200)))
        #expect(next.pin.map(\.item) == [3])
        #expect(next.recycle.map(\.item).contains(0))
        // Back at the top: nothing pinned; h0 unpins in place.
        let top = try session.apply(ViewportUpdate(offset: .zero))
        #expect(session.pinned == nil)
        #expect(top.unpin.map(\.item) == [3] || top.recycle.map(\.item).contains(3))
    }
}
