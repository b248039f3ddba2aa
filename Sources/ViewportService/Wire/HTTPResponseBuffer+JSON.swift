import ViewportHTTP
import ViewportJSON

/// The handoff of written JSON to the HTTP layer without a copy: the writer's `malloc`'d memory
/// becomes the response body that libmicrohttpd frees once sent. The JSON module knows nothing of
/// HTTP; this is where the two meet.
extension HTTPResponseBuffer {
    /// A response body that owns `json`'s memory (not copied).
    public convenience init(_ json: consuming JSONBuffer) {
        let (base, count) = json.takeMallocated()
        self.init(takingMallocated: base, count: count)
    }
}

extension JSONWriter {
    /// The JSON written, as a response body that the server sends without copying it.
    public consuming func finish() -> HTTPResponseBuffer {
        HTTPResponseBuffer(finish() as JSONBuffer)
    }
}
