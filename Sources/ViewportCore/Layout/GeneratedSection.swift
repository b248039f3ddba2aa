/// A run of items described by a few numbers instead of one rect each (a `sections` entry of a
/// layout): a list, a grid or pages. Its items' rects are computed on demand, and which of them
/// touch a box is arithmetic, so it takes memory for its description, not per item.
///
/// Item `k`'s rect, with `o` the section's origin (its top-left in content coordinates):
/// - list, one size `s`, spacing `g`, along axis `a`: main = `o.a + k × (s.a + g)`, cross = `o`.
/// - list, a size per item: main = `o.a + Σ_{j<k} (s_j.a + g)` (summed in order), cross = `o`.
/// - grid of `c` columns, item size `s`, spacing `(gx, gy)`, rows along the stack's axis `y`:
///   `x = o.x + (k mod c) × (s.w + gx)`, `y = o.y + (k div c) × (s.h + gy)` (for a stack along
///   `x`, columns run down and rows across: the roles of x and y swap).
/// - pages: a list of one size and no spacing.
public struct GeneratedSection: Hashable, Sendable {
    public enum Shape: Hashable, Sendable {
        case list(axis: Axis, size: Size, spacing: Double)
        /// Item starts along the axis, relative to the origin (prefix sums), sizes, and the longest
        /// size along the axis (bounds the backward search of a query).
        /// `spacing` is kept to write the section out again.
        case sizedList(axis: Axis, starts: [Double], sizes: [Size], longest: Double, spacing: Double = 0)
        case grid(rowsAlong: Axis, columns: Int, itemSize: Size, spacing: Size)
    }

    /// The section id; its items are `<id>-<k>`.
    public let id: String
    public let count: Int
    public let shape: Shape
    public private(set) var origin: Point
    /// Reuse class in the layout, -1 for none.
    let reuseClass: Int32
    /// The largest `x + width` and `y + height` of its items (the origin when it has none),
    /// measured once: O(n) for a list with a size per item. For a movable section: its origin
    /// plus `relativeFar`.
    private(set) var farCorner: Point
    /// Movable sections (those of a layout with stacks, which move when a stack above them
    /// changes): the far corner measured at the origin `(0, 0)`.
    private(set) var relativeFar: Point?

    /// A section at `origin`. A `movable` one measures its extent once at the origin (0, 0) and
    /// takes its far corner as `origin + extent`, so `moved(to:)` is O(1) and a section moved
    /// there has the far corner of one built there (PATCH and a layout posted again agree).
    init(id: String, count: Int, shape: Shape, origin: Point, reuseClass: Int32, movable: Bool = false) {
        self.id = id
        self.count = count
        self.shape = shape
        self.origin = movable ? .zero : origin
        self.reuseClass = reuseClass
        self.farCorner = self.origin
        self.relativeFar = nil
        self.farCorner = measureFarCorner()
        if movable {
            // Measured at (0, 0): the extent itself.
            relativeFar = farCorner
            self.origin = origin
            farCorner = Point(x: origin.x + farCorner.x, y: origin.y + farCorner.y)
        }
    }

    /// The same section at another origin (a movable one: see `init`).
    /// - Complexity: O(1).
    func moved(to newOrigin: Point) -> GeneratedSection {
        var copy = self
        copy.origin = newOrigin
        let extent = relativeFar ?? Point(x: farCorner.x - origin.x, y: farCorner.y - origin.y)
        copy.farCorner = Point(x: newOrigin.x + extent.x, y: newOrigin.y + extent.y)
        return copy
    }

    /// The rect of item `k` (0 ≤ k < count).
    @inline(__always)
    func rect(_ k: Int) -> Rect {
        switch shape {
        case .list(let axis, let size, let spacing):
            let main = Double(k) * (axis.component(of: size) + spacing)
            return axis == .y
                ? Rect(x: origin.x, y: origin.y + main, width: size.width, height: size.height)
                : Rect(x: origin.x + main, y: origin.y, width: size.width, height: size.height)
        case .sizedList(let axis, let starts, let sizes, _, _):
            let size = sizes[k]
            return axis == .y
                ? Rect(x: origin.x, y: origin.y + starts[k], width: size.width, height: size.height)
                : Rect(x: origin.x + starts[k], y: origin.y, width: size.width, height: size.height)
        case .grid(let rowsAlong, let columns, let itemSize, let spacing):
            let column = Double(k % columns)
            let row = Double(k / columns)
            if rowsAlong == .y {
                return Rect(
                    x: origin.x + column * (itemSize.width + spacing.width), y: origin.y + row * (itemSize.height + spacing.height),
                    width: itemSize.width, height: itemSize.height)
            }
            return Rect(
                x: origin.x + row * (itemSize.width + spacing.width), y: origin.y + column * (itemSize.height + spacing.height),
                width: itemSize.width, height: itemSize.height)
        }
    }

