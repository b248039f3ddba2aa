/// An item that came into the screen region, and how many times it has in this session (from 1),
/// as LazyScrollView's `didEnterWithTimes`.
public struct ExposureEntry: Hashable, Sendable {
    public var item: Int
    public var times: Int

    public init(item: Int, times: Int) {
        self.item = item
        self.times = times
    }
}
