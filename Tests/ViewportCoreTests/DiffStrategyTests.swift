import Testing
@testable import ViewportCore

/// `DiffStrategy.pick`: the strategy `apply` uses, from the session's diff basis, loop and pin
/// and the update's region; and the basis each kind of change leaves behind.
struct DiffStrategyTests {
    /// The strategy's name, so that a test can compare strategies (a loop's carries its space).
    static func name(_ strategy: DiffStrategy) -> String {
        switch strategy {
        case .unchanged: "unchanged"
        case .full: "full"
        case .loop: "loop"
        case .drag(.x): "drag x"
        case .drag(.y): "drag y"
        case .jump: "jump"
        case .strips: "strips"
        }
    }

    static let region = Region(minX: 0, minY: 1000, maxX: 375, maxY: 1800)

    /// `region` moved by (dx, dy).
    static func moved(_ dx: Double, _ dy: Double) -> Region {
        Region(minX: region.minX + dx, minY: region.minY + dy, maxX: region.maxX + dx, maxY: region.maxY + dy)
    }

    /// A window measured at `region` that lets its edges move 10 pt either way along y.
    static let window = SafeWindow(
        axis: .y, origin: region, lowEdgeFrom: region.minY - 10, lowEdgeBelow: region.minY + 10,
        highEdgeAbove: region.maxY - 10, highEdgeThrough: region.maxY + 10)

    static func pick(_ basis: DiffBasis, loop: LoopSpace? = nil, samePin: Bool = true, to new: Region) -> String {
        name(DiffStrategy.pick(basis: basis, loop: loop, samePin: samePin, from: region, to: new))
    }

    /// A looping carousel's space, from a session that loops.
    static func loopSpace() throws -> LoopSpace {
        let items = (0..<8).map { ItemSpec(id: "page-\($0)", rect: Rect(x: Double($0) * 250, y: 0, width: 250, height: 300), reuse: "page") }
        var configuration = SessionConfiguration(viewport: Size(width: 250, height: 300))
        configuration.loop = true
        return try #require(try ViewportSession(layout: try makeLayout(items), configuration: configuration).loop)
    }

    @Test func aMoveInsideTheSafeWindowThatKeepsThePinChangesNothing() {
        #expect(Self.pick(.window(Self.window), to: Self.moved(0, 9)) == "unchanged")
        #expect(Self.pick(.window(Self.window), to: Self.moved(0, -9)) == "unchanged")
        // The same move with another pinned header, or out of the window, is a drag.
        #expect(Self.pick(.window(Self.window), samePin: false, to: Self.moved(0, 9)) == "drag y")
        #expect(Self.pick(.window(Self.window), to: Self.moved(0, 11)) == "drag y")
        // A window says nothing about a move along the other axis.
        #expect(Self.pick(.window(Self.window), to: Self.moved(1, 0)) == "drag x")
        // Without a window, even a tiny move is looked at.
        #expect(Self.pick(.regions, to: Self.moved(0, 1)) == "drag y")
    }

    @Test func smallMovesAlongOneAxisAreDragsAndLargerOnesStripsOrJumps() {
        #expect(Self.pick(.regions, to: Self.moved(0, 63.9)) == "drag y")
        #expect(Self.pick(.regions, to: Self.moved(-63.9, 0)) == "drag x")
        #expect(Self.pick(.regions, to: Self.moved(0, SafeWindow.lookahead)) == "strips")
        #expect(Self.pick(.regions, to: Self.moved(3, 3)) == "strips")
        // A resize along one axis moves one edge: a drag too.
        #expect(Self.pick(.regions, to: Region(minX: 0, minY: 1000, maxX: 375, maxY: 1830)) == "drag y")
        #expect(Self.pick(.regions, to: Self.moved(0, 800)) == "jump")
        #expect(Self.pick(.regions, to: Self.moved(0, 799)) == "strips")
        #expect(Self.pick(.regions, to: Self.moved(-5000, 20_000)) == "jump")
    }

    @Test func afterAResyncTheShownItemsAreComparedWithTheRegionUnlessTheContentLoops() throws {
        #expect(Self.pick(.full, to: Self.moved(0, 1)) == "full")
        #expect(Self.pick(.full, to: Self.moved(0, 5000)) == "full")
        #expect(Self.pick(.full, to: Self.region) == "full")
        let loop = try Self.loopSpace()
        #expect(Self.pick(.full, loop: loop, to: Self.moved(0, 1)) == "loop")
        #expect(Self.pick(.regions, loop: loop, to: Self.moved(0, 1)) == "loop")
        #expect(Self.pick(.regions, loop: loop, samePin: false, to: Self.moved(900, 0)) == "loop")
    }

    /// The basis each change leaves: a drag step its window, a jump none, a resync a full diff,
    /// the update after it none again, a layout change none.
    @Test func eachChangeLeavesTheBasisTheNextUpdateNeeds() throws {
        let layout = try HelperTests.rows()
        var session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 100, height: 300), buffer: 20))
        #expect(session.scroll.diffBasis.window == nil && !session.scroll.diffBasis.isFull)
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 30)))
        let window = try #require(session.scroll.diffBasis.window)
        #expect(window.axis == .y && window.origin == session.region)
        // A step inside it changes nothing and keeps it.
        let still = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 31)))
        #expect(still.isBare && session.scroll.diffBasis.window?.origin == window.origin)
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5000)))
        #expect(session.scroll.diffBasis.window == nil && !session.scroll.diffBasis.isFull)
        let pool = session.pooledViews.map { ($0.reuse, $0.views.map { ResyncState.PooledView(view: $0, item: nil) }) }
        try session.resync(ResyncState(seq: session.seq, offset: session.offset, visible: session.visible, pool: pool))
        #expect(session.scroll.diffBasis.isFull)
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5010)))
        #expect(!session.scroll.diffBasis.isFull)
        _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: 5040)))
        #expect(session.scroll.diffBasis.window != nil)
        _ = try session.changeLayout(to: try HelperTests.rows(120), anchor: .none)
        #expect(session.scroll.diffBasis.window == nil && !session.scroll.diffBasis.isFull)
    }
}
