/// Key of the same-item index: an item and the reuse class of the pool its last view is in.
struct PooledItemKey {
    var item: Int
    var reuseClass: Int

    /// Both in one non-negative `Int` for ``IntMap`` (items and classes are below 2^31: a layout
    /// holds at most `layouts.maxItems` items and as many reuse identifiers).
    var packed: Int { item << 32 | reuseClass }
}
