/// Per-request state, created by the URI callback, stored in MHD's `*con_cls`, released in
/// the request-completed callback. Only the connection's MHD thread touches it.
final class RequestContext {
    let path: String
    let query: String?
    /// Where the request is in its lifecycle (the decisions; ``RequestDriver`` does the I/O).
    var machine: RequestStateMachine

    init(path: String, query: String?, core: ServerCore) {
        self.path = path
        self.query = query
        self.machine = RequestStateMachine(handler: core.handler, budget: core.bodyBudget)
    }
}
