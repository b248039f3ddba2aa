import ViewportCore

/// LazyScrollView's index (lazyscrollview.txt): item positions sorted by top edge ascending and by
/// bottom edge descending; a query binary-searches both and intersects the two sets. O(n) per query.
struct LazyScrollViewIndex {
    let byTop: [Int]
    let byBottomDescending: [Int]
    let rects: ContiguousArray<Rect>

    init(rects: ContiguousArray<Rect>) {
        self.rects = rects
        byTop = rects.indices.sorted { rects[$0].minY < rects[$1].minY }
        byBottomDescending = rects.indices.sorted { rects[$0].maxY > rects[$1].maxY }
    }

    func items(in region: Region) -> Set<Int> {
        // Items whose top is above the region's bottom…
        var lo = 0
        var hi = byTop.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rects[byTop[mid]].minY < region.maxY { lo = mid + 1 } else { hi = mid }
        }
        let above = Set(byTop[0..<lo])
        // …and whose bottom is below the region's top.
        lo = 0
        hi = byBottomDescending.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rects[byBottomDescending[mid]].maxY > region.minY { lo = mid + 1 } else { hi = mid }
        }
        let below = Set(byBottomDescending[0..<lo])
        return above.intersection(below)
    }
}

/// The simplest correct planner: scan every item each update.
func linearScan(_ rects: ContiguousArray<Rect>, _ region: Region) -> Set<Int> {
    var found = Set<Int>()
    for i in rects.indices where region.intersects(rects[i]) { found.insert(i) }
    return found
}
