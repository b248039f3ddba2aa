/// An entry that names an item and its view: how plans and state lists are written
/// (`{"id":…,"view":…}` in JSON, the snapshot's entries), whether it is a `PlanEntry` from an
/// array or a `ReuseEntry` read in place from a plan's storage (`Plan.withViewLists`).
public protocol ItemAndView {
    var item: Int { get }
    var view: Int { get }
}

extension PlanEntry: ItemAndView {}
extension ReuseEntry: ItemAndView {}
