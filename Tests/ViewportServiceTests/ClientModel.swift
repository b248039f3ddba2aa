import Foundation
import Testing
import ViewportService

/// A client of one session, checking every plan against the rules of docs/api.md "Plans" computed by brute force:
/// which items leave and enter (strict intersection with the materialized region), which views
/// are pooled and reused (own last view first, then the most recently pooled, in layout order),
/// creates only from an empty pool, handles never used twice, lists in layout order; and the
/// session's `GET` state against the views the client holds.
///
/// Exact lists are checked when the session has no pool caps; with caps, the per-identifier counts
/// of creates and discards from docs/api.md and the caps themselves are checked.
struct ClientModel {
    struct PooledView {
        var view: Int
        var lastItem: String
    }

    let items: [TestItem]
    let order: [String: Int]
    let reuseOf: [String: String]
    var buffer: Double
    var viewport: [Double]
    var offset: [Double]
    var caps: (max: Int?, perReuse: [String: Int])?
    var shown: [String: Int] = [:]
    var pools: [String: [PooledView]] = [:]
    var usedHandles: Set<Int> = []
    var seq = 0
    var stats = (created: 0, reused: 0, rebindFree: 0, recycled: 0, discarded: 0, peak: 0)

    init(items: [TestItem], viewport: [Double], offset: [Double] = [0, 0], buffer: Double = 20, caps: (max: Int?, perReuse: [String: Int])? = nil) {
        self.items = items
        self.order = Dictionary(uniqueKeysWithValues: items.enumerated().map { ($1.id, $0) })
        var reuseOf: [String: String] = [:]
        for item in items { if let reuse = item.reuse, !reuse.isEmpty { reuseOf[item.id] = reuse } }
        self.reuseOf = reuseOf
        self.viewport = viewport
        self.offset = offset
        self.buffer = buffer
        self.caps = caps
    }

    func cap(_ reuse: String) -> Int? {
        guard let caps else { return nil }
        return caps.perReuse[reuse] ?? caps.max
    }

    func isSortedByLayout(_ ids: [String]) -> Bool {
        zip(ids, ids.dropFirst()).allSatisfy { order[$0]! < order[$1]! }
    }

    /// Checks the opening plan (seq 0).
    mutating func open(_ plan: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = materialized(items, offset: offset, viewport: viewport, buffer: buffer)
        #expect(plan.int("seq") == 0, sourceLocation: sourceLocation)
        #expect(plan.ids("create") == expected, sourceLocation: sourceLocation)
        for entry in plan.entries("create") {
            let view = entry.int("view") ?? 0
            #expect(view > 0 && !usedHandles.contains(view), sourceLocation: sourceLocation)
            usedHandles.insert(view)
            shown[entry["id"] as! String] = view
        }
        stats.created += expected.count
        stats.peak = max(stats.peak, shown.count)
    }

