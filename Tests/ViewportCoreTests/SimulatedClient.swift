import Testing
import ViewportCore

/// A client that applies every plan to its own model of views and pools, and checks each rule of
/// docs/api.md "Plans" against an independent reference planner and a brute-force oracle.
///
/// It knows the layout only from the test's specs (reuse identifiers by position) and the caps
/// from the configuration, never from the session's helpers.
struct SimulatedClient {
    struct Pooled: Equatable {
        var view: Int
        var lastItem: Int
    }

    /// Reuse identifier of each item, nil for none.
    let reuseOf: [String?]
    let caps: PoolCaps
    var shown: [Int: Int] = [:]
    var pools: [String: [Pooled]] = [:]
    var lastItemOfView: [Int: Int] = [:]
    var handlesSeen: Set<Int> = []
    var peak = 0

    init(specs: [ItemSpec], caps: PoolCaps) {
        self.reuseOf = reuseNames(specs)
        self.caps = caps
    }

    /// Applies `plan`, expecting the items of `expected` (brute force) to be materialized after it.
    mutating func apply(_ plan: Plan, expected: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
        let expectedSet = Set(expected)
        let leaving = shown.keys.filter { !expectedSet.contains($0) }.sorted()
        let entering = expected.filter { shown[$0] == nil }

        // Reference plan.
        var refRecycle: [PlanEntry] = []
        var refDiscard: [PlanEntry] = []
        var pushedThisPlan: [String: [Int]] = [:]
        var pools = self.pools
        for item in leaving {
            let view = shown[item] ?? -1
            if let reuse = reuseOf[item] {
                pools[reuse, default: []].append(Pooled(view: view, lastItem: item))
                pushedThisPlan[reuse, default: []].append(view)
            }
        }
        var refAssigned: [Int: (view: Int, rebind: Bool)] = [:]
        for item in entering {
            guard let reuse = reuseOf[item],
                let at = pools[reuse]?.lastIndex(where: { $0.lastItem == item && lastItemOfView[$0.view] == item })
            else { continue }
            let view = pools[reuse]?.remove(at: at).view ?? -1
            refAssigned[item] = (view, false)
        }
        var refCreateItems: [Int] = []
        for item in entering where refAssigned[item] == nil {
            if let reuse = reuseOf[item], let entry = pools[reuse]?.popLast() {
                refAssigned[item] = (entry.view, entry.lastItem != item)
            } else {
                refCreateItems.append(item)
            }
        }
        var capped: Set<Int> = []
        for (reuse, pushed) in pushedThisPlan {
            guard let cap = poolCap(caps, reuse), let count = pools[reuse]?.count, count > cap else { continue }
            var excess = count - cap
            var k = 0
            while excess > 0, k < (pools[reuse]?.count ?? 0) {
                if let entry = pools[reuse]?[k], pushed.contains(entry.view) {
                    pools[reuse]?.remove(at: k)
                    capped.insert(entry.lastItem)
                    excess -= 1
                } else {
                    k += 1
                }
            }
        }
        for item in leaving {
            let entry = PlanEntry(item: item, view: shown[item] ?? -1)
            if reuseOf[item] == nil || capped.contains(item) { refDiscard.append(entry) } else { refRecycle.append(entry) }
        }
        let refReuse = entering.compactMap { item in refAssigned[item].map { ReuseEntry(item: item, view: $0.view, rebind: $0.rebind) } }

        #expect(plan.recycle == refRecycle, sourceLocation: sourceLocation)
        #expect(plan.discard == refDiscard, sourceLocation: sourceLocation)
        #expect(plan.reuse == refReuse, sourceLocation: sourceLocation)
        #expect(plan.create.map(\.item) == refCreateItems, sourceLocation: sourceLocation)

        // The per-identifier arithmetic of docs/api.md "Plans".
        var enteringBy: [String: Int] = [:]
        var leavingBy: [String: Int] = [:]
        for item in entering { if let r = reuseOf[item] { enteringBy[r, default: 0] += 1 } }
        for item in leaving { if let r = reuseOf[item] { leavingBy[r, default: 0] += 1 } }
        for reuse in Set(enteringBy.keys).union(leavingBy.keys) {
            let before = self.pools[reuse]?.count ?? 0
            let e = enteringBy[reuse] ?? 0
            let l = leavingBy[reuse] ?? 0
            let creates = plan.create.filter { reuseOf[$0.item] == reuse }.count
            let discards = plan.discard.filter { reuseOf[$0.item] == reuse }.count
            #expect(creates == max(0, e - before - l), sourceLocation: sourceLocation)
            let cap = poolCap(caps, reuse) ?? Int.max
            #expect(discards == max(0, before + l - e - min(cap, before + l)), sourceLocation: sourceLocation)
        }

        // Apply, as a client would: recycle and discard, then reuse and create.
        for entry in plan.recycle + plan.discard { shown[entry.item] = nil }
        for entry in plan.reuse {
            shown[entry.item] = entry.view
            lastItemOfView[entry.view] = entry.item
        }
        for entry in plan.create {
            #expect(entry.view > 0 && !handlesSeen.contains(entry.view), "handle \(entry.view) reused", sourceLocation: sourceLocation)
            handlesSeen.insert(entry.view)
            shown[entry.item] = entry.view
            lastItemOfView[entry.view] = entry.item
        }
        for entry in plan.discard { lastItemOfView[entry.view] = nil }
        self.pools = pools
        #expect(Set(shown.keys) == expectedSet, sourceLocation: sourceLocation)
        #expect(Set(shown.values).count == shown.count, "a view shows two items", sourceLocation: sourceLocation)
        for (reuse, entries) in pools {
            if let cap = poolCap(caps, reuse) { #expect(entries.count <= cap, sourceLocation: sourceLocation) }
        }
        for list in [plan.recycle.map(\.item), plan.discard.map(\.item), plan.reuse.map(\.item), plan.create.map(\.item)] {
            #expect(list == list.sorted(), "lists follow layout order", sourceLocation: sourceLocation)
        }
        peak = max(peak, shown.count + pools.values.reduce(0) { $0 + $1.count })
    }

    /// The session's own view of its state matches the client's.
    func check(_ session: ViewportSession, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(session.visible == shown.map { PlanEntry(item: $0.key, view: $0.value) }.sorted { $0.item < $1.item }, sourceLocation: sourceLocation)
        let sessionPools = Dictionary(uniqueKeysWithValues: session.pooledViews.map { ($0.reuse, $0.views) })
        let clientPools = pools.filter { !$0.value.isEmpty }.mapValues { $0.map(\.view) }
        #expect(sessionPools == clientPools, sourceLocation: sourceLocation)
        #expect(session.stats.peakViews == peak, sourceLocation: sourceLocation)
        #expect(session.liveViews == shown.count + pools.values.reduce(0) { $0 + $1.count }, sourceLocation: sourceLocation)
    }
}
