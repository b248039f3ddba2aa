import Foundation
import Testing
import ViewportCore
import ViewportTestSupport

/// docs/api.md "Paging and deceleration", written again from the text, against the session.
struct DragTargetTests {
    /// The target and page of a drag-end, straight from docs/api.md's table.
    static func referenceTarget(
        o: Point, b: Point, v: Point, paging: PagingOptions, layout: Layout, viewport: Size, insets: Insets
    ) -> (Point, Int?) {
        let content = layout.contentSize
        let axis = paging.axis ?? (content.height > viewport.height ? .y : .x)
        func comp(_ p: Point, _ a: Axis) -> Double { a == .x ? p.x : p.y }
        func clamp(_ value: Double, _ a: Axis) -> Double {
            let lower = a == .y ? -insets.top : -insets.left
            let upper = a == .y ? content.height + insets.bottom - viewport.height : content.width + insets.right - viewport.width
            if upper < lower { return lower }  // content shorter than the viewport
            return min(max(value, lower), upper)
        }
        let pageSize = paging.size ?? viewport
        let s = axis == .x ? pageSize.width : pageSize.height
        let length = axis == .x ? content.width : content.height
        let (oo, bb, vv, r) = (comp(o, axis), comp(b, axis), comp(v, axis), paging.decelerationRate)
        let p = oo + vv / 1000 * r / (1 - r)
        var t: Double
        var page: Int?
        switch paging.mode {
        case .none:
            t = p
        case .page, .snap:
            var k: Double
            if paging.mode == .snap {
                k = floor(p / s + 0.5)
            } else if vv == 0 {
                k = floor((oo + s / 2) / s)
            } else {
                let k0 = floor((bb + s / 2) / s)
                let vote = (vv > 0 ? 1.0 : -1.0) + (oo > bb ? 1.0 : -1.0)
                k = k0 + (vote > 0 ? 1 : (vote < 0 ? -1 : 0))
            }
            let pages = ceil(length / s)
            k = max(0, min(k, pages - 1))
            t = k * s
            page = Int(k)
        case .items:
            t = p
            var best: Double?
            for rect in layout.rects {
                let e = axis == .x ? rect.x : rect.y
                if let current = best {
                    if abs(e - p) < abs(current - p) || (abs(e - p) == abs(current - p) && e < current) { best = e }
                } else {
                    best = e
                }
            }
            if let best { t = best }
        }
        let cross: Axis = axis == .x ? .y : .x
        let along = clamp(t, axis)
        let other = clamp(comp(o, cross), cross)
        return (axis == .x ? Point(x: along, y: other) : Point(x: other, y: along), page)
    }

