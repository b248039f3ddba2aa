/// A body sink whose answer may start before the body has ended: it produces the answer as the
/// body arrives (an NDJSON stream of updates answering a plan line each).
///
/// libmicrohttpd 0.9.75 queues a response only before the body or after it, so for these sinks
/// the layer writes the answer itself once it has something to say and the upload is still going:
/// the head (`liveStatus`, `liveHeaders`, `Transfer-Encoding: chunked`, `Connection: close`)
/// straight to the socket, then each `takeReady()` as one chunk, never blocking the worker (what the
/// socket does not take waits, at most one piece in the layer and the rest in the sink). A client that reads while it sends
/// gets the answer as it is made; one that reads only after sending gets it all at the end. After
/// the body, the sink's `finish` answer supplies the rest of the body (its status and headers are
/// not used) and the connection closes.
///
/// Small answers stay on the ordinary path (queued after the body, keep-alive): the layer goes
/// live only when at least ``LiveAnswer/thresholdBytes`` are ready, or anything is ready and the
/// body has been arriving for ``LiveAnswer/afterSeconds``, or anything is ready, the body so far
/// ends where a message ends (``answersAreDue``) and more of it may come (no `Content-Length`, or
/// short of it): a client that sends a line and waits for its answer before the next one.
public protocol HTTPLiveBodySink: HTTPBodySink {
    /// Status of the answer if it goes out live.
    var liveStatus: Int { get }
    /// Header fields of the answer if it goes out live (the layer adds the framing ones).
    var liveHeaders: [(name: String, value: String)] { get }
    /// Bytes of answer produced and not taken yet.
    var readyBytes: Int { get }
    /// Takes the oldest of the answer bytes produced so far: all of them, or a bounded piece (the
    /// layer takes again while the socket keeps up, so what the client has not read stays in the
    /// sink and counts against the sink's own bound).
    func takeReady() -> [UInt8]
    /// Whether the body so far ends where a message ends, so that a client may be waiting for
    /// the answers before it sends more (the layer is called only when bytes arrive: a time limit
    /// alone would leave that client waiting for ever).
    var answersAreDue: Bool { get }
}

extension HTTPLiveBodySink {
    public var answersAreDue: Bool { false }
}
