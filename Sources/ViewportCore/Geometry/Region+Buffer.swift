extension Region {
    /// The materialized region: the viewport rect at `offset` grown by `buffer`, leaning toward
    /// `motion` along each axis (see `Buffer`). With a uniform buffer it is exactly
    /// `Region(offset:viewport:buffer:)`, whatever the motion.
    @inline(__always)
    public init(offset: Point, viewport: Size, buffer: Buffer, motion: Motion) {
        let (left, right) = buffer.extents(moving: motion.x)
        let (top, bottom) = buffer.extents(moving: motion.y)
        self.init(
            minX: offset.x - left, minY: offset.y - top,
            maxX: offset.x + viewport.width + right, maxY: offset.y + viewport.height + bottom)
    }
}
