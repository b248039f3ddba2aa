/// A run of a layout's items: explicit items (stored one by one) or a generated section.
enum LayoutSegment: Sendable {
    /// Items `start ..< start + count` are explicit items `storageStart ..< storageStart + count`.
    case explicit(start: Int, storageStart: Int, count: Int)
    /// Items `start ..< start + section.count` are `section`'s items.
    case generated(start: Int, section: GeneratedSection)

    var start: Int {
        switch self {
        case .explicit(let start, _, _), .generated(let start, _): return start
        }
    }

    var count: Int {
        switch self {
        case .explicit(_, _, let count): return count
        case .generated(_, let section): return section.count
        }
    }
}
