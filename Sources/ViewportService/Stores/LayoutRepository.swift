import ViewportCore

/// Where the API keeps layouts: in this process (``LayoutStore``, the default), or in this
/// process in front of a store shared by several instances (``SharedLayoutStore``), where a
/// layout posted to one instance is found by id on every other.
protocol LayoutRepository: Sendable {
    /// Layouts held by this instance.
    var count: Int { get }

    /// Stores `layout` (or finds the identical one) and, with `retain`, counts one more session on
    /// it. Answers the stored copy and whether it was new here.
    func store(_ layout: Layout, retain: Bool) throws(Problem) -> (layout: Layout, created: Bool)

    /// Counts one more session on the layout with this id; nil when there is none.
    func retain(id: String) throws(Problem) -> Layout?

    /// Counts one session fewer on a layout.
    func release(id: String)

    /// The layout with this id and how many sessions of this instance use it.
    func lookup(id: String) throws(Problem) -> (layout: Layout, sessions: Int)?

    /// Drops layouts unused for longer than the idle timeout.
    func sweep()
}

extension LayoutStore: LayoutRepository {}
