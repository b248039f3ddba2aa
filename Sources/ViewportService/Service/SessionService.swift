import ViewportCore
import ViewportJSON

/// API v1's session operations, whatever carries them: the HTTP routes, an NDJSON stream's lines
/// and a WebSocket's messages all call these. Takes decoded requests and writes JSON answers;
/// knows nothing of HTTP (statuses and headers are the routes' business).
///
/// Generic over its session repository so that the hot path, ``apply(_:sessionID:hint:into:)``,
/// is specialized for the concrete store: through the protocol, the repository's generic
/// `withSession` looked up generic metadata and copied its result through value witnesses on
/// every update.
final class SessionService<Sessions: SessionRepository>: Sendable {
    let layouts: any LayoutRepository
    let sessions: Sessions
    /// Whether a shared store is configured: a 409 for a `seq` ahead of the session then says
    /// `"resync": true` (the session may have lost updates with a crashed instance).
    let sharedStore: Bool
    let metrics: ServiceMetrics
    /// `layouts.maxItems`: the most items a layout, or an edited one, may have.
    let maxItems: Int
    /// `sessions.maxViews`, given to every session.
    let maxViews: Int

    init(layouts: any LayoutRepository, sessions: Sessions, sharedStore: Bool, metrics: ServiceMetrics, maxItems: Int, maxViews: Int) {
        self.layouts = layouts
        self.sessions = sessions
        self.sharedStore = sharedStore
        self.metrics = metrics
        self.maxItems = maxItems
        self.maxViews = maxViews
    }

    /// Where a session is, for a 404 before anything else; its handle here is the hint for the
    /// operations below.
    func locate(_ id: String) throws(Problem) -> SessionLocation {
        try sessions.locate(id)
    }

    // MARK: Open and end

    /// Opens a session on the layout the request names (stored, or inline and stored now) and
    /// answers its id and the body of `201 Created`: the id, the layout's id, its content size
    /// and the opening plan.
    func open(_ request: SessionRequest) throws(Problem) -> (id: String, body: [UInt8]) {
        var request = request
        request.configuration.maxViews = maxViews
        do {
            try request.configuration.validate()
        } catch {
            throw Problem.invalid(error.description)
        }
        let lease = try retainLayout(request.layout)
        let layout = lease.layout
        let session: ViewportSession
        do {
            session = try ViewportSession(layout: layout, configuration: try request.resolvedConfiguration(in: layout))
        } catch {
            throw error.problem
        }
        // Not inserted, the handle and its lease go: the layout is released.
        let handle = SessionHandle(id: SessionStore.newID(), session: session, layoutLease: lease)
        try sessions.insert(handle)
        count(session.lastPlan)
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("session")
        w.string(handle.id)
        w.key("layout")
        w.string(layout.digest)
        w.key("contentSize")
        PlanEncoder.size(layout.contentSize, into: &w)
        w.key("plan")
        PlanEncoder.encode(session.lastPlan, layout: layout, into: &w)
        w.endObject()
        return (handle.id, w.bytes)
    }

    /// Ends a session (DELETE). Another request may have ended it since it was located: only the
    /// one that removes it succeeds, the others answer 404 like a DELETE that comes after.
    func end(_ id: String) throws(Problem) {
        guard try sessions.end(id) else { throw SessionStore.notFound(id) }
    }

    // MARK: Updates and edits

