import Testing
import ViewportCore

/// Content-addressed layout ids must never change: a client stores them, and a service restarted
/// on a new version must give the same layout the same id. These ids were computed by the
/// hand-written SHA-256 that came before swift-crypto's, and the empty, three-item and large ones
/// checked with Python's hashlib over the serialization written out by hand (see LayoutBuilder's
/// `digest(of:)`): first 16 bytes of SHA-256, in hex. Any change to the hash or to the canonical
/// serialization fails here.
struct LayoutDigestTests {
    @Test func knownLayoutsKeepTheirIds() throws {
        let empty = try makeLayout([]).digest
        #expect(empty == "9d908ecfb6b256def8b49a7c504e6c88")
        let items = [
            ItemSpec(id: "a", rect: Rect(x: 0, y: 0, width: 10, height: 10), reuse: nil),
            ItemSpec(id: "b", rect: Rect(x: 0, y: 10, width: 10.5, height: 10), reuse: "card"),
            ItemSpec(id: "日本😀", rect: Rect(x: -0.0, y: 1e300, width: 0, height: 5e-324), reuse: "card"),
        ]
        let three = try makeLayout(items).digest
        #expect(three == "9ae44fd5ef641fdd06515c523e1d991a")
        let sized = try makeLayout(items, contentSize: Size(width: 375, height: 2e300)).digest
        #expect(sized == "19eb68ea02de5de9b9a417640c4ea61a")
        // A generated list and the same items sent one by one.
        var stack = SectionStack(axis: .y, insets: Insets(top: 8, left: 0, bottom: 8, right: 0), spacing: 4)
        var builder = LayoutBuilder()
        try stack.append(SectionSpec(id: "feed", reuse: "row", shape: .list(axis: nil, count: 1000, size: Size(width: 375, height: 80), spacing: 8)), to: &builder)
        try stack.append(SectionSpec(id: "grid", reuse: "cell", shape: .grid(columns: 3, count: 10, itemSize: Size(width: 120, height: 120), spacing: Size(width: 5, height: 5))), to: &builder)
        try builder.setTrailingPadding(stack.trailingPadding)
        let sections = try builder.build().digest
        #expect(sections == "7c51d8de09d9332b7a7de5fe6bbde379")
    }

    /// A layout with stacks hashes its sections form too (LayoutBuilder's `digest(of:)`): it does
    /// not share the id of the same rects without stacks.
    @Test func aLayoutWithStacksKeepsItsIdAndIsNotItsRects() throws {
        func chat(estimate: Size, measured: Bool = false) throws -> Layout {
            var stack = SectionStack(axis: .y, insets: Insets(top: 8, left: 0, bottom: 0, right: 0), spacing: 10, withStacks: true)
            var builder = LayoutBuilder()
            let items = [
                StackSpec.Item(id: "m1", size: Size(width: 100, height: 64)), StackSpec.Item(id: "m2", size: measured ? Size(width: 100, height: 80) : nil),
                StackSpec.Item(id: "m3", size: Size(width: 100, height: 30), reuse: "photo"),
            ]
            try stack.append(SectionSpec(id: "chat", reuse: "msg", shape: .stack(StackSpec(items: items, estimate: estimate, spacing: 4))), to: &builder)
            try builder.setTrailingPadding(stack.trailingPadding)
            return try builder.build()
        }
        let layout = try chat(estimate: Size(width: 100, height: 80))
        #expect(layout.digest == "53ac60a0affc41537f236c87b5169b40")
        // The same rects without the stack, or with m2 measured (at the estimate), or another
        // estimate (m2 measured there), are other layouts.
        var items: [ItemSpec] = []
        layout.forEachItemInOrder { id, rect, reuse, _ in items.append(ItemSpec(id: String(decoding: id, as: UTF8.self), rect: rect, reuse: reuse)) }
        let explicit = try makeLayout(items, contentSize: layout.contentSize).digest
        #expect(explicit != layout.digest)
        let measured = try chat(estimate: Size(width: 100, height: 80), measured: true)
        let otherEstimate = try chat(estimate: Size(width: 100, height: 50), measured: true)
        #expect(measured.contentSize == layout.contentSize && otherEstimate.contentSize == layout.contentSize)
        #expect(Set([layout.digest, explicit, measured.digest, otherEstimate.digest]).count == 4)
    }

    /// A layout big enough to fill many 64 KiB hashing buffers (the serialization flushes in pieces).
    @Test func aLargeLayoutKeepsItsId() throws {
        let items = (0..<20_000).map { ItemSpec(id: "row-\($0)", rect: Rect(x: 0, y: Double($0) * 44.5, width: 375, height: 44.5), reuse: $0 % 7 == 0 ? "header" : "row") }
        let large = try makeLayout(items).digest
        #expect(large == "50101252f6a29c2f5cb25f6941d7464b")
    }
}
