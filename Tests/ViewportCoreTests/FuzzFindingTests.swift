import Dispatch
import Testing
import ViewportCore

/// Runs `body` on another thread and answers whether it finished within `seconds`: a hang fails
/// the test instead of the whole run (a synchronous loop cannot be cancelled, so it is left
/// spinning until the process exits).
func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

/// Inputs the fuzz targets (fuzz/, scripts/fuzz-native.sh) found, each reduced by hand to the
/// smallest session that shows it.
struct FuzzFindingTests {
    /// Every number of a plan: the offset, paging's target, loop's recenter and placements, the
    /// pin and unpin rects, the linked offsets.
    static func numbers(of plan: Plan) -> [Double] {
        var all = [plan.offset.x, plan.offset.y]
        if let t = plan.target { all += [t.x, t.y] }
        if let r = plan.recenter { all += [r.x, r.y] }
        for p in plan.placements { all += [p.rect.x, p.rect.y, p.rect.width, p.rect.height] }
        for p in plan.pin + plan.unpin { all += [p.rect.x, p.rect.y, p.rect.width, p.rect.height] }
        for l in plan.linked { all += [l.offset.x, l.offset.y] }
        return all
    }

    /// FuzzSessionApply: a pool whose identifier the new layout lacks kept views past its own cap
    /// (`pool.perReuse`): the caps were resolved for the new layout's identifiers only, so the
    /// pool fell back to `pool.max`.
    @Test func aPerReuseCapHoldsForAPoolWhoseIdentifierTheNewLayoutLacks() throws {
        let rows = (0..<3).map { ItemSpec(id: "r\($0)", rect: Rect(x: 0, y: Double($0) * 100, width: 100, height: 100), reuse: "a") }
        var session = try ViewportSession(
            layout: try makeLayout(rows),
            configuration: SessionConfiguration(viewport: Size(width: 100, height: 300), buffer: 0, pool: PoolCaps(max: 3, perReuse: ["a": 0])))
        let plan = try session.changeLayout(to: try makeLayout([]), anchor: .none)
        #expect(plan.recycle.isEmpty)
        #expect(plan.discard.map(\.view) == [1, 2, 3])
        #expect(session.pooledViews.isEmpty)
        #expect(session.liveViews == 0)
    }

    /// FuzzSessionApply (a timeout): a looping session whose period is tiny next to its offset
    /// (content 1e-300 long, offset −70) never answered: past 2^53 periods the copy search's
    /// `m += 1` left `m` unchanged, and its bound was `m - first`. One request hung a worker.
    @Test func aLoopWithAPeriodTinyNextToTheOffsetStillAnswers() throws {
        let layout = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 1e-300), reuse: "a")])
        let configuration = SessionConfiguration(viewport: Size(width: 10, height: 0), offset: Point(x: 0, y: -70), buffer: 0, loop: true)
        // Refusing the session is an answer too; opening it and moving it must end.
        #expect(finishes(within: 20) {
            guard var session = try? ViewportSession(layout: layout, configuration: configuration) else { return }
            for y in [-70.0, 5, 1e6, -1e9] {
                _ = try? session.apply(ViewportUpdate(offset: Point(x: 0, y: y)))
            }
        })
    }

    /// FuzzSessionApply: a looping session on content 5e-324 long (the smallest double) answered
    /// `"recenter": [null, 0]`: the offset divided by the period is infinite. Fixed: a loop's period is at least `LoopSpace.minPeriod` (422 otherwise).
    @Test func aLoopOnADenormalPeriodPutsNoNonFiniteNumberInItsPlans() throws {
        let layout = try makeLayout([ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 5e-324, height: 0.1), reuse: "a")])
        let configuration = SessionConfiguration(
            viewport: Size(width: 0, height: 100), offset: Point(x: 855, y: 0), buffer: 0, paging: PagingOptions(axis: .x), loop: true)
        // Refused (422) is fine; an opened session's plans carry finite numbers only.
        guard var session = try? ViewportSession(layout: layout, configuration: configuration) else { return }
        let opening = Self.numbers(of: session.lastPlan)
        #expect(opening.allSatisfy { $0.isFinite }, "opening plan: \(opening)")
        if let plan = try? session.apply(ViewportUpdate(offset: Point(x: 1e6, y: 0))) {
            let numbers = Self.numbers(of: plan)
            #expect(numbers.allSatisfy { $0.isFinite }, "plan: \(numbers)")
        }
    }

    /// A list of 1e300-point items inside trailing insets of 1.7e308: the items' extent plus the
    /// right inset overflows, and the layout's content size is infinite.
    static func overflowingLayout() throws -> Layout {
        var stack = SectionStack(axis: .y, insets: Insets(top: 0, left: 137.5, bottom: 0, right: 1.7976931348623157e308))
        var builder = LayoutBuilder()
        try stack.append(SectionSpec(id: "s", reuse: "a", shape: .list(axis: nil, count: 45, size: Size(width: 1e300, height: 1e300), spacing: 0)), to: &builder)
        try builder.setTrailingPadding(stack.trailingPadding)
        return try builder.build()
    }

    /// FuzzSessionApply: a layout whose trailing insets push its content size past the largest
    /// double was accepted with an infinite content size (`POST /v1/layouts` answers
    /// `"contentSize": [null, …]`), and sessions on it then put NaN in their own offset and in
    /// their plans (`scrollTo` in a loop: `"offset": [null, 4.45e301]`; linked followers:
    /// `"linked": {"a": [null, 0]}`). Fixed: such a layout is refused
    /// (422 naming `insets`), and ranges and links saturate (docs/numbers.md).
    @Test func trailingInsetsThatOverflowGiveNoInfiniteContentSizeNorNaNOffsets() throws {
        // Refusing the layout (422) is fine; an accepted one has a finite content size.
        do {
            let layout = try Self.overflowingLayout()
            #expect(layout.contentSize.width.isFinite && layout.contentSize.height.isFinite, "content size \(layout.contentSize)")
            let configuration = SessionConfiguration(
                viewport: Size(width: 910, height: 1347), offset: Point(x: 885, y: 477.5), buffer: 80,
                paging: PagingOptions(mode: .items, axis: .x, decelerationRate: 1e-300), prefetch: 0, loop: true)
            guard var session = try? ViewportSession(layout: layout, configuration: configuration) else { return }
            if let plan = try? session.apply(ViewportUpdate(scrollTo: ScrollTarget(item: 44, align: .center), phase: .dragEnd)) {
                let numbers = Self.numbers(of: plan)
                #expect(numbers.allSatisfy { $0.isFinite }, "plan: \(numbers)")
            }
            #expect(session.offset.x.isFinite && session.offset.y.isFinite, "offset \(session.offset)")
        } catch let error as LayoutError {
            #expect(error == .invalidSection(field: "insets", reason: "the items' extent plus the trailing insets passes the largest finite number"))
        }
    }
}
