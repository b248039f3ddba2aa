import Synchronization
import Testing
import ViewportCore

@testable import ViewportService

/// A session's state holds the lease of its layout (``SessionHandle/State/layoutLease``): the
/// layout is counted once for as long as the session uses it, and released when the session
/// ends, moves to another instance, or moves to another layout, whatever order requests race in.
@Suite struct SessionLayoutLeaseTests {
    private struct NoLease: Error {}

    private func layout(rows: Int, in store: LayoutStore) throws -> Layout {
        var builder = LayoutBuilder()
        for i in 0..<rows { try builder.append(id: "row\(i)", rect: Rect(x: 0, y: Double(i) * 50, width: 375, height: 50), reuse: "row") }
        return try store.store(try builder.build(), retain: false).layout
    }

    private func lease(on layout: Layout, in store: LayoutStore) throws -> LayoutLease {
        guard let lease = try LayoutLease(retaining: layout.digest, in: store) else { throw NoLease() }
        return lease
    }

    private func sessions(on layout: Layout, in store: LayoutStore) -> Int? {
        store.lookup(id: layout.digest)?.sessions
    }

    private func open(_ id: String, on layout: Layout, in store: LayoutStore) throws -> SessionHandle {
        let session = try ViewportSession(layout: layout, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600)))
        return SessionHandle(id: id, session: session, layoutLease: try lease(on: layout, in: store))
    }

    /// Moves the session to `layout` under its lock (as a layout change request does), without
    /// handing over the lease yet.
    private func change(_ handle: SessionHandle, to layout: Layout) throws {
        try handle.state.withLock { state in _ = try state.session.changeLayout(to: layout, anchor: .none) }
    }

    @Test func aSessionCountsItsLayoutUntilItIsRemoved() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let store = SessionStore(maxSessions: 4, idleTimeoutSeconds: 60, layouts: layouts)
        let first = try layout(rows: 3, in: layouts)
        try store.insert(try open("a", on: first, in: layouts))
        #expect(sessions(on: first, in: layouts) == 1)
        #expect(store.remove("a") != nil)
        #expect(sessions(on: first, in: layouts) == 0)
        #expect(store.remove("a") == nil)
        #expect(sessions(on: first, in: layouts) == 0, "released once")
    }

    @Test func aSessionNotInsertedReleasesItsLayout() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let store = SessionStore(maxSessions: 1, idleTimeoutSeconds: 60, layouts: layouts)
        let first = try layout(rows: 3, in: layouts)
        try store.insert(try open("a", on: first, in: layouts))
        #expect(throws: Problem.self) { try store.insert(try open("b", on: first, in: layouts)) }
        #expect(sessions(on: first, in: layouts) == 1, "only the session inserted counts")
    }

    @Test func aDetachedSessionReleasesItsLayoutOnce() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let store = SessionStore(maxSessions: 4, idleTimeoutSeconds: 60, layouts: layouts)
        let first = try layout(rows: 3, in: layouts)
        let handle = try open("a", on: first, in: layouts)
        try store.insert(handle)
        handle.state.withLock { store.detach(handle, &$0) }
        handle.state.withLock { store.detach(handle, &$0) }
        #expect(sessions(on: first, in: layouts) == 0)
        #expect(store.count == 0)
    }

    @Test func aLayoutChangeMovesTheCountToTheNewLayout() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let first = try layout(rows: 3, in: layouts)
        let second = try layout(rows: 4, in: layouts)
        let handle = try open("a", on: first, in: layouts)
        let lease = try lease(on: second, in: layouts)
        try change(handle, to: second)
        handle.hold(lease)
        #expect(sessions(on: first, in: layouts) == 0)
        #expect(sessions(on: second, in: layouts) == 1)
    }

    @Test func aChangeNotAppliedOrToTheSameLayoutDropsItsLease() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let first = try layout(rows: 3, in: layouts)
        let second = try layout(rows: 4, in: layouts)
        let handle = try open("a", on: first, in: layouts)
        handle.hold(try lease(on: second, in: layouts))
        #expect(sessions(on: first, in: layouts) == 1 && sessions(on: second, in: layouts) == 0, "not applied")
        handle.hold(try lease(on: first, in: layouts))
        #expect(sessions(on: first, in: layouts) == 1, "the same layout is counted once")
    }

    @Test func twoChangesRacingToTheirLeasesCountOnlyTheLastLayout() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let first = try layout(rows: 3, in: layouts)
        let second = try layout(rows: 4, in: layouts)
        let third = try layout(rows: 5, in: layouts)
        for secondHoldsFirst in [true, false] {
            let handle = try open("a", on: first, in: layouts)
            let toSecond = try lease(on: second, in: layouts)
            let toThird = try lease(on: third, in: layouts)
            try change(handle, to: second)
            try change(handle, to: third)
            if secondHoldsFirst {
                handle.hold(toSecond)
                handle.hold(toThird)
            } else {
                handle.hold(toThird)
                handle.hold(toSecond)
            }
            #expect(sessions(on: first, in: layouts) == 0)
            #expect(sessions(on: second, in: layouts) == 0)
            #expect(sessions(on: third, in: layouts) == 1)
            handle.state.withLock { $0.layoutLease.end() }
        }
    }

    @Test func aChangeThatLandsAfterTheSessionLeftReleasesBothLayouts() throws {
        let layouts = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let store = SessionStore(maxSessions: 4, idleTimeoutSeconds: 60, layouts: layouts)
        let first = try layout(rows: 3, in: layouts)
        let second = try layout(rows: 4, in: layouts)
        let handle = try open("a", on: first, in: layouts)
        try store.insert(handle)
        let lease = try lease(on: second, in: layouts)
        try change(handle, to: second)
        // Handed over to another instance before the change's lease got here.
        handle.state.withLock { store.detach(handle, &$0) }
        handle.hold(lease)
        #expect(sessions(on: first, in: layouts) == 0)
        #expect(sessions(on: second, in: layouts) == 0)
    }
}
