import Synchronization

/// State shared by every MHD thread of one server: the handler and the drain bookkeeping.
/// MHD callbacks reach it through their `cls` pointer (unretained: ``HTTPServer`` owns it and
/// stops the daemon before releasing it).
final class ServerCore: Sendable {
    let handler: any HTTPHandler
    let log: @Sendable (String) -> Void
    /// Set by ``HTTPServer/stop()``: new requests are answered by `handler.unavailable`.
    let draining = Atomic<Bool>(false)
    /// Requests that were handed to `handler.begin` and are not completed yet.
    let inFlight = Atomic<Int>(0)
    /// Latest MHD log line, used to explain a failed start.
    let lastMessage = Mutex<String>("")
    /// Open WebSocket connections (each on its own thread).
    let webSockets: ConnectionThreads
    /// Threads writing the rest of a live answer while MHD holds its connection suspended.
    let liveDrains: ConnectionThreads
    /// Most bytes that `.collect` bodies and WebSocket receive buffers may hold at once, all
    /// connections together.
    let bodyBudget: BodyBudget
    /// The threads that run deferred answers while their connections are suspended.
    let deferredWork: DeferredWorkPool

    init(
        handler: any HTTPHandler, webSocketTimeout: Double, bodyBudget: Int = .max,
        deferredWork: DeferredWorkPool = DeferredWorkPool(threads: 0, queueLimit: 0), log: @escaping @Sendable (String) -> Void
    ) {
        self.deferredWork = deferredWork
        self.handler = handler
        self.log = log
        self.webSockets = ConnectionThreads(timeoutSeconds: webSocketTimeout)
        self.liveDrains = ConnectionThreads(timeoutSeconds: webSocketTimeout)
        self.bodyBudget = BodyBudget(limit: bodyBudget)
    }

    /// Takes `bytes` from the shared body budget (``BodyBudget/reserve(_:)``).
    func reserveBody(_ bytes: Int) -> Bool { bodyBudget.reserve(bytes) }

    /// Gives back what ``reserveBody(_:)`` took.
    func releaseBody(_ bytes: Int) { bodyBudget.release(bytes) }

    /// Counts a request in unless the server is draining (increment first, then check, so
    /// `stop()` — which sets `draining` and then waits for 0 — can never miss it).
    func admit() -> Bool {
        inFlight.add(1, ordering: .sequentiallyConsistent)
        if draining.load(ordering: .sequentiallyConsistent) {
            inFlight.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    func record(message: String) {
        lastMessage.withLock { $0 = message }
        // The layer returns MHD_NO from the access handler only to close a connection on purpose
        // (after answering on the socket itself: mid-body, or a live answer); MHD calls that an
        // internal error. Not worth a log line per request.
        guard !message.hasPrefix("Application reported internal error") else { return }
        log("libmicrohttpd: \(message)")
    }
}