    @Test(arguments: 0..<12)
    func randomDragsLandWhereAPIsFormulasSay(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 104_729 &+ 17)
        let kind: LayoutKind = [.vertical, .horizontal, .grid][seed % 3]
        let count = [1, 5, 40, 200][Int.random(in: 0..<4, using: &rng)]
        let specs = randomLayoutSpecs(kind, count: count, using: &rng)
        // Sometimes content shorter than the viewport, sometimes longer than the items.
        let contentSize: Size? = [nil, Size(width: 100, height: 80), Size(width: 9000, height: 7000)][Int.random(in: 0..<3, using: &rng)]
        let layout = try makeLayout(specs, contentSize: contentSize)
        let viewport = Size(width: Double(Int.random(in: 100...500, using: &rng)), height: Double(Int.random(in: 100...800, using: &rng)))
        let insets = Int.random(in: 0..<2, using: &rng) == 0
            ? Insets.zero
            : Insets(top: Double(Int.random(in: 0...60, using: &rng)), left: Double(Int.random(in: 0...30, using: &rng)),
                     bottom: Double(Int.random(in: 0...60, using: &rng)), right: Double(Int.random(in: 0...30, using: &rng)))
        for mode in PagingMode.allCases {
            for axis in [nil, Axis.x, Axis.y] {
                let size: Size? = [nil, Size(width: 250, height: 250), Size(width: 37.5, height: 120), Size(width: 900, height: 1200)][Int.random(in: 0..<4, using: &rng)]
                let rate = [PagingOptions.normalDecelerationRate, 0.99, 0.5][Int.random(in: 0..<3, using: &rng)]
                let paging = PagingOptions(mode: mode, axis: axis, size: size, decelerationRate: rate)
                var session = try ViewportSession(
                    layout: layout, configuration: SessionConfiguration(viewport: viewport, insets: insets, paging: paging))
                for _ in 0..<25 {
                    let b = Point(x: Double(Int.random(in: -100...2000, using: &rng)), y: Double(Int.random(in: -100...4000, using: &rng)))
                    let withBegin = Int.random(in: 0..<4, using: &rng) != 0
                    if withBegin {
                        _ = try session.apply(ViewportUpdate(offset: b, phase: .dragBegin))
                        _ = try session.apply(ViewportUpdate(offset: Point(x: b.x + 3, y: b.y - 3), phase: .dragging))
                    } else {
                        _ = try session.apply(ViewportUpdate(offset: b, phase: .idle))
                    }
                    let before = session.offset
                    let o = Point(x: b.x + Double(Int.random(in: -300...300, using: &rng)), y: b.y + Double(Int.random(in: -300...300, using: &rng)) + 0.5)
                    let speeds: [Double] = [0, Double(Int.random(in: -3000...3000, using: &rng)), 1e7, -1e7, 0.25]
                    let v = Point(x: speeds[Int.random(in: 0..<5, using: &rng)], y: speeds[Int.random(in: 0..<5, using: &rng)])
                    let plan = try session.apply(ViewportUpdate(offset: o, velocity: v, phase: .dragEnd))
                    let (target, page) = Self.referenceTarget(
                        o: o, b: withBegin ? b : before, v: v, paging: paging, layout: layout, viewport: viewport, insets: insets)
                    #expect(plan.target == target, "mode \(mode) axis \(String(describing: axis)) o \(o) b \(b) v \(v)")
                    #expect(plan.page == page, "mode \(mode) axis \(String(describing: axis))")
                    let after = try session.apply(ViewportUpdate(offset: o, phase: .decelerating))
                    #expect(after.target == nil && after.page == nil)
                }
            }
        }
    }

    @Test func dragEndWithoutVelocityOrBeginUsesTheOffsetBeforeTheDragEnd() throws {
        let layout = try makeLayout((0..<10).map { ItemSpec(id: "\($0)", rect: Rect(x: Double($0) * 100, y: 0, width: 100, height: 50), reuse: "p") })
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 50), paging: PagingOptions(mode: .page)))
        _ = try session.apply(ViewportUpdate(offset: Point(x: 120, y: 0)))
        // b = 120 (page 1), o = 170 moving forward, v > 0: next page.
        let plan = try session.apply(ViewportUpdate(offset: Point(x: 170, y: 0), velocity: Point(x: 10, y: 0), phase: .dragEnd))
        #expect(plan.target == Point(x: 200, y: 0))
        #expect(plan.page == 2)
    }

    @Test func itemsModeFindsTheNearestLeadingEdgeOn200kItemsWithoutScanning() throws {
        var builder = LayoutBuilder(expectedCount: 200_000)
        for i in 0..<200_000 { try builder.append(id: "r\(i)", rect: Rect(x: 0, y: Double(i) * 44, width: 375, height: 44), reuse: "row") }
        let layout = try builder.build()
        var session = try ViewportSession(
            layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 667), paging: PagingOptions(mode: .items)))
        let clock = ContinuousClock()
        var plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 10_000), velocity: Point(x: 0, y: 0), phase: .dragEnd))
        #expect(plan.target == Point(x: 0, y: 9988))  // 227 × 44 = 9988, 228 × 44 = 10032
        let start = clock.now
        for k in 0..<8_000 {
            plan = try session.apply(ViewportUpdate(offset: Point(x: 0, y: Double(k) * 1000 + 22), velocity: Point(x: 0, y: 0), phase: .dragEnd))
            let y = Double(k) * 1000 + 22
            let low = (y / 44).rounded(.down) * 44
            // On a tie (22 from both edges) the smaller edge.
            #expect(plan.target?.y == (y - low <= low + 44 - y ? low : low + 44))
        }
        #expect(clock.now - start < .seconds(5 * sanitizerSlowdown))
    }
}
