/// docs/api.md "Viewability, direction-aware buffers, time" (with "Scrolling helpers"' exposure), written
/// from its text over plain numbers, by brute force, without the core's geometry or helpers: the
/// reference the session is held against.
///
/// - Materialized: strict intersection with the viewport grown by `ahead` in the direction of
///   motion and `behind` behind it, per axis; `max(ahead, behind)` on both sides without motion.
///   Direction: the sign of the velocity on the axis when non-zero, else of the offset change,
///   else none (none for the opening plan).
/// - On screen: the part of the rect inside the viewport is at least `threshold` of its area;
///   threshold 0: strict intersection; zero area: strictly inside.
/// - Viewed: a stay on screen that has lasted `minTime` from its start to the current update's
///   `time`, once per stay. The start is the `time` of the update where the item entered, or, when
///   that update had none, of the first later update of the stay that has one (docs/guides/scrolling-helpers.md's rule).
public struct ViewabilityModel {
    /// `[x, y, w, h]` per item, in layout order.
    public let rects: [[Double]]
    public let ahead: Double
    public let behind: Double
    public let threshold: Double
    public let minTime: Double?

    public internal(set) var offset: [Double]
    public internal(set) var viewport: [Double]
    public internal(set) var time: Double?
    public internal(set) var materialized: [Int] = []
    public internal(set) var onScreen: Set<Int> = []
    public internal(set) var enterCounts: [Int: Int] = [:]
    public internal(set) var viewedCounts: [Int: Int] = [:]
    /// On-screen items whose stay is not viewed yet → the stay's start (nil: no clock yet).
    public internal(set) var waiting: [Int: Double?] = [:]

    public struct Step: Equatable, Sendable {
        public var materialized: [Int]
        public var enter: [[Int]]  // [item, times]
        public var leave: [Int]
        public var viewed: [[Int]]  // [item, times]
    }

    public init(rects: [[Double]], ahead: Double, behind: Double, threshold: Double, minTime: Double?, offset: [Double], viewport: [Double]) {
        self.rects = rects
        self.ahead = ahead
        self.behind = behind
        self.threshold = threshold
        self.minTime = minTime
        self.offset = offset
        self.viewport = viewport
    }

    /// The extents (low side, high side) along an axis moving with `sign`.
    public func extents(_ sign: Int) -> (Double, Double) {
        sign > 0 ? (behind, ahead) : sign < 0 ? (ahead, behind) : (max(ahead, behind), max(ahead, behind))
    }

    public func materialized(offset o: [Double], viewport v: [Double], direction d: [Int]) -> [Int] {
        let (left, right) = extents(d[0])
        let (top, bottom) = extents(d[1])
        let minX = o[0] - left, maxX = o[0] + v[0] + right
        let minY = o[1] - top, maxY = o[1] + v[1] + bottom
        return rects.indices.filter { i in
            let r = rects[i]
            return r[0] < maxX && r[0] + r[2] > minX && r[1] < maxY && r[1] + r[3] > minY
        }
    }

    public func isOnScreen(_ r: [Double], offset o: [Double], viewport v: [Double]) -> Bool {
        let (minX, minY, maxX, maxY) = (o[0], o[1], o[0] + v[0], o[1] + v[1])
        if threshold == 0 {
            return r[0] < maxX && r[0] + r[2] > minX && r[1] < maxY && r[1] + r[3] > minY
        }
        let area = r[2] * r[3]
        if area == 0 {
            return minX < r[0] && r[0] + r[2] < maxX && minY < r[1] && r[1] + r[3] < maxY
        }
        let w = max(0, min(r[0] + r[2], maxX) - max(r[0], minX))
        let h = max(0, min(r[1] + r[3], maxY) - max(r[1], minY))
        return w * h >= threshold * area
    }

    func onScreen(offset o: [Double], viewport v: [Double]) -> Set<Int> {
        Set(rects.indices.filter { isOnScreen(rects[$0], offset: o, viewport: v) })
    }

    /// The opening plan (no motion).
    public mutating func open(time t: Double?) -> Step {
        time = t
        return apply(offset: offset, viewport: viewport, direction: [0, 0], time: t, opening: true)
    }

    /// One update.
    public mutating func update(offset o: [Double], viewport v: [Double]? = nil, velocity: [Double]?, time t: Double?) -> Step {
        var direction = [0, 0]
        for axis in 0..<2 {
            let vel = velocity?[axis] ?? 0
            if vel != 0 {
                direction[axis] = vel > 0 ? 1 : -1
            } else if o[axis] != offset[axis] {
                direction[axis] = o[axis] > offset[axis] ? 1 : -1
            }
        }
        if let t { time = t }
        return apply(offset: o, viewport: v ?? viewport, direction: direction, time: t, opening: false)
    }

    private mutating func apply(offset o: [Double], viewport v: [Double], direction: [Int], time t: Double?, opening: Bool) -> Step {
        offset = o
        viewport = v
        let now = materialized(offset: o, viewport: v, direction: direction)
        materialized = now
        let screen = onScreen(offset: o, viewport: v)
        let entered = screen.subtracting(opening ? [] : onScreen).sorted()
        let left = opening ? [] : onScreen.subtracting(screen).sorted()
        onScreen = screen
        var enter: [[Int]] = []
        for item in entered {
            enterCounts[item, default: 0] += 1
            enter.append([item, enterCounts[item] ?? 0])
        }
        var viewed: [[Int]] = []
        if let minTime {
            for item in left { waiting[item] = nil }
            for item in entered { waiting[item] = .some(t) }
            if let t {
                for (item, start) in waiting where start == nil { waiting[item] = .some(t) }
                for item in waiting.keys.sorted() {
                    guard let start = waiting[item] ?? nil, t - start >= minTime else { continue }
                    waiting[item] = nil
                    viewedCounts[item, default: 0] += 1
                    viewed.append([item, viewedCounts[item] ?? 0])
                }
            }
        }
        return Step(materialized: now, enter: enter, leave: left, viewed: viewed)
    }
}