    /// Applies one update to a session under its lock and writes the plan. `hint` is the
    /// session's handle if known, and is updated (a stream applies many updates to one session).
    /// On an error nothing is written (what the plan had written is taken back).
    ///
    /// The plan is encoded inside the lock, so it never leaves the closure: a plan is a dozen
    /// arrays, and handing it out through the repository's generic result cost a copy, generic
    /// metadata lookups and ~20 retains and releases per update (a fifth of an NDJSON line's time
    /// on small steps, `perf`).
    func apply(_ request: UpdateRequest, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        let mark = w.count
        var counts = (created: 0, reused: 0)
        do throws(Problem) {
            let (applied, handle) = try sessions.withSession(sessionID, hint: hint) { (session) throws(Problem) -> SessionChange<Bool> in
                let before = session.seq
                let plan: Plan
                do {
                    let update = try request.resolve(in: session.layout)
                    plan = try session.apply(update)
                } catch let error as SessionError {
                    throw conflict(error)
                } catch {
                    throw error.problem
                }
                let applied = session.seq != before
                PlanEncoder.encode(plan, layout: session.layout, into: &w)
                counts = (plan.createCount, plan.reuseCount)
                return SessionChange(result: applied, changed: applied)
            }
            hint = handle
            if applied { metrics.count(created: counts.created, reused: counts.reused) }
        } catch {
            w.truncate(to: mark)
            throw error
        }
    }

    /// Applies one edit of a session's layout (PATCH, or a stream's `patch`) under the session's
    /// lock and writes the plan. `hint` as for ``apply(_:sessionID:hint:into:)``.
    func edit(_ request: LayoutEditRequest, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        let (outcome, handle) = try sessions.withSession(sessionID, hint: hint) { (session) throws(Problem) in
            let before = session.seq
            let plan: Plan
            do throws(SessionError) {
                plan = try session.apply(request.edit, anchor: request.anchor, seq: request.seq, maxItems: maxItems)
            } catch {
                throw conflict(error)
            }
            let applied = session.seq != before
            return SessionChange(result: (plan, session.layout, applied), changed: applied)
        }
        hint = handle
        let (plan, layout, applied) = outcome
        if applied { count(plan) }
        PlanEncoder.encode(plan, layout: layout, into: &w)
    }

    /// Applies one line of a stream or one WebSocket message: an update or an edit.
    func apply(_ message: StreamMessage, sessionID: String, hint: inout SessionHandle?, into w: inout JSONWriter) throws(Problem) {
        switch message {
        case .update(let update): try apply(update, sessionID: sessionID, hint: &hint, into: &w)
        case .patch(let edit): try self.edit(edit, sessionID: sessionID, hint: &hint, into: &w)
        }
    }

    /// Makes sure the session is held here with a lease that holds (taking it from the store or
    /// another instance, renewing the lease or writing the session first if it must), changing
    /// nothing: the store work a stream's first line would do, done before the stream starts.
    /// `hint` becomes the session's handle here.
    func hold(_ sessionID: String, hint: inout SessionHandle?) throws(Problem) {
        let (_, handle) = try sessions.withSession(sessionID, hint: hint) { (_) throws(Problem) in SessionChange(result: (), changed: false) }
        hint = handle
    }

    // MARK: Layout changes

