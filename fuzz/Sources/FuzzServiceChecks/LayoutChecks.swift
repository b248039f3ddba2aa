import FuzzSupport
import ViewportCore
@testable import ViewportService

/// Checks a layout the service accepted: every rect finite with a finite far edge and no negative
/// size, ids unique and found again, the content size finite, its description (`POST /v1/layouts`'
/// answer) without null, and the opening plan of a session on it without null.
public func requireSoundLayout(_ layout: Layout, maxItems: Int, _ what: String) {
    require(layout.count <= maxItems, "\(what): \(layout.count) items past the limit \(maxItems)")
    require(layout.contentSize.width.isFinite && layout.contentSize.height.isFinite
        && layout.contentSize.width >= 0 && layout.contentSize.height >= 0, "\(what): content size \(layout.contentSize)")
    for k in 0..<layout.count {
        let r = layout.rects[k]
        require(r.isFinite && (r.x + r.width).isFinite && (r.y + r.height).isFinite, "\(what): item \(k) rect \(r)")
        require(r.width >= 0 && r.height >= 0, "\(what): item \(k) negative size \(r)")
        let id = layout.id(at: k)
        require(!id.isEmpty && layout.item(withID: id) == k, "\(what): item \(k) id \(id) found at \(String(describing: layout.item(withID: id)))")
    }
    var w = JSONWriter()
    PlanEncoder.encodeLayoutInfo(layout, sessions: 1, into: &w)
    requireFiniteJSON(w.bytes, "\(what): layout info")
    var configuration = SessionConfiguration(viewport: Size(width: 375, height: 667))
    configuration.maxViews = 2000
    if let session = try? ViewportSession(layout: layout, configuration: configuration) {
        var p = JSONWriter()
        PlanEncoder.encode(session.lastPlan, layout: layout, into: &p)
        requireFiniteJSON(p.bytes, "\(what): opening plan")
        var s = JSONWriter()
        PlanEncoder.encodeState(session, id: "s", into: &s)
        requireFiniteJSON(s.bytes, "\(what): session state")
    }
}

/// Checks the problem an invalid body answers: a client error with a detail, without null.
public func requireClientProblem(_ error: any Error, _ what: String) {
    let problem = error.problem
    require([400, 413, 422].contains(problem.status), "\(what): status \(problem.status) for \(error)")
    require(!problem.detail.isEmpty, "\(what): empty detail")
    var w = JSONWriter()
    problem.encode(into: &w)
    requireFiniteJSON(w.bytes, "\(what): problem")
}
