/// What the server does with a request after ``HTTPHandler/begin(_:)``.
public enum HTTPRequestAction {
    /// Answer with this response; any request body is read and discarded first (keep-alive
    /// survives). A body declared larger than 1 MiB is not read: the response is sent at once
    /// with `Connection: close`.
    case respond(HTTPResponse)
    /// Buffer the whole body (limit enforced as bytes arrive), then answer `onBody(body)`.
    ///
    /// `Content-Length > maxBytes`: ``HTTPHandler/payloadTooLarge(_:limit:)`` is sent at once,
    /// before any body is read, and the connection closes. A chunked body that grows past
    /// `maxBytes`: the same 413 is sent at once, mid-body (MHD 0.9.75 refuses to queue a response
    /// while a body is arriving, so the layer writes it to the socket itself), the rest of the
    /// body is dropped and the connection closes; `onBody` is never called.
    case collect(maxBytes: Int, onBody: ([UInt8]) -> HTTPResponse)
    /// As ``collect(maxBytes:onBody:)``, but `onBody` may answer that the request waits on
    /// something slow: ``HTTPAnswer/deferred(_:)`` work runs off the HTTP workers while the
    /// connection is suspended, and its response is sent when it returns.
    case deferrable(maxBytes: Int, onBody: ([UInt8]) -> HTTPAnswer)
    /// Feed the body to `sink` as it arrives, then answer `sink.finish(truncated: false)`.
    ///
    /// `Content-Length > maxBytes`: 413 at once as for `.collect` (the sink gets
    /// `finish(truncated: true)`, its response is dropped). A chunked body that grows past
    /// `maxBytes`: the sink receives exactly the first `maxBytes` bytes, then
    /// `finish(truncated: true)`; that response is sent at once with `Connection: close`
    /// (a streamed one is drained and sent with `Content-Length`), the rest of the body is
    /// dropped. If the client disconnects first, the sink still gets `finish(truncated: true)`
    /// (its response is dropped). An ``HTTPLiveBodySink`` may have its answer start before the
    /// body ends (see there); a truncation then ends that answer instead.
    case stream(maxBytes: Int, sink: any HTTPBodySink)
    /// Accept a WebSocket handshake: answer `101 Switching Protocols` (with `Upgrade`,
    /// `Sec-WebSocket-Accept` and the chosen `Sec-WebSocket-Protocol`) on the final access-handler
    /// call, then serve the connection's frames on a thread of its own (see
    /// ``WebSocketMessageHandler``). A request with a body is answered 400 instead (build the
    /// acceptance from ``WebSocketHandshake/validate(_:)``, which already refuses one).
    ///
    /// The connection stays in MHD's books (it counts against `connectionLimit`) until it closes;
    /// ``HTTPServer/stop()`` closes it with 1001 before the daemon stops.
    case webSocket(WebSocketAcceptance)
}
