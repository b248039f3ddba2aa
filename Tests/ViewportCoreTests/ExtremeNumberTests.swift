import Testing
import ViewportCore

/// Client numbers are any finite doubles (docs/api.md "Conventions"); no plan may carry an infinity or
/// a NaN, whatever the client sends. Each test drives one computation on client numbers to its
/// extremes and checks every number of every plan: offsets, targets, rects, links, placements.
@Suite struct ExtremeNumberTests {
    static let huge = Double.greatestFiniteMagnitude
    static let extremes: [Double] = [huge, -huge, 1e307, -1e307, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude, 1e300, 0]

    /// Every number a plan carries (the layout gives entering items' rects).
    static func numbers(of plan: Plan, layout: Layout) -> [Double] {
        var out = [plan.offset.x, plan.offset.y]
        func rect(_ r: Rect) { out += [r.x, r.y, r.width, r.height] }
        for entry in plan.create { rect(layout.rect(at: entry.item)) }
        for entry in plan.reuse { rect(layout.rect(at: entry.item)) }
        for entry in plan.move { rect(layout.rect(at: entry.item)) }
        for entry in plan.pin + plan.unpin { rect(entry.rect) }
        if let target = plan.target { out += [target.x, target.y] }
        if let recenter = plan.recenter { out += [recenter.x, recenter.y] }
        for link in plan.linked { out += [link.offset.x, link.offset.y] }
        for placement in plan.placements { rect(placement.rect) }
        return out
    }

    static func expectFinite(_ plan: Plan, _ layout: Layout, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let bad = numbers(of: plan, layout: layout).filter { !$0.isFinite }
        #expect(bad.isEmpty, "\(what): plan carries \(bad)", sourceLocation: sourceLocation)
    }

    static func list(count: Int = 40, height: Double = 100) throws -> Layout {
        var builder = LayoutBuilder()
        for i in 0..<count {
            try builder.append(id: "i\(i)", rect: Rect(x: 0, y: Double(i) * height, width: 375, height: height), reuse: "cell")
        }
        return try builder.build()
    }

    /// The reported case: a looping session, a deceleration rate next to 1 and a drag-end velocity
    /// of 1e307 answered `"target":[0,null]`.
    @Test(arguments: [PagingMode.none, .page, .snap, .items])
    func dragTargetsStayFiniteWithHugeVelocitiesInLoops(mode: PagingMode) throws {
        let layout = try Self.list(count: 40)
        let rate = 1.0.nextDown
        var session = try ViewportSession(
            layout: layout,
            configuration: SessionConfiguration(
                viewport: Size(width: 375, height: 400), buffer: 0,
                paging: PagingOptions(mode: mode, axis: .y, size: Size(width: 375, height: 400), decelerationRate: rate), loop: true))
        for velocity in Self.extremes {
            _ = try session.apply(ViewportUpdate(offset: session.offset, phase: .dragBegin))
            let plan = try session.apply(ViewportUpdate(offset: session.offset, velocity: Point(x: 0, y: velocity), phase: .dragEnd))
            Self.expectFinite(plan, layout, "loop \(mode) velocity \(velocity)")
            let target = try #require(plan.target)
            #expect(abs(target.y) <= 1e12, "a looping target stays within the loop's offset bound: \(target)")
            // The client settles at the target: that must be a valid offset too.
            Self.expectFinite(try session.apply(ViewportUpdate(offset: target)), layout, "settle at \(target)")
        }
    }

