extension ViewportSession {
    /// The scroll progress per axis: the offset over the scrollable range, clamped to 0…1 (along a
    /// looping axis: the offset's place within its period, 0 ..< 1).
    public var scrollProgress: Point {
        var progress = Point.zero
        for axis in Axis.allCases {
            let o = axis.component(of: offset)
            let value: Double
            if let loop, loop.axis == axis {
                value = (o - (o / loop.period).rounded(.down) * loop.period) / loop.period
            } else {
                value = scrollRange(axis).progress(of: o)
            }
            progress = axis.setting(value, in: progress)
        }
        return progress
    }

    /// Each follower's offset at the current progress (`linked`), by name.
    /// - Complexity: O(links).
    func linkedOffsets() -> [LinkedOffset] {
        let progress = scrollProgress
        return links.map { LinkedOffset(name: $0.name, offset: $0.view.offset(atProgress: progress)) }
    }
}
