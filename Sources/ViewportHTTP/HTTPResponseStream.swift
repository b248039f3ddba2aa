/// Produces a streamed response body (see ``HTTPResponseBody/stream(_:)``).
public protocol HTTPResponseStream: AnyObject, Sendable {
    /// The next chunk of the body, or nil at its end. Called on an MHD thread, one call at a time.
    /// An empty chunk is skipped (the stream is asked again at once), so block rather than spin.
    func nextChunk() -> [UInt8]?
}
