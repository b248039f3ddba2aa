import ViewportCore
import ViewportJSON

/// Whether a body that failed with a 400 holds a layout of more items than `layouts.maxItems`.
///
/// The problems' order puts 413 before 400 whatever the order of a body's keys, but the decoders
/// read in order and stop at the first problem: `{"typo": 1, "items": [… too many …]}` stopped at
/// the typo. On that error path only, this reads the body again for the layout's size alone:
/// the length of its `items` array, or the items its `sections` generate (built until the limit
/// is passed). It stops quietly at anything it cannot read (a syntax error, a malformed
/// section), so the 400 stands unless the limit was seen passed before that point.
enum LayoutSizeProbe {
    /// `field`: the key of the body's object that holds the layout (`"layout"` in a session's or a
    /// layout change's body), or nil when the body is the layout.
    static func exceedsLimit(_ body: [UInt8], layoutIn field: StaticString?, maxItems: Int) -> Bool {
        var exceeds = false
        _ = try? JSONReader.read(body) { r in
            guard r.peekKind() == .object else { return }
            guard let field else {
                try probeLayout(&r, maxItems: maxItems, exceeds: &exceeds)
                return
            }
            try r.readObject { r, key in
                if key == field, r.peekKind() == .object {
                    try probeLayout(&r, maxItems: maxItems, exceeds: &exceeds)
                } else {
                    try r.skipValue()
                }
            }
        }
        return exceeds
    }

    /// Thrown to stop reading once the answer is known.
    private struct Passed: Error {}

    private static func probeLayout(_ r: inout JSONReader, maxItems: Int, exceeds: inout Bool) throws {
        do {
            try r.readObject { r, key in
                switch key {
                case "items":
                    guard r.peekKind() == .array else { return try r.skipValue() }
                    try r.readArray { r, index in
                        if index >= maxItems { throw Passed() }
                        try r.skipValue()
                    }
                case "sections":
                    let sections = try SectionsDecoder.decode(&r)
                    // The count does not depend on the axis, insets or spacing.
                    var builder = LayoutBuilder(maxItems: maxItems)
                    var stack = SectionStack(withStacks: sections.contains(where: \.isStack))
                    do {
                        for spec in sections { try stack.append(spec, to: &builder) }
                    } catch LayoutError.tooManyItems {
                        throw Passed()
                    }
                default:
                    try r.skipValue()
                }
            }
        } catch is Passed {
            exceeds = true
        }
    }
}
