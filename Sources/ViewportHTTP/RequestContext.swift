/// Per-request state, created by the URI callback, stored in MHD's `*con_cls`, released in
/// the request-completed callback. Only the connection's MHD thread touches it.
final class RequestContext {
    let path: String
    let query: String?
    /// Where the request is in its lifecycle (the decisions; ``RequestDriver`` does the I/O).
    /// Only the connection's MHD thread touches it, one call at a time, so the runtime's
    /// exclusivity check on each access (a thread-local access set, ~700 instructions per
    /// request) is skipped.
    @exclusivity(unchecked) var machine: RequestStateMachine

    init(path: String, query: String?) {
        self.path = path
        self.query = query
        self.machine = RequestStateMachine()
    }
}
