import Testing
@testable import ViewportCore
import ViewportTestSupport

/// `ReusePools` below ``ReusePools/scanLimit`` pooled views (no same-item index: a pool is
/// searched) and above it (the index), against a plain model: pools as arrays, an entering item's
/// own view found by a search from the newest end.
@Suite struct ReusePoolsTests {
    /// The model: pooled (view, last item) per class, oldest first.
    struct Model {
        var pools: [[(view: Int, item: Int?)]] = [[], [], []]
        var count: Int { pools.reduce(0) { $0 + $1.count } }

        mutating func takeView(lastShowing item: Int, reuseClass c: Int) -> Int? {
            guard let k = pools[c].lastIndex(where: { $0.item == item }) else { return nil }
            return pools[c].remove(at: k).view
        }

        mutating func takeNewest(reuseClass c: Int) -> (view: Int, item: Int?)? { pools[c].popLast() }

        var sameItemEntries: [[Int]] {
            pools.enumerated().flatMap { c, pool in pool.compactMap { e in e.item.map { [$0, c, e.view] } } }.sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    /// Random puts and takes whose pooled count swings across the scan limit many times (the
    /// index built and dropped again), each answer and the snapshot's entries compared.
    @Test(arguments: [1, 2, 3])
    func randomPutsAndTakesMatchTheModel(seed: UInt64) {
        var generator = SeededRandom(seed: seed)
        var pools = ReusePools(caps: PoolCaps())
        var model = Model()
        var nextView = 0
        var mismatches = 0
        var wasIndexedAbove = 0
        for step in 0..<20_000 {
            // Phases of filling and draining, so the count crosses `scanLimit` both ways.
            let filling = (step / 300) % 2 == 0
            let roll = generator.next() % 10
            let c = Int(generator.next() % 3)
            let item = Int(generator.next() % 60)
            if filling ? roll < 6 : roll < 2 {
                // A view leaves item `item` (or an item the layout lost: nil) into pool `c`; one
                // view at most names an item in a pool (a shown item's old view was taken back).
                let lastItem: Int? = generator.next() % 8 == 0 ? nil : item
                if let lastItem, model.pools[c].contains(where: { $0.item == lastItem }) { continue }
                pools.put(view: nextView, lastItem: lastItem, reuseClass: c, pooledAt: UInt64(step))
                model.pools[c].append((nextView, lastItem))
                nextView += 1
            } else if roll % 2 == 0 {
                if pools.takeView(lastShowing: item, reuseClass: c) != model.takeView(lastShowing: item, reuseClass: c) { mismatches += 1 }
            } else {
                let taken = pools.takeNewest(reuseClass: c)
                let expected = model.takeNewest(reuseClass: c)
                if taken?.view != expected?.view || taken?.lastItem != expected?.item { mismatches += 1 }
            }
            if pools.count != model.count { mismatches += 1 }
            if pools.count > ReusePools.scanLimit { wasIndexedAbove += 1 }
            if step % 97 == 0 && pools.sameItemEntries.map({ [$0.item, $0.reuseClass, $0.view] }) != model.sameItemEntries { mismatches += 1 }
        }
        #expect(mismatches == 0)
        // Both forms really ran.
        #expect(wasIndexedAbove > 1000)
        #expect(wasIndexedAbove < 19_000)
    }

    /// A resync's pool naming one item twice: the newest view is the item's own (the index is
    /// built for it even below the limit), found once; the older still says it last showed the
    /// item (as the client said).
    @Test(arguments: [3, ReusePools.scanLimit + 5])
    func anAdoptedItemNamedTwiceIsTheNewestViewsOnly(views: Int) {
        var pools = ReusePools(caps: PoolCaps())
        var pooled = (0..<views).map { ResyncState.PooledView(view: $0, item: 1000 + $0) }
        pooled[0].item = 7
        pooled[1].item = 7
        pools.adopt(pooled, reuseClass: 0, pooledAt: 1)
        #expect(pools.takeView(lastShowing: 7, reuseClass: 0) == 1)
        #expect(pools.takeView(lastShowing: 7, reuseClass: 0) == nil)
        #expect(pools.count == views - 1)
        #expect(pools.sameItemEntries.filter { $0.item == 7 }.isEmpty)
        #expect(pools.byClass[0].entries.contains { $0.view == 0 && $0.lastItem == 7 })
    }

    /// A snapshot's pools restore with their index when it is not what the pools say (a pool that
    /// named an item twice), and without one when it is.
    @Test func restoredPoolsKeepTheirIndexWhenItIsNotWhatThePoolsSay() {
        let entries = [ReusePool.Entry(view: 0, lastItem: 7, pooledAt: 1), ReusePool.Entry(view: 1, lastItem: 7, pooledAt: 1)]
        var restored = ReusePools(caps: PoolCaps(), extraNames: [], byClass: [ReusePool(entries: entries)], sameItem: [])
        // The given index is empty: neither view is found by its item.
        #expect(restored.takeView(lastShowing: 7, reuseClass: 0) == nil)
        var plain = ReusePools(
            caps: PoolCaps(), extraNames: [], byClass: [ReusePool(entries: [entries[0]])], sameItem: [(item: 7, reuseClass: 0, view: 0)])
        #expect(plain.takeView(lastShowing: 7, reuseClass: 0) == 0)
    }
}
