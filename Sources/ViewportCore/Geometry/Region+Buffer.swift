extension Region {
    /// The materialized region: the viewport rect at `offset` grown by `buffer`, leaning toward
    /// `motion` along each axis (see `Buffer`), and by the motion's look-ahead in its direction
    /// (see `LookAhead`). With a uniform buffer and no look-ahead it is exactly
    /// `Region(offset:viewport:buffer:)`, whatever the motion.
    @inline(__always)
    public init(offset: Point, viewport: Size, buffer: Buffer, motion: Motion) {
        var (left, right) = buffer.extents(moving: motion.x)
        var (top, bottom) = buffer.extents(moving: motion.y)
        if motion.looksAhead {
            if motion.x > 0 { right += motion.lookAheadX } else if motion.x < 0 { left += motion.lookAheadX }
            if motion.y > 0 { bottom += motion.lookAheadY } else if motion.y < 0 { top += motion.lookAheadY }
        }
        self.init(
            minX: offset.x - left, minY: offset.y - top,
            maxX: offset.x + viewport.width + right, maxY: offset.y + viewport.height + bottom)
    }
}
