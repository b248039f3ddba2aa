import Synchronization

/// A session's options fixed at its opening: insets, paging, looping, the view limit and the
/// look-ahead's cap.
///
/// Out of line and shared: sessions opened with the same options (the defaults, or the service's
/// defaults with its `sessions.maxViews`) share one instance, so the 128 bytes are not in every
/// session (`viewport-bench 0 session-memory`).
final class SessionOptions: Sendable {
    let insets: Insets
    let paging: PagingOptions
    /// The looping content, nil when the session does not loop.
    let loop: LoopSpace?
    /// Most items materialized at once; nil for no limit.
    let maxViews: Int?
    /// `lookAhead`: the cap on the region's reach by the round trip.
    let lookAhead: LookAhead

    private init(insets: Insets, paging: PagingOptions, loop: LoopSpace?, maxViews: Int?, lookAhead: LookAhead) {
        self.insets = insets
        self.paging = paging
        self.loop = loop
        self.maxViews = maxViews
        self.lookAhead = lookAhead
    }

    /// No insets, no paging, no loop, no view limit, the default look-ahead.
    static let standard = SessionOptions(insets: .zero, paging: PagingOptions(), loop: nil, maxViews: nil, lookAhead: .standard)

    /// The options made last without a loop, shared by the next session that asks for the same.
    private static let recent = Mutex<SessionOptions?>(nil)

    /// These options: ``standard`` or the last ones made when they are the same, else new ones.
    /// (A loop is never shared: it carries its layout's measures.)
    static func make(insets: Insets, paging: PagingOptions, loop: LoopSpace?, maxViews: Int?, lookAhead: LookAhead) -> SessionOptions {
        guard loop == nil else {
            return SessionOptions(insets: insets, paging: paging, loop: loop, maxViews: maxViews, lookAhead: lookAhead)
        }
        if insets == .zero, paging == PagingOptions(), maxViews == nil, lookAhead == .standard { return standard }
        return recent.withLock { recent in
            if let shared = recent, shared.insets == insets, shared.paging == paging, shared.maxViews == maxViews,
                shared.lookAhead == lookAhead
            {
                return shared
            }
            let made = SessionOptions(insets: insets, paging: paging, loop: nil, maxViews: maxViews, lookAhead: lookAhead)
            recent = made
            return made
        }
    }
}
