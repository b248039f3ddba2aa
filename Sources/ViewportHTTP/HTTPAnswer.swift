/// What a request's handler answers once it has the body (``HTTPRequestAction/deferrable(maxBytes:onBody:)``):
/// a response now, or work that waits on something slow (a round trip to a remote store) and so
/// runs off the HTTP workers.
public enum HTTPAnswer: Sendable {
    /// Send this response now.
    case response(HTTPResponse)
    /// Run this on the server's deferred-work pool (``HTTPServerConfiguration/deferredThreads``)
    /// while MHD holds the connection suspended, then send its response. The worker serves its
    /// other connections meanwhile. When the pool's queue is full (or the server stops), the
    /// work does not run and ``HTTPHandler/deferredWorkRefused(_:)`` is sent instead.
    case deferred(@Sendable () -> HTTPResponse)
}

extension HTTPAnswer {
    /// The response, running deferred work on the calling thread (for callers without the HTTP
    /// layer: in-process clients and tests).
    public func responseRunningWorkHere() -> HTTPResponse {
        switch self {
        case .response(let response): response
        case .deferred(let work): work()
        }
    }
}
