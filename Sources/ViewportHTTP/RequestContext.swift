import Synchronization

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

    /// Where a deferred answer's work leaves its response before it resumes the connection (the
    /// resumed final call takes it); made only for a deferred answer.
    var deferredResponse: DeferredResponse?

    init(path: String, query: String?) {
        self.path = path
        self.query = query
        self.machine = RequestStateMachine()
    }
}

/// Where a deferred answer's work leaves its response for the connection's MHD thread.
final class DeferredResponse: Sendable {
    private let slot = Mutex<HTTPResponse?>(nil)

    func store(_ response: HTTPResponse) { slot.withLock { $0 = response } }

    func take() -> HTTPResponse? {
        slot.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