    /// - Complexity: O(1), O(n) for a list with a size per item.
    private func measureFarCorner() -> Point {
        guard count > 0 else { return origin }
        var candidates = [count - 1]
        switch shape {
        case .list: break
        case .sizedList: candidates = Array(0..<count)
        case .grid(_, let columns, _, _): candidates.append(min(columns, count) - 1)
        }
        var far = origin
        for k in candidates {
            let r = rect(k)
            far = Point(x: max(far.x, r.x + r.width), y: max(far.y, r.y + r.height))
        }
        return far
    }

    /// Calls `body(k)` for every item whose rect may touch the closed box (a superset: callers
    /// check exactly), in increasing `k`.
    /// - Complexity: O(1 + k) for lists and grids; O(log n + k) for lists with a size per item.
    @inline(__always)
    func forEachCandidate(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int) -> Void) {
        guard count > 0 else { return }
        switch shape {
        case .list(let axis, let size, let spacing):
            let (crossLow, crossHigh) = axis == .y ? (minX, maxX) : (minY, maxY)
            let crossOrigin = axis == .y ? origin.x : origin.y
            guard crossLow <= crossOrigin + axis.cross.component(of: size), crossHigh >= crossOrigin else { return }
            let (low, high) = axis == .y ? (minY - origin.y, maxY - origin.y) : (minX - origin.x, maxX - origin.x)
            let (first, last) = Self.range(low: low, high: high, length: axis.component(of: size), step: axis.component(of: size) + spacing, count: count)
            guard first <= last else { return }
            for k in first...last { body(k) }
        case .sizedList(let axis, let starts, let sizes, let longest, _):
            let (low, high) = axis == .y ? (minY - origin.y, maxY - origin.y) : (minX - origin.x, maxX - origin.x)
            // The first item starting after `high` ends the run; items are in order along the axis.
            var lo = 0
            var hi = count
            while lo < hi {
                let mid = (lo + hi) / 2
                if starts[mid] <= high { lo = mid + 1 } else { hi = mid }
            }
            var k = lo - 1
            // Walk back while items could still reach `low` (sizes vary: check each).
            var found: [Int] = []
            while k >= 0 {
                if starts[k] + axis.component(of: sizes[k]) >= low {
                    found.append(k)
                } else if starts[k] < low - longest {
                    break
                }
                k -= 1
            }
            for k in found.reversed() { body(k) }
        case .grid(let rowsAlong, let columns, let itemSize, let spacing):
            let (mainLow, mainHigh, crossLow, crossHigh) =
                rowsAlong == .y ? (minY - origin.y, maxY - origin.y, minX - origin.x, maxX - origin.x)
                : (minX - origin.x, maxX - origin.x, minY - origin.y, maxY - origin.y)
            let (rowLength, rowStep, columnLength, columnStep) =
                rowsAlong == .y ? (itemSize.height, itemSize.height + spacing.height, itemSize.width, itemSize.width + spacing.width)
                : (itemSize.width, itemSize.width + spacing.width, itemSize.height, itemSize.height + spacing.height)
            // Only the first `count` columns can hold an item: `columns` itself may be any
            // positive Int (`count + columns` could overflow, a column loop could run forever).
            let filledColumns = min(columns, count)
            let rows = (count + filledColumns - 1) / filledColumns
            let (firstRow, lastRow) = Self.range(low: mainLow, high: mainHigh, length: rowLength, step: rowStep, count: rows)
            let (firstColumn, lastColumn) = Self.range(low: crossLow, high: crossHigh, length: columnLength, step: columnStep, count: filledColumns)
            guard firstRow <= lastRow, firstColumn <= lastColumn else { return }
            for row in firstRow...lastRow {
                for column in firstColumn...lastColumn {
                    let k = row * columns + column
                    if k < count { body(k) }
                }
            }
        }
    }

    /// Indices `k` in `0..<count` of evenly spaced spans `[k·step, k·step + length]` that may
    /// touch `[low, high]`, widened by one on each side against rounding.
    @inline(__always)
    static func range(low: Double, high: Double, length: Double, step: Double, count: Int) -> (Int, Int) {
        guard count > 0, low <= high, high >= 0 else { return (0, -1) }
        guard step > 0 else { return low <= length ? (0, count - 1) : (0, -1) }
        let first = ((low - length) / step).rounded(.down) - 1
        let last = (high / step).rounded(.down) + 1
        guard last >= 0, first < Double(count) else { return (0, -1) }
        return (Int(max(0, first)), Int(min(Double(count - 1), last)))
    }
}
