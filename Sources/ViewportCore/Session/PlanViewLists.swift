/// A plan's four view lists read in place (`Plan.withViewLists`), for encoders: no array is
/// built. Every entry is a `ReuseEntry`; its `rebind` means something in `reuse` only.
///
/// The buffers point into the plan's storage: use them only inside `withViewLists`.
public struct PlanViewLists {
    public let recycle: UnsafeBufferPointer<ReuseEntry>
    public let discard: UnsafeBufferPointer<ReuseEntry>
    public let reuse: UnsafeBufferPointer<ReuseEntry>
    public let create: UnsafeBufferPointer<ReuseEntry>

    /// No lists (a plan without views).
    static var empty: PlanViewLists {
        PlanViewLists(recycle: .init(start: nil, count: 0), discard: .init(start: nil, count: 0), reuse: .init(start: nil, count: 0), create: .init(start: nil, count: 0))
    }
}
