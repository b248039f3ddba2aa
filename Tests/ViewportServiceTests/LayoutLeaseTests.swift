import Testing
import ViewportCore
@testable import ViewportService

/// ``LayoutLease``: a retained layout is released when its lease is dropped, on whatever path,
/// unless the lease was transferred to a session.
@Suite struct LayoutLeaseTests {
    private func storedLayout(in store: LayoutStore) throws -> Layout {
        var builder = LayoutBuilder()
        for i in 0..<3 { try builder.append(id: "row\(i)", rect: Rect(x: 0, y: Double(i) * 50, width: 375, height: 50), reuse: "row") }
        return try store.store(try builder.build(), retain: false).layout
    }

    private struct NoLease: Error {}

    private func lease(on layout: Layout, in store: LayoutStore) throws -> LayoutLease {
        guard let lease = try LayoutLease(retaining: layout.digest, in: store) else { throw NoLease() }
        return lease
    }

    private func sessions(on layout: Layout, in store: LayoutStore) -> Int? {
        store.lookup(id: layout.digest)?.sessions
    }

    @Test func droppingALeaseReleasesTheLayout() throws {
        let store = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let layout = try storedLayout(in: store)
        do {
            let lease = try lease(on: layout, in: store)
            #expect(lease.layout.digest == layout.digest)
            #expect(sessions(on: layout, in: store) == 1)
        }
        #expect(sessions(on: layout, in: store) == 0)
    }

    @Test func aLeaseDroppedByAThrowReleasesTheLayout() throws {
        struct Refused: Error {}
        let store = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let layout = try storedLayout(in: store)
        func open() throws {
            let lease = try LayoutLease(storing: layout, in: store)
            #expect(sessions(on: lease.layout, in: store) == 1)
            throw Refused()
        }
        #expect(throws: Refused.self) { try open() }
        #expect(sessions(on: layout, in: store) == 0)
    }

    @Test func aTransferredLeaseKeepsTheLayoutCountedForItsSession() throws {
        let store = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        let layout = try storedLayout(in: store)
        do {
            let lease = try lease(on: layout, in: store)
            lease.transfer()
        }
        #expect(sessions(on: layout, in: store) == 1)
    }

    @Test func noLeaseIsTakenOnAnUnknownLayout() throws {
        let store = LayoutStore(maxLayouts: 4, maxTotalItems: 100, idleTimeoutSeconds: 60)
        if let lease = try LayoutLease(retaining: "sha256-unknown", in: store) {
            Issue.record("a lease on \(lease.layout.digest), which was never stored")
        }
    }
}
