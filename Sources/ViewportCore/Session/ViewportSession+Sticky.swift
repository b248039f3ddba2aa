/// Sticky headers (UITableView's section headers): an item marked sticky whose top has scrolled
/// above the viewport's top (`offset.y + insets.top`) while its section — up to the next sticky
/// item, or the end of the content — is still on screen stays materialized, pinned at the top;
/// the next header pushes it up as it arrives. Along a layout whose axis is `x` the same happens
/// at the left (`offset.x + insets.left`), with left edges and widths (Compose's sticky headers on
/// rows).
extension ViewportSession {
    /// The header pinned at `offset`, and its pinned rect.
    /// - Complexity: O(log s) for s sticky items.
    func pinnedHeader(at offset: Point) -> PinnedHeader? {
        Self.pinnedHeader(in: layout, at: offset, insets: insets)
    }

    static func pinnedHeader(in layout: Layout, at offset: Point, insets: Insets) -> PinnedHeader? {
        let headers = layout.stickyItems
        guard !headers.isEmpty else { return nil }
        let axis = layout.axis
        // "top" is the leading edge along the axis: the top for y, the left for x.
        let top = axis.component(of: offset) + (axis == .y ? insets.top : insets.left)
        // The last header whose top is above the viewport's top.
        var lo = 0
        var hi = headers.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if axis.leadingEdge(of: layout.rect(at: headers[mid])) < top { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let header = headers[lo - 1]
        let rect = layout.rect(at: header)
        let nextTop = lo < headers.count ? axis.leadingEdge(of: layout.rect(at: headers[lo])) : axis.component(of: layout.contentSize)
        // Its section has scrolled away entirely.
        guard nextTop > top else { return nil }
        var pinned = rect
        if axis == .y {
            pinned.y = max(rect.y, min(top, nextTop - rect.height))
        } else {
            pinned.x = max(rect.x, min(top, nextTop - rect.width))
        }
        return PinnedHeader(item: header, rect: pinned)
    }

    /// Moves the pinned header from `old` to `new` in the lists of a region diff: a pinned header
    /// stays materialized while its rect is outside the region, and leaves or enters when the pin
    /// changes. `leaving`/`entering` stay in layout order.
    func adjustForPins(
        leaving: inout [Int], entering: inout [Int], old: Int?, new: Int?, oldRegion: Region, newRegion: Region
    ) {
        for item in Set([old, new].compactMap { $0 }) {
            let rect = layout.rect(at: item)
            let before = oldRegion.intersects(rect) || item == old
            let after = newRegion.intersects(rect) || item == new
            leaving.removeAll { $0 == item }
            entering.removeAll { $0 == item }
            if before && !after { Self.insertSorted(item, into: &leaving) }
            if after && !before { Self.insertSorted(item, into: &entering) }
        }
    }

    /// The `pin` and `unpin` entries of a plan whose views are planned (`shown` is current).
    func pinEntries(old: PinnedHeader?, new: PinnedHeader?) -> (pin: [PinEntry], unpin: [PinEntry]) {
        var pin: [PinEntry] = []
        var unpin: [PinEntry] = []
        if let new, let view = shown[new.item], new.item != old?.item || new.rect != old?.rect {
            pin.append(PinEntry(item: new.item, view: view, rect: new.rect))
        }
        if let old, old.item != new?.item, let view = shown[old.item] {
            unpin.append(PinEntry(item: old.item, view: view, rect: layout.rect(at: old.item)))
        }
        return (pin, unpin)
    }

    private static func insertSorted(_ item: Int, into list: inout [Int]) {
        let position = list.firstIndex { $0 > item } ?? list.count
        list.insert(item, at: position)
    }
}

/// The pinned sticky header and its pinned rect.
public struct PinnedHeader: Hashable, Sendable {
    public var item: Int
    public var rect: Rect
}