    /// Checks the plan answered for moving to `newOffset` (and `newViewport`), then applies it.
    mutating func apply(_ plan: [String: Any], offset newOffset: [Double], viewport newViewport: [Double]? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        seq += 1
        #expect(plan.int("seq") == seq, sourceLocation: sourceLocation)
        #expect(plan.doubles("offset") == newOffset, sourceLocation: sourceLocation)
        let before = Set(materialized(items, offset: offset, viewport: viewport, buffer: buffer))
        offset = newOffset
        if let newViewport { viewport = newViewport }
        let afterList = materialized(items, offset: offset, viewport: viewport, buffer: buffer)
        let after = Set(afterList)
        #expect(before == Set(shown.keys), "model out of sync", sourceLocation: sourceLocation)
        let leaving = items.map(\.id).filter { before.contains($0) && !after.contains($0) }
        let entering = afterList.filter { !before.contains($0) }

        let recycle = plan.entries("recycle"), discard = plan.entries("discard")
        let reuse = plan.entries("reuse"), create = plan.entries("create")
        // Leaving and entering sets, lists in layout order.
        #expect((plan.ids("recycle") + plan.ids("discard")).sorted() == leaving.sorted(), "leaving", sourceLocation: sourceLocation)
        #expect((plan.ids("reuse") + plan.ids("create")).sorted() == entering.sorted(), "entering", sourceLocation: sourceLocation)
        for list in ["recycle", "discard", "reuse", "create"] {
            #expect(isSortedByLayout(plan.ids(list)), "\(list) not in layout order", sourceLocation: sourceLocation)
        }
        for entry in recycle + discard {
            let id = entry["id"] as! String
            #expect(entry.int("view") == shown[id], "\(id) left with a view it did not have", sourceLocation: sourceLocation)
        }
        for entry in discard where caps == nil {
            #expect(reuseOf[entry["id"] as! String] == nil, "discarded a reusable view without caps", sourceLocation: sourceLocation)
        }
        for entry in recycle {
            #expect(reuseOf[entry["id"] as! String] != nil, "recycled a view without a reuse identifier", sourceLocation: sourceLocation)
        }

        // Expected result per docs/api.md "Plans": pool the leaving views in recycle-list order, then own
        // views back, then the rest in layout order take the most recently pooled view.
        var pools = self.pools
        let pooledBefore = pools.mapValues(\.count)
        for entry in recycle {
            let id = entry["id"] as! String
            pools[reuseOf[id]!, default: []].append(PooledView(view: entry.int("view")!, lastItem: id))
        }
        var expectedReuse: [String: (view: Int, rebind: Bool)] = [:]
        var expectedCreate: [String] = []
        for id in entering {
            guard let r = reuseOf[id] else { continue }
            if let index = pools[r]?.firstIndex(where: { $0.lastItem == id }) {
                expectedReuse[id] = (pools[r]![index].view, false)
                pools[r]!.remove(at: index)
            }
        }
        for id in entering where expectedReuse[id] == nil {
            if let r = reuseOf[id], let last = pools[r]?.popLast() {
                expectedReuse[id] = (last.view, true)
            } else {
                expectedCreate.append(id)
            }
        }
        if caps == nil {
            #expect(plan.ids("reuse") == entering.filter { expectedReuse[$0] != nil }, "reuse", sourceLocation: sourceLocation)
            #expect(plan.ids("create") == expectedCreate, "create", sourceLocation: sourceLocation)
            for entry in reuse {
                let id = entry["id"] as! String
                #expect(entry.int("view") == expectedReuse[id]?.view, "\(id) reused the wrong view", sourceLocation: sourceLocation)
                #expect(entry["rebind"] as? Bool == expectedReuse[id]?.rebind, "\(id) rebind", sourceLocation: sourceLocation)
            }
            self.pools = pools
        } else {
            // Counts per identifier (docs/api.md "Plans"), then follow what the plan did.
            var leavingBy: [String: Int] = [:], enteringBy: [String: Int] = [:]
            for id in leaving { if let r = reuseOf[id] { leavingBy[r, default: 0] += 1 } }
            for id in entering { if let r = reuseOf[id] { enteringBy[r, default: 0] += 1 } }
            for r in Set(leavingBy.keys).union(enteringBy.keys) {
                let e = enteringBy[r] ?? 0, l = leavingBy[r] ?? 0, p = pooledBefore[r] ?? 0
                let creates = create.filter { reuseOf[$0["id"] as! String] == r }.count
                let discards = discard.filter { reuseOf[$0["id"] as! String] == r }.count
                #expect(creates == max(0, e - p - l), "creates of \(r)", sourceLocation: sourceLocation)
                if let cap = cap(r) {
                    #expect(discards == max(0, p + l - e - cap), "discards of \(r)", sourceLocation: sourceLocation)
                } else {
                    #expect(discards == 0, sourceLocation: sourceLocation)
                }
            }
            var pools = self.pools
            for entry in recycle {
                let id = entry["id"] as! String
                pools[reuseOf[id]!, default: []].append(PooledView(view: entry.int("view")!, lastItem: id))
            }
            for entry in reuse {
                let id = entry["id"] as! String, view = entry.int("view")!
                let r = reuseOf[id]!
                let index = pools[r]?.firstIndex { $0.view == view }
                #expect(index != nil, "\(id) reused view \(view) that is not pooled", sourceLocation: sourceLocation)
                if let index {
                    #expect(entry["rebind"] as? Bool == (pools[r]![index].lastItem != id), sourceLocation: sourceLocation)
                    pools[r]!.remove(at: index)
                }
            }
            for (r, list) in pools {
                if let cap = cap(r) { #expect(list.count <= cap, "pool \(r) over its cap", sourceLocation: sourceLocation) }
            }
            self.pools = pools
        }
        for entry in reuse {
            if entry["rebind"] as? Bool == false { stats.rebindFree += 1 }
        }
        // Handles: reused from the pool, created new, never used twice.
        for entry in create {
            let view = entry.int("view") ?? 0
            #expect(view > 0 && !usedHandles.contains(view), "handle \(view) used twice", sourceLocation: sourceLocation)
            usedHandles.insert(view)
            let id = entry["id"] as! String
            #expect(entry["reuse"] as? String == reuseOf[id], sourceLocation: sourceLocation)
        }
        let itemRects = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.rect) })
        for entry in reuse + create {
            #expect(entry.doubles("rect") == itemRects[entry["id"] as! String]!, sourceLocation: sourceLocation)
        }
        for id in leaving { shown[id] = nil }
        for entry in reuse + create { shown[entry["id"] as! String] = entry.int("view")! }
        stats.created += create.count
        stats.reused += reuse.count
        stats.recycled += recycle.count
        stats.discarded += discard.count
        stats.peak = max(stats.peak, shown.count + self.pools.values.map(\.count).reduce(0, +))
    }

    /// Checks a `GET /v1/sessions/{id}` answer against the model.
    func check(state: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(state.int("seq") == seq, sourceLocation: sourceLocation)
        #expect(state.doubles("offset") == offset, sourceLocation: sourceLocation)
        #expect(state.doubles("viewport") == viewport, sourceLocation: sourceLocation)
        let visible = materialized(items, offset: offset, viewport: viewport, buffer: buffer)
        #expect(state.ids("visible") == visible, sourceLocation: sourceLocation)
        for entry in state.entries("visible") {
            #expect(entry.int("view") == shown[entry["id"] as! String], sourceLocation: sourceLocation)
        }
        let pool = state.object("pool")
        let expectedPool = pools.filter { !$0.value.isEmpty }.mapValues { $0.map(\.view) }
        #expect(Set(pool.keys) == Set(expectedPool.keys), sourceLocation: sourceLocation)
        for (r, views) in expectedPool {
            if caps == nil {
                #expect(pool[r] as? [Int] == views, "pool \(r) oldest first", sourceLocation: sourceLocation)
            } else {
                #expect(Set(pool[r] as? [Int] ?? []) == Set(views), "pool \(r)", sourceLocation: sourceLocation)
            }
        }
        let s = state.object("stats")
        #expect(s.int("updates") == seq, sourceLocation: sourceLocation)
        #expect(s.int("created") == stats.created, sourceLocation: sourceLocation)
        #expect(s.int("reused") == stats.reused, sourceLocation: sourceLocation)
        #expect(s.int("rebindFree") == stats.rebindFree, sourceLocation: sourceLocation)
        #expect(s.int("recycled") == stats.recycled, sourceLocation: sourceLocation)
        #expect(s.int("discarded") == stats.discarded, sourceLocation: sourceLocation)
        #expect(s.int("peakViews") == stats.peak, sourceLocation: sourceLocation)
    }
}
