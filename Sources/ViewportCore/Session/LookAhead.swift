/// `lookAhead`: how far beyond the buffer the materialized region reaches in the direction of
/// motion, so that a plan still covers the screen when it lands one round trip later (docs/api.md
/// "Round trips").
///
/// With a velocity `v` along an axis and the client's round trip `r` (`rtt`), the region reaches
/// `min(cap, |v| · (r + 1/60))` further that way. Once the finger has lifted (`drag-end`,
/// `decelerating`) it never reaches past the end of the deceleration projection: the viewport
/// still travels `|v|/1000 · d/(1 − d)` at most (`d`, `paging.decelerationRate`; "Paging and
/// deceleration"). Without a velocity or a round trip there is no look-ahead.
public struct LookAhead: Hashable, Sendable {
    /// The cap on the extra reach, in points; nil for the default, which keeps the materialized
    /// region within ``viewports`` viewport lengths along the axis (viewport, both buffers and the
    /// look-ahead together).
    public var max: Double?

    public init(max: Double? = nil) { self.max = max }

    /// The default: capped at ``viewports`` viewport lengths.
    public static let standard = LookAhead()
    /// What the default cap keeps the materialized region within, in viewport lengths.
    public static let viewports = 2.5
    /// One frame at 60 Hz: a plan that lands is shown on the next frame.
    public static let frame = 1.0 / 60
    /// The largest `rtt` accepted, in seconds: beyond it a client is not scrolling live.
    public static let maxRTT = 10.0

    /// The cap along an axis whose viewport length is `length`.
    @inline(__always)
    func cap(length: Double, buffer: Buffer) -> Double {
        if let max { return max }
        return Swift.max(0, (Self.viewports - 1) * length - buffer.ahead - buffer.behind)
    }

    /// The extra reach along one axis, ≥ 0 and finite (also for a huge but finite velocity).
    /// - Parameters:
    ///   - velocity: the update's velocity along the axis (points per second).
    ///   - rtt: the client's round trip, seconds.
    ///   - length: the viewport's length along the axis.
    ///   - lifted: the finger has lifted (`drag-end`, `decelerating`): bounded by the projection.
    ///   - decelerationRate: `d` of the projection.
    ///   - room: a further bound (a looping session's slack within one period).
    public func reach(
        velocity: Double, rtt: Double, length: Double, buffer: Buffer, lifted: Bool, decelerationRate: Double,
        room: Double = .infinity
    ) -> Double {
        let speed = abs(velocity)
        guard speed > 0 else { return 0 }
        // `speed · (rtt + frame)` may pass the largest double: `min` then keeps the cap.
        var reach = Swift.min(cap(length: length, buffer: buffer), speed * (rtt + Self.frame), room)
        if lifted {
            let d = decelerationRate
            reach = Swift.min(reach, speed / 1000 * (d / (1 - d)))
        }
        return Swift.max(0, reach)
    }

    /// Checks the cap; the error names `field.max`.
    func validate(field: String) throws(SessionError) {
        if let max, !(max.isFinite && max >= 0) {
            throw .invalid(field: "\(field).max", reason: "must be finite and not negative")
        }
    }

    /// Checks a round trip as a client sent it; the error names `field`.
    static func validate(rtt: Double, field: String) throws(SessionError) {
        guard rtt.isFinite, rtt >= 0, rtt <= maxRTT else {
            throw .invalid(field: field, reason: "must be a number of seconds from 0 to \(Int(maxRTT))")
        }
    }
}
