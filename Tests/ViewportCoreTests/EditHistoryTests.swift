import Testing
import ViewportCore
import ViewportTestSupport

/// A session's edit history stays bounded however many edits it makes: a long history folds into
/// a checkpoint of the version (its binary form), and a session restored from a snapshot that
/// carries one continues exactly as the original.
struct EditHistoryTests {
    /// A chat of `count` measured messages in one stack.
    static func chat(count: Int) -> FlowModel {
        let items = (0..<count).map { k -> (id: String, size: Size?, reuse: String?) in
            let height = Double(40 + k % 7 * 10)
            let reuse: String? = k % 5 == 0 ? "photo" : nil
            return ("m\(k)", Size(width: 375, height: height), reuse)
        }
        return FlowModel(
            axis: .y, insets: Insets(top: 8, left: 0, bottom: 8, right: 0), spacing: 0,
            sections: [.stack(FlowModel.makeStack(
                id: "chat", reuse: "msg", items: items, estimate: Size(width: 375, height: 60), spacing: 4, lanes: 1, laneSize: 375, axis: .y))])
    }

    /// What a snapshot may hold at most: the session's own state (`base`: a snapshot before any
    /// edit) and, for its version and the previous one, a checkpoint and the edits since (each
    /// at most about the version's binary form, and at least the fold floor).
    static func bound(base: Int, layout: Layout, largestEdit: Int) -> Int {
        base + 4 * max(512, layout.binaryEncoded().count) + 4 * largestEdit + 256
    }

    /// The soak's repro: insert 20 messages and remove them again, 1,000 times. Before
    /// checkpoints the snapshot grew by ~1.3 KB a round (2.1 MB after 2,000 edits).
    @Test func insertingAndRemovingTheSameItemsKeepsTheSnapshotBounded() throws {
        let stored = try Self.chat(count: 40).build()
        var session = try ViewportSession(
            layout: stored, configuration: SessionConfiguration(viewport: Size(width: 375, height: 600), buffer: 50))
        let before = session.snapshot().count
        let layouts = { (id: String) in id == stored.digest ? stored : nil }
        var largest = 0
        var edits = 0
        var sizes: [Int] = []
        for round in 0..<1_000 {
            let ids = (0..<20).map { "r\(round)n\($0)" }
            var insert = StackEdit()
            insert.insert = [.init(place: .end(section: "chat"), items: ids.map { .init(id: $0, size: Size(width: 375, height: 50), reuse: round % 3 == 0 ? "card\(round % 4)" : nil) })]
            var remove = StackEdit()
            remove.remove = ids
            for edit in [insert, remove] {
                _ = try session.apply(edit, anchor: .visible, seq: session.seq + 1)
                edits += 1
                let snapshot = session.snapshot()
                largest = max(largest, snapshot.count)
                if round % 50 == 0 { sizes.append(snapshot.count) }
                let bound = Self.bound(base: before, layout: session.layout, largestEdit: 600)
                #expect(snapshot.count <= bound, "round \(round): a snapshot of \(snapshot.count) bytes, more than \(bound)")
                guard snapshot.count <= bound else { return }
            }
            if round % 97 == 0 || round == 999 {
                var restored = try ViewportSession(restoring: session.snapshot(), layouts: layouts)
                let sameBytes = restored.snapshot() == session.snapshot()
                #expect(sameBytes, "round \(round): a restored session snapshots to the same bytes")
                #expect(EditedSnapshotTests.same(restored.lastPlan, session.lastPlan), "round \(round)")
                #expect(restored.layout.digest == stored.digest && restored.layout.editHistory?.count == edits)
                #expect(restored.layout.reuseNames == session.layout.reuseNames)
                #expect(modelItems(of: restored.layout) == modelItems(of: session.layout))
                let update = ViewportUpdate(offset: Point(x: 0, y: Double(round % 400)), seq: session.seq + 1)
                #expect(EditedSnapshotTests.same(try restored.apply(update), try session.apply(update)), "round \(round)")
                session = restored
            }
        }
        print("EditHistoryTests: snapshots \(before) bytes before any edit, at most \(largest) over \(edits) edits; every 100 edits: \(sizes)")
        #expect(session.edits == 2_000)
    }

