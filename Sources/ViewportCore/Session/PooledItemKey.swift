/// Key of the same-item index: an item and the reuse class of the pool its last view is in.
struct PooledItemKey {
    var item: Int
    var reuseClass: Int

    /// Items and classes are below 2^31 (a layout holds at most `layouts.maxItems` items and as
    /// many reuse identifiers).
    init(item: Int, reuseClass: Int) {
        self.item = item
        self.reuseClass = reuseClass
    }

    /// The key ``packed`` encodes.
    init(packed: Int) {
        if packed & Self.wideFlag != 0 {
            item = (packed & ~Self.wideFlag) >> 31
            reuseClass = packed & 0x7fff_ffff
        } else {
            item = packed >> 8
            reuseClass = packed & 0xff
        }
    }

    private static let wideFlag = 1 << 62

    /// Both in one non-negative `Int` for ``IntMap``, one to one: `item · 256 + class` for the
    /// first 255 classes, so that the keys of a layout's first 16 M items fit ``IntMap``'s 32-bit
    /// slots; otherwise item in bits 31–61 and class in bits 0–30, marked by bit 62.
    var packed: Int { reuseClass < 0xff ? item << 8 | reuseClass : Self.wideFlag | item << 31 | reuseClass }
}
