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
    /// Where a prelude's work (``HTTPRequestAction/prepare(_:)``) leaves the action it answers
    /// before it resumes the connection (the resumed first call takes it).
    var preparedAction: PreparedAction?

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

/// Where a prelude's work (``HTTPRequestAction/prepare(_:)``) leaves the action it answers for the
/// connection's MHD thread. The action is handed over whole: the pool's thread makes it and never
/// touches it again once stored (it resumes the connection after), so it is not shared.
final class PreparedAction: @unchecked Sendable {
    private let slot = Mutex<Bool>(false)
    private var action: HTTPRequestAction?

    func store(_ action: HTTPRequestAction) {
        slot.withLock { stored in
            self.action = action
            stored = true
        }
    }

    func take() -> HTTPRequestAction? {
        slot.withLock { stored in
            guard stored else { return nil }
            stored = false
            defer { action = nil }
            return action
        }
    }
}
