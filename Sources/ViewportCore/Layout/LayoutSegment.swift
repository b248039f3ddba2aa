/// A run of a layout's items: explicit items (stored one by one), a generated section, a stack,
/// or an `items` section of a layout with stacks (placed relative to its origin).
enum LayoutSegment: Sendable {
    /// Items `start ..< start + count` are explicit items `storageStart ..< storageStart + count`.
    case explicit(start: Int, storageStart: Int, count: Int)
    /// Items `start ..< start + section.count` are `section`'s items.
    case generated(start: Int, section: GeneratedSection)
    /// Items `start ..< start + count` are the items of the layout's stack `stack` (an index into
    /// `Layout.stacks`), by rank.
    case stack(start: Int, count: Int, stack: Int)
    /// Items `start ..< start + count` are the items of `Layout.placedSections[section]`.
    case placed(start: Int, count: Int, section: Int)

    var start: Int {
        switch self {
        case .explicit(let start, _, _), .generated(let start, _), .stack(let start, _, _), .placed(let start, _, _): return start
        }
    }

    var count: Int {
        switch self {
        case .explicit(_, _, let count), .stack(_, let count, _), .placed(_, let count, _): return count
        case .generated(_, let section): return section.count
        }
    }

    /// The same segment starting at `start`.
    func starting(at start: Int) -> LayoutSegment {
        switch self {
        case .explicit(_, let storageStart, let count): return .explicit(start: start, storageStart: storageStart, count: count)
        case .generated(_, let section): return .generated(start: start, section: section)
        case .stack(_, let count, let stack): return .stack(start: start, count: count, stack: stack)
        case .placed(_, let count, let section): return .placed(start: start, count: count, section: section)
        }
    }
}