    /// Random edits (inserts with new reuse identifiers, removes, resizes) of random layouts with
    /// stacks, well past several folds; restored often, the session matches the original plan for
    /// plan, item for item, reuse class for reuse class.
    @Test(arguments: 0..<4)
    func aSessionRestoredFromACheckpointContinuesAsTheOriginal(seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &+ 90_001)
        var model = StackScenario.randomModel(using: &rng, count: 10...60)
        let stored = try model.build()
        var configuration = SessionConfiguration(viewport: Size(width: 375, height: 500), buffer: 30, insets: model.insets)
        configuration.exposure = seed % 2 == 0
        var original = try ViewportSession(layout: stored, configuration: configuration)
        let before = original.snapshot().count
        let layouts = { (id: String) in id == stored.digest ? stored : nil }
        var restored = try ViewportSession(restoring: original.snapshot(), layouts: layouts)
        var counter = 0
        var largestEdit = 0
        for step in 0..<400 {
            if Int.random(in: 0..<4, using: &rng) == 0 {
                let update = ViewportUpdate(offset: Point(x: 0, y: original.offset.y + Double(Int.random(in: -400...400, using: &rng))), seq: original.seq + 1)
                #expect(EditedSnapshotTests.same(try restored.apply(update), try original.apply(update)), "seed \(seed) step \(step)")
            } else {
                let edit = StackScenario.randomEdit(model, using: &rng, counter: &counter)
                let before = original.snapshot().count
                let a = try original.apply(edit, anchor: .visible, seq: original.seq + 1)
                let b = try restored.apply(edit, anchor: .visible, seq: restored.seq + 1)
                #expect(EditedSnapshotTests.same(a, b), "seed \(seed) step \(step)")
                try model.apply(edit)
                largestEdit = max(largestEdit, abs(original.snapshot().count - before))
            }
            let bytes = restored.snapshot()
            let sameBytes = bytes == original.snapshot()
            #expect(sameBytes, "seed \(seed) step \(step): the restored session's snapshot differs from the original's")
            let bound = Self.bound(base: before, layout: original.layout, largestEdit: largestEdit)
            #expect(bytes.count <= bound, "seed \(seed) step \(step): \(bytes.count) bytes, more than \(bound)")
            if Int.random(in: 0..<5, using: &rng) == 0 {
                restored = try ViewportSession(restoring: bytes, layouts: layouts)
                let again = restored.snapshot() == bytes
                #expect(again, "seed \(seed) step \(step): a restored session snapshots to the same bytes")
            }
            #expect(restored.layout.reuseNames == original.layout.reuseNames, "seed \(seed) step \(step)")
            #expect(modelItems(of: restored.layout) == modelItems(of: original.layout), "seed \(seed) step \(step)")
            // The model places items in the lanes the edits put them in, as the layout does.
            #expect(modelItems(of: restored.layout) == modelItems(of: try model.build(lanes: true)), "seed \(seed) step \(step)")
        }
        #expect(restored.edits == original.edits && original.edits > 200)
        print("EditHistoryTests seed \(seed): \(original.edits) edits, snapshot \(original.snapshot().count) bytes)")
    }

    /// A session whose history has no checkpoint writes version 3, what builds before checkpoints
    /// read (a rolling update's older instances take such sessions over); one with a checkpoint
    /// writes version 4. Both restore to the same session.
    @Test func aSnapshotWithoutACheckpointIsVersion3AndOneWithACheckpointVersion4() throws {
        let stored = try Self.chat(count: 30).build()
        var session = try ViewportSession(
            layout: stored, configuration: SessionConfiguration(viewport: Size(width: 375, height: 400), buffer: 20))
        let layouts = { (id: String) in id == stored.digest ? stored : nil }
        #expect(session.snapshot()[3] == 3)
        var versions: [UInt8] = []
        for k in 0..<40 {
            var edit = StackEdit()
            edit.insert = [.init(place: .after("m3"), items: [.init(id: "new\(k)", size: Size(width: 375, height: 90), reuse: "card")])]
            edit.resize = [.init(id: "m\(k % 30)", size: Size(width: 375, height: Double(30 + k)))]
            _ = try session.apply(edit, anchor: .visible, seq: session.seq + 1)
            _ = try session.apply(ViewportUpdate(offset: Point(x: 0, y: Double(k * 10)), seq: session.seq + 1))
            let bytes = session.snapshot()
            versions.append(bytes[3])
            // Version 3 after the digest: the number of edits (no checkpoint flag).
            if bytes[3] == 3 { #expect(bytes[4 + 1 + stored.digest.utf8.count] == k + 1) }
            let restored = try ViewportSession(restoring: bytes, layouts: layouts)
            let same = restored.snapshot() == bytes
            #expect(same, "edit \(k): a restored session snapshots to the same bytes")
            #expect(modelItems(of: restored.layout) == modelItems(of: session.layout))
        }
        #expect(versions.first == 3 && versions.last == 4, "\(versions)")
    }
}