    /// Moves a session to another layout (PUT) and answers the plan.
    func changeLayout(of id: String, hint: SessionHandle?, to request: LayoutChangeRequest) throws(Problem) -> [UInt8] {
        // The problems' order puts the session's 404 before what the body names (a layout id's
        // 422), and 422 and 409 before 429, which storing an inline layout can answer when the
        // layout table is full: so the session is found first and, for an inline layout, its
        // checks run (a retry answered, applying nothing) before the layout is stored.
        let retry = try sessions.withSession(id, hint: hint) { (session) throws(Problem) -> SessionChange<[UInt8]?> in
            guard case .inline = request.layout else { return SessionChange(result: nil, changed: false) }
            let plan: Plan?
            do throws(SessionError) {
                plan = try session.checkLayoutChange(seq: request.seq)
            } catch {
                throw conflict(error)
            }
            guard let plan else { return SessionChange(result: nil, changed: false) }
            var w = JSONWriter(capacity: 512)
            PlanEncoder.encode(plan, layout: session.layout, into: &w)
            return SessionChange(result: w.bytes, changed: false)
        }.result
        if let retry { return retry }
        // Dropped unless the session holds it: a failure and a retry (which applies nothing) keep
        // the layout the session has.
        let lease = try retainLayout(request.layout)
        let layout = lease.layout
        let ((plan, current, applied), handle) = try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            let before = session.seq
            let plan: Plan
            do throws(SessionError) {
                plan = try session.changeLayout(to: layout, anchor: request.anchor, seq: request.seq)
            } catch {
                throw conflict(error)
            }
            let applied = session.seq != before
            return SessionChange(result: (plan, session.layout, applied), changed: applied)
        }
        // The session's lease moves to the new layout (the one it left is released).
        handle.hold(lease)
        if applied { count(plan) }
        var w = JSONWriter(capacity: 512)
        PlanEncoder.encode(plan, layout: current, into: &w)
        return w.bytes
    }

    /// The layout a body names, counted as used by one more session until the lease is
    /// transferred to the session or dropped: a stored one by id (422 when unknown) or an inline
    /// one, stored.
    private func retainLayout(_ reference: LayoutReference) throws(Problem) -> LayoutLease {
        switch reference {
        case .id(let id):
            guard let lease = try LayoutLease(retaining: id, in: layouts) else {
                throw Problem.invalid("layout: no stored layout has the id \"\(id)\"")
            }
            return lease
        case .inline(let inline):
            return try LayoutLease(storing: inline, in: layouts)
        }
    }

    // MARK: State

    /// The session's state (`GET /v1/sessions/{id}`).
    func state(of id: String, hint: SessionHandle?) throws(Problem) -> [UInt8] {
        try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            var w = JSONWriter(capacity: 1024)
            PlanEncoder.encodeState(session, id: id, into: &w)
            return SessionChange(result: w.bytes, changed: false)
        }.result
    }

    /// The session adopts the views the client says it has, and answers its state as
    /// ``state(of:hint:)`` does.
    func resync(_ id: String, hint: SessionHandle?, with request: ResyncRequest) throws(Problem) -> [UInt8] {
        let bytes = try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            let state = try request.resolve(in: session.layout)
            do {
                try session.resync(state)
            } catch {
                throw error.problem
            }
            var w = JSONWriter(capacity: 1024)
            PlanEncoder.encodeState(session, id: id, into: &w)
            return SessionChange(result: w.bytes, changed: true)
        }.result
        metrics.countResync()
        return bytes
    }

    /// The session's current layout, read outside the session's lock (a layout version never
    /// changes).
    func layout(of id: String, hint: SessionHandle?) throws(Problem) -> Layout {
        try sessions.withSession(id, hint: hint) { (session) throws(Problem) in
            SessionChange(result: session.layout, changed: false)
        }.result
    }

    // MARK: Helpers

    /// A session error as a problem; with a shared store, a `seq` ahead of the session's says
    /// `"resync": true` (the session may have lost updates with a crashed instance).
    func conflict(_ error: SessionError) -> Problem {
        var problem = error.problem
        if sharedStore, case .sequenceConflict(let current, let sent) = error, sent > current &+ 1, sent != SessionError.seqBelowZero {
            problem.resync = true
            problem.detail += "; the session is behind this client (an instance that held it stopped): POST /v1/sessions/{id}/resync with the views you have"
        }
        return problem
    }

    private func count(_ plan: Plan) {
        metrics.count(created: plan.createCount, reused: plan.reuseCount)
    }
}

extension SessionService {
    /// Stores a layout (or finds the identical one) and answers its id, whether it is new here,
    /// and its description (`POST /v1/layouts`).
    func store(_ layout: Layout) throws(Problem) -> (id: String, created: Bool, body: [UInt8]) {
        let (stored, created) = try layouts.store(layout, retain: false)
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(stored, sessions: nil, into: &w)
        return (stored.digest, created, w.bytes)
    }

    /// A stored layout's description and how many sessions here use it (`GET /v1/layouts/{id}`).
    func layoutInfo(_ id: String) throws(Problem) -> [UInt8] {
        guard let (layout, count) = try layouts.lookup(id: id) else { throw Problem.notFound("layout \(id) does not exist") }
        var w = JSONWriter(capacity: 128)
        PlanEncoder.encodeLayoutInfo(layout, sessions: count, into: &w)
        return w.bytes
    }
}
