/// Receives a request body chunk by chunk as it arrives (used for NDJSON streams of updates).
///
/// All calls for one request happen on the same MHD worker thread, one at a time, in order.
public protocol HTTPBodySink: AnyObject {
    /// The next bytes of the body; the buffer is only valid during the call.
    func consume(_ chunk: UnsafeRawBufferPointer)
    /// Called once after the last chunk. `truncated` is true when the body exceeded maxBytes: the rest was not delivered.
    func finish(truncated: Bool) -> HTTPResponse
}
