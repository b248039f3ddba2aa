import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Generated layouts (`sections`) and sticky headers over HTTP, against models written here from
/// the documented rules (docs/guides/generated-layouts.md), not from the service's code: the
/// item rects and the content size are derived by hand from the sections sent; materialization is
/// brute force (`ClientModel`); the pinned header is the last sticky header whose top has scrolled
/// above the viewport's top (`offset.y + insets.top`) while its section (up to the next sticky
/// header) is still below it, pushed up by the next header.
@Suite struct SectionsHTTPTests {
    /// Random sections as JSON, with the items they stand for and the content size, derived by
    /// hand: sections stack along `axis` inside `insets`, `spacing` apart, each where the previous
    /// one ends; list item `k` at `origin + k × (size + spacing)` along the list's axis; `pages` a
    /// list without spacing; `sizes` each after the previous one; grid item `k` in column
    /// `k mod columns` of row `k div columns`, rows along the stack's axis; `items` relative to
    /// the section's origin; the content size is the items' extent plus the trailing insets.
    static func randomSections(using g: inout TestRandom) -> (json: String, items: [TestItem], contentSize: [Double]) {
        let alongY = Int.random(in: 0..<4, using: &g) != 0
        let insets = [Double(Int.random(in: 0...20, using: &g)), Double(Int.random(in: 0...12, using: &g)), Double(Int.random(in: 0...30, using: &g)), Double(Int.random(in: 0...9, using: &g))]
        let spacing = Double(Int.random(in: 0...12, using: &g))
        var items: [TestItem] = []
        var sections: [String] = []
        var cursor = alongY ? insets[0] : insets[1]
        for s in 0..<Int.random(in: 1...5, using: &g) {
            if s > 0 { cursor += spacing }
            let (ox, oy) = alongY ? (insets[1], cursor) : (cursor, insets[0])
            var end = cursor
            let reuse = ["row", "cell", nil].randomElement(using: &g) ?? nil
            func add(_ id: String, _ r: [Double], _ itemReuse: String?) {
                items.append(TestItem(id: id, rect: r, reuse: itemReuse))
                end = max(end, alongY ? r[1] + r[3] : r[0] + r[2])
            }
            func line(_ y: Bool, _ position: Double, _ w: Double, _ h: Double) -> [Double] {
                y ? [ox, oy + position, w, h] : [ox + position, oy, w, h]
            }
            let id = "s\(s)"
            let reuseField = reuse.map { #","reuse":"\#($0)""# } ?? ""
            let w = Double(Int.random(in: 0...200, using: &g)), h = Double(Int.random(in: 0...120, using: &g))
            switch Int.random(in: 0..<5, using: &g) {
            case 0:
                let count = Int.random(in: 0...120, using: &g), gap = Double(Int.random(in: 0...10, using: &g))
                let own: Bool? = [nil, true, false].randomElement(using: &g) ?? nil
                let y = own ?? alongY
                for k in 0..<count { add("\(id)-\(k)", line(y, Double(k) * ((y ? h : w) + gap), w, h), reuse) }
                let axisField = own.map { #","axis":"\#($0 ? "y" : "x")""# } ?? ""
                sections.append(#"{"id":"\#(id)"\#(reuseField),"list":{"count":\#(count),"size":[\#(number(w)),\#(number(h))],"spacing":\#(number(gap))\#(axisField)}}"#)
            case 1:
                let sizes = (0..<Int.random(in: 0...40, using: &g)).map { _ in [Double(Int.random(in: 0...200, using: &g)), Double(Int.random(in: 0...90, using: &g)) + 0.5] }
                var position = 0.0
                for (k, size) in sizes.enumerated() {
                    add("\(id)-\(k)", line(alongY, position, size[0], size[1]), reuse)
                    position += (alongY ? size[1] : size[0]) + 3
                }
                let list = sizes.map { "[\(number($0[0])),\(number($0[1]))]" }.joined(separator: ",")
                sections.append(#"{"id":"\#(id)"\#(reuseField),"list":{"sizes":[\#(list)],"spacing":3}}"#)
            case 2:
                let columns = Int.random(in: 1...5, using: &g), count = Int.random(in: 0...120, using: &g)
                let gap = [Double(Int.random(in: 0...8, using: &g)), Double(Int.random(in: 0...8, using: &g))]
                for k in 0..<count {
                    let column = Double(k % columns), row = Double(k / columns)
                    let (across, down) = alongY ? (column, row) : (row, column)
                    add("\(id)-\(k)", [ox + across * (w + gap[0]), oy + down * (h + gap[1]), w, h], reuse)
                }
                sections.append(#"{"id":"\#(id)"\#(reuseField),"grid":{"columns":\#(columns),"count":\#(count),"itemSize":[\#(number(w)),\#(number(h))],"spacing":[\#(number(gap[0])),\#(number(gap[1]))]}}"#)
            case 3:
                let count = Int.random(in: 0...12, using: &g)
                let y = Bool.random(using: &g)
                for k in 0..<count { add("\(id)-\(k)", line(y, Double(k) * (y ? 200 : 375), 375, 200), reuse) }
                sections.append(#"{"id":"\#(id)"\#(reuseField),"pages":{"count":\#(count),"size":[375,200],"axis":"\#(y ? "y" : "x")"}}"#)
            default:
                let list = (0..<Int.random(in: 0...5, using: &g)).map { k -> String in
                    let r = [Double(k * 30), Double(k * 10), 50, 40]
                    add("item\(s).\(k)", [ox + r[0], oy + r[1], r[2], r[3]], "ad")
                    return #"{"id":"item\#(s).\#(k)","rect":[\#(r.map(number).joined(separator: ","))],"reuse":"ad"}"#
                }.joined(separator: ",")
                sections.append(#"{"items":[\#(list)]}"#)
            }
            cursor = end
        }
        let maxX = items.map { $0.rect[0] + $0.rect[2] }.max() ?? 0
        let maxY = items.map { $0.rect[1] + $0.rect[3] }.max() ?? 0
        let json = #"{"sections":[\#(sections.joined(separator: ","))],"axis":"\#(alongY ? "y" : "x")","insets":[\#(insets.map(number).joined(separator: ","))],"spacing":\#(number(spacing))}"#
        return (json, items, [max(0, maxX) + insets[3], max(0, maxY) + insets[2]])
    }

    @Test(arguments: 0..<16)
    func generatedLayoutsOverHTTPPlaceItemsAsDerivedAndFollowEveryPlanRule(seed: Int) throws {
        try withService { service in
            let client = try service.connect()
            var g = TestRandom(seed: UInt64(seed) &+ 900)
            let (json, items, contentSize) = Self.randomSections(using: &g)
            let layout = try client.postLayout(json)
            let info = try client.get("/v1/layouts/\(layout)").json
            #expect(info.int("items") == items.count)
            #expect(info.doubles("contentSize") == contentSize, "\(json)")
            // The same items sent one by one, with that content size: the same layout.
            #expect(try client.postLayout(layoutJSON(items, contentSize: contentSize)) == layout, "\(json)")
            let opened = try client.openSession(#"{"layout":"\#(layout)","viewport":[375,667],"buffer":30}"#)
            var model = ClientModel(items: items, viewport: [375, 667], buffer: 30)
            model.open(opened.json.object("plan"))
            let extent = Int(max(contentSize[0], contentSize[1])) + 100
            var offset = [0.0, 0.0]
            for step in 0..<120 {
                switch Int.random(in: 0..<4, using: &g) {
                case 0, 1: offset[1] += Double(Int.random(in: -90...140, using: &g))
                case 2: offset[0] += Double(Int.random(in: -90...140, using: &g))
                default: offset = [Double(Int.random(in: -100...extent, using: &g)), Double(Int.random(in: -100...extent, using: &g))]
                }
                let reply = try client.update(opened.id, #"{"offset":[\#(number(offset[0])),\#(number(offset[1]))]}"#)
                #expect(reply.status == 200, "\(reply.text)")
                model.apply(reply.json, offset: offset)
                if step % 20 == 0 { model.check(state: try client.state(opened.id)) }
            }
            model.check(state: try client.state(opened.id))
        }
    }

    /// Sections of a sticky header (in an `items` section) and a list of rows.
    static func stickySections(using g: inout TestRandom) -> (json: String, items: [TestItem], headers: [Int], contentHeight: Double) {
        let top = Double([0, 10][Int.random(in: 0...1, using: &g)])
        let spacing = Double([0, 6][Int.random(in: 0...1, using: &g)])
        var sections: [String] = []
        var items: [TestItem] = []
        var headers: [Int] = []
        var cursor = top
        for s in 0..<10 {
            if s > 0 { cursor += spacing }
            headers.append(items.count)
            items.append(TestItem(id: "h\(s)", rect: [0, cursor, 375, 44], reuse: "header"))
            sections.append(#"{"items":[{"id":"h\#(s)","rect":[0,0,375,44],"reuse":"header","sticky":true}]}"#)
            cursor += 44 + spacing
            let rows = Int.random(in: 0...8, using: &g)
            for k in 0..<rows { items.append(TestItem(id: "r\(s)-\(k)", rect: [0, cursor + Double(k) * 60, 375, 60], reuse: "row")) }
            if rows > 0 { cursor += Double(rows) * 60 }
            sections.append(#"{"id":"r\#(s)","reuse":"row","list":{"count":\#(rows),"size":[375,60]}}"#)
        }
        let json = #"{"sections":[\#(sections.joined(separator: ","))],"insets":[\#(number(top)),0,0,0],"spacing":\#(number(spacing))}"#
        return (json, items, headers, items.map { $0.rect[1] + $0.rect[3] }.max() ?? 0)
    }

    /// The pinned header at `offsetY`: (item index, pinned y), or nil.
    static func expectedPin(items: [TestItem], headers: [Int], contentHeight: Double, offsetY: Double, insetTop: Double) -> (Int, Double)? {
        let top = offsetY + insetTop
        guard let k = headers.lastIndex(where: { items[$0].rect[1] < top }) else { return nil }
        let header = headers[k]
        let nextTop = k + 1 < headers.count ? items[headers[k + 1]].rect[1] : contentHeight
        guard nextTop > top else { return nil }
        return (header, max(items[header].rect[1], min(top, nextTop - 44)))
    }

    @Test(arguments: 0..<4)
    func stickyHeadersOverHTTPPinAsTheModelSays(seed: Int) throws {
        try withService { service in
            let client = try service.connect()
            var g = TestRandom(seed: UInt64(seed) &+ 1700)
            let (json, items, headers, contentHeight) = Self.stickySections(using: &g)
            let insetTop = seed % 2 == 0 ? 0.0 : 64
            let opened = try client.openSession(#"{"layout":\#(json),"viewport":[375,300],"buffer":10,"insets":[\#(number(insetTop)),0,0,0]}"#)
            var shown: [String: Int] = [:]
            var pin: (id: String, y: Double)?
            func apply(_ plan: [String: Any], y: Double, step: Int) {
                for entry in plan.entries("recycle") + plan.entries("discard") { shown[entry["id"] as! String] = nil }
                for entry in plan.entries("reuse") + plan.entries("create") { shown[entry["id"] as! String] = entry.int("view") }
                for entry in plan.entries("unpin") {
                    let id = entry["id"] as! String
                    #expect(id == pin?.id, "step \(step): unpinned \(id), pinned \(pin?.id ?? "none")")
                    #expect(entry.doubles("rect") == items.first { $0.id == id }?.rect, "step \(step): unpin rect")
                    pin = nil
                }
                for entry in plan.entries("pin") {
                    let id = entry["id"] as! String
                    #expect(shown[id] == entry.int("view"), "step \(step): pinned \(id) with a view it does not have")
                    pin = (id, entry.doubles("rect")[1])
                }
                let expected = Self.expectedPin(items: items, headers: headers, contentHeight: contentHeight, offsetY: y, insetTop: insetTop)
                var materializedIDs = Set(materialized(items, offset: [0, y], viewport: [375, 300], buffer: 10))
                if let (header, _) = expected { materializedIDs.insert(items[header].id) }
                #expect(Set(shown.keys) == materializedIDs, "step \(step) y \(y)")
                if let (header, pinnedY) = expected {
                    #expect(pin?.id == items[header].id && pin?.y == pinnedY, "step \(step) y \(y): pinned \(String(describing: pin)), expected \(items[header].id) at \(pinnedY)")
                } else if let current = pin {
                    // A header that stops being pinned by leaving the materialized set needs no unpin.
                    #expect(shown[current.id] == nil, "step \(step) y \(y): \(current.id) still pinned")
                    pin = nil
                }
            }
            apply(opened.json.object("plan"), y: 0, step: 0)
            var y = 0.0
            for step in 1...150 {
                y = step % 30 == 0 ? Double(Int.random(in: -100...Int(contentHeight), using: &g)) : y + Double(Int.random(in: -25...40, using: &g))
                let reply = try client.update(opened.id, #"{"offset":[0,\#(number(y))]}"#)
                #expect(reply.status == 200, "\(reply.text)")
                apply(reply.json, y: y, step: step)
                if step % 25 == 0 {
                    let state = try client.state(opened.id)
                    let expected = Self.expectedPin(items: items, headers: headers, contentHeight: contentHeight, offsetY: y, insetTop: insetTop)
                    let pinned = state.object("pinned")
                    #expect(pinned["id"] as? String == expected.map { items[$0.0].id }, "state at y \(y)")
                    if let (_, pinnedY) = expected { #expect(pinned.doubles("rect").dropFirst().first == pinnedY) }
                }
            }
        }
    }
}
