/// The handles a session gives its views. Every handle it assigned, or that a client named in a
/// resync, is below `next`; a store raises `next` above a range it reserved for the previous
/// owner (the hi/lo scheme: docs/operations/store.md "Guarantees and what they rest on"), so no handle is ever
/// given twice.
struct ViewHandles: Sendable {
    /// The handle the next new view gets.
    private(set) var next = 1

    init(next: Int = 1) { self.next = next }

    /// A handle for a new view.
    @inline(__always)
    mutating func make() -> Int {
        defer { next += 1 }
        return next
    }

    /// Makes every handle assigned from now on at least `handle`.
    mutating func reserve(from handle: Int) { next = max(next, handle) }

    /// Its snapshot section (see `ViewportSession+Snapshot.swift`): `next`.
    func writeSnapshot(into w: inout BinaryWriter) { w.count(next) }

    init(snapshot r: inout BinaryReader) throws(BinaryFormatError) { self.init(next: try r.count()) }
}
