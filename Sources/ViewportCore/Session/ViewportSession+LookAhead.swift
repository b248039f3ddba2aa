/// Looking ahead by the client's round trip (docs/api.md "Round trips", `LookAhead`).
extension ViewportSession {
    /// `lookAhead`: the cap on the region's reach by the round trip.
    public var lookAhead: LookAhead { options.lookAhead }
    /// The client's last round trip (`rtt`, seconds), nil until an update or the opening carries one.
    public var rtt: Double? { scroll.rtt }

    /// `motion` with the look-ahead of an update with `velocity` and round trip `rtt`, at
    /// `viewport` and in `phase`, on each axis.
    func lookingAhead(_ motion: Motion, velocity: Point, rtt: Double, viewport: Size, phase: ScrollPhase) -> Motion {
        let lifted = phase == .dragEnd || phase == .decelerating
        let rate = paging.decelerationRate
        let buffer = buffer
        // A looping region stays within one period (what `checkLoop` checked without look-ahead).
        func room(_ axis: Axis) -> Double {
            guard let loop, loop.axis == axis else { return .infinity }
            return loop.period - loop.maxLength - axis.component(of: viewport) - buffer.ahead - buffer.behind
        }
        var motion = motion
        motion.lookAheadX = lookAhead.reach(
            velocity: velocity.x, rtt: rtt, length: viewport.width, buffer: buffer, lifted: lifted, decelerationRate: rate, room: room(.x))
        motion.lookAheadY = lookAhead.reach(
            velocity: velocity.y, rtt: rtt, length: viewport.height, buffer: buffer, lifted: lifted, decelerationRate: rate, room: room(.y))
        return motion
    }
}