    @Test(arguments: [PagingMode.none, .page, .snap, .items])
    func dragTargetsStayFiniteWithoutLoops(mode: PagingMode) throws {
        let layout = try Self.list(count: 40)
        for pageHeight in [400.0, Double.leastNonzeroMagnitude, 1e-300, Self.huge] {
            var session = try ViewportSession(
                layout: layout,
                configuration: SessionConfiguration(
                    viewport: Size(width: 375, height: 400), insets: Insets(top: Self.huge, left: 0, bottom: Self.huge, right: 0),
                    paging: PagingOptions(mode: mode, axis: .y, size: Size(width: 375, height: pageHeight), decelerationRate: 1.0.nextDown)))
            for velocity in Self.extremes {
                for offset in [0.0, Self.huge, -Self.huge] {
                    _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: offset), phase: .dragBegin))
                    let plan = try session.apply(
                        ViewportUpdate(offset: Point(x: 0, y: -offset), velocity: Point(x: velocity, y: velocity), phase: .dragEnd))
                    Self.expectFinite(plan, layout, "\(mode) page \(pageHeight) velocity \(velocity) offset \(offset)")
                }
            }
        }
    }

    /// Links divide by the leader's range and multiply by the follower's; huge insets and sizes
    /// make those ranges longer than the largest double.
    @Test func linkedOffsetsStayFinite() throws {
        let layout = try Self.list(count: 10)
        for inset in [Self.huge, -Self.huge, 0] {
            var session = try ViewportSession(
                layout: layout,
                configuration: SessionConfiguration(
                    viewport: Size(width: 375, height: Self.huge), insets: Insets(top: inset, left: inset, bottom: inset, right: inset),
                    links: [
                        "big": LinkedScrollView(viewport: Size(width: 0, height: 0), contentSize: Size(width: Self.huge, height: Self.huge)),
                        "small": LinkedScrollView(viewport: Size(width: Self.huge, height: Self.huge), contentSize: Size(width: 1, height: 1)),
                    ]))
            Self.expectFinite(session.lastPlan, layout, "opening, inset \(inset)")
            for offset in Self.extremes {
                let plan = try session.apply(ViewportUpdate(offset: Point(x: offset, y: -offset)))
                Self.expectFinite(plan, layout, "inset \(inset) offset \(offset)")
                for link in plan.linked {
                    #expect(link.offset.x >= 0 && link.offset.y >= 0, "a follower's offset lies in its range: \(link)")
                }
            }
        }
    }

    @Test(arguments: [ScrollAlignment.start, .center, .end, .auto])
    func scrollToStaysFinite(align: ScrollAlignment) throws {
        var builder = LayoutBuilder()
        try builder.append(id: "low", rect: Rect(x: -Self.huge, y: -Self.huge, width: Self.huge, height: Self.huge), reuse: "a")
        try builder.append(id: "high", rect: Rect(x: Self.huge / 2, y: Self.huge / 2, width: Self.huge / 2, height: Self.huge / 2), reuse: "a")
        let layout = try builder.build()
        for viewport in [Size(width: Self.huge, height: Self.huge), Size(width: 0, height: 0), Size(width: 375, height: 667)] {
            var session = try ViewportSession(
                layout: layout,
                configuration: SessionConfiguration(viewport: viewport, insets: Insets(top: -Self.huge, left: Self.huge, bottom: Self.huge, right: -Self.huge)))
            for item in 0..<layout.count {
                let plan = try session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: item, align: align), size: viewport))
                Self.expectFinite(plan, layout, "\(align) item \(item) viewport \(viewport)")
            }
        }
    }

    /// A layout change with `anchor: visible` shifts the offset by the anchor item's move, which
    /// for far-apart rects is more than the largest double.
    @Test func layoutChangeAnchorsStayFinite() throws {
        var before = LayoutBuilder()
        try before.append(id: "a", rect: Rect(x: -Self.huge, y: -Self.huge, width: Self.huge, height: Self.huge), reuse: "r")
        let first = try before.build()
        var after = LayoutBuilder()
        try after.append(id: "a", rect: Rect(x: Self.huge / 2, y: Self.huge / 2, width: Self.huge / 2, height: Self.huge / 2), reuse: "r")
        let second = try after.build()
        var session = try ViewportSession(
            layout: first, configuration: SessionConfiguration(viewport: Size(width: 100, height: 100), offset: Point(x: -Self.huge / 2, y: -Self.huge / 2)))
        let plan = try session.changeLayout(to: second, anchor: .visible)
        Self.expectFinite(plan, second, "anchored change")
        // −huge/2 + (huge/2 − (−huge)): exactly the largest double, reached without overflowing.
        #expect(plan.offset.x == Self.huge && plan.offset.y == Self.huge)
        Self.expectFinite(try session.changeLayout(to: first, anchor: .visible), first, "and back")
    }

    @Test func defaultContentSizePastTheLargestDoubleIsRefused() throws {
        var builder = LayoutBuilder()
        try builder.append(id: "far", rect: Rect(x: 0, y: Self.huge / 2, width: 1, height: Self.huge / 2))
        try builder.setTrailingPadding(Size(width: 0, height: Self.huge))
        #expect(throws: LayoutError.self) { try builder.build() }
    }

    @Test func loopsShorterThanTheirMinimumPeriodAreRefused() throws {
        var builder = LayoutBuilder()
        try builder.append(id: "dot", rect: Rect(x: 0, y: 0, width: 0, height: 0))
        try builder.setContentSize(Size(width: 1e-300, height: 0))
        let layout = try builder.build()
        #expect(throws: SessionError.self) {
            _ = try ViewportSession(
                layout: layout, configuration: SessionConfiguration(viewport: Size(width: 0, height: 0), buffer: 0, paging: PagingOptions(axis: .x), loop: true))
        }
    }
}
