import FuzzServiceChecks
import FuzzSupport
import ViewportCore
@testable import ViewportService

// A layout's `sections` array from arbitrary bytes, stacked along an axis chosen by the first
// bytes with their insets and spacing (extremes included), as the layout decoder does (stack
// sections included):
// - it never crashes; a refusal is a 400, 413 or 422 problem with a detail;
// - an accepted layout is sound (see requireSoundLayout);
// - generated items lie inside the content size, after the leading insets.

let maxItems = 5000

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let axis: Axis = input.bool() ? .x : .y
    let insets = Insets(top: input.extent(), left: input.extent(), bottom: input.extent(), right: input.extent())
    let spacing = input.extent()
    let json = input.rest()
    do {
        let sections = try json.withUnsafeBytes { bytes in
            var r = JSONReader(bytes)
            let sections = try SectionsDecoder.decode(&r)
            try r.finish()
            return sections
        }
        var builder = LayoutBuilder(maxItems: maxItems)
        // As LayoutDecoder does: a layout with a stack keeps every section movable.
        var stack = SectionStack(axis: axis, insets: insets, spacing: spacing, withStacks: sections.contains(where: \.isStack))
        let layout: Layout
        do {
            guard spacing.isFinite, spacing >= 0, insets.isFinite else { return }
            for spec in sections { try stack.append(spec, to: &builder) }
            try builder.setTrailingPadding(stack.trailingPadding)
            layout = try builder.build()
        } catch {
            // The decoder's mapping of layout errors: too many items is 413, the rest 422.
            if case LayoutError.tooManyItems = error { return }
            requireClientProblem(Problem.invalid(String(describing: error)), "sections")
            return
        }
        requireSoundLayout(layout, maxItems: maxItems, "sections")
        let explicit = sections.contains { if case .items = $0.shape { true } else { false } }
        if !explicit {
            // A layout with stacks places each section at its origin plus an extent measured once
            // (so a section a PATCH moves and the same layout posted again agree): its default
            // content size is `origin + extent`, which can fall short of an item's far edge,
            // `(origin + start) + size`, by the rounding of one addition (docs/guides/generated-layouts.md).
            let size = layout.contentSize
            let slackX = layout.hasStacks ? 4 * size.width.ulp : 0
            let slackY = layout.hasStacks ? 4 * size.height.ulp : 0
            for k in 0..<layout.count {
                let r = layout.rects[k]
                require(r.x >= insets.left && r.y >= insets.top, "item \(k) \(r) before the insets \(insets)")
                require(r.x + r.width <= size.width + slackX && r.y + r.height <= size.height + slackY,
                    "item \(k) \(r) outside the content size \(size)")
            }
        }
    } catch {
        requireClientProblem(error, "sections")
    }
}
