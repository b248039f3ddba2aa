/// The answer of an ``HTTPLiveBodySink`` that the layer writes itself while the request body is
/// still arriving: chunked HTTP/1.1 with `Connection: close`. This is its byte buffer only; the
/// ``RequestStateMachine`` decides what goes in, and ``RequestDriver`` sends it on the socket.
///
/// Writes never block the MHD worker: the driver sends what the socket takes and reports it with
/// ``advance(by:)``; the rest stays here (at most one ``HTTPLiveBodySink/takeReady()`` worth: the
/// machine takes more only once everything was sent). What is left when the body ends is written
/// by a drain thread while MHD holds the connection suspended.
struct LiveAnswer {
    /// Ready bytes that start a live answer at once.
    static let thresholdBytes = 64 * 1024
    /// How long a body may arrive before whatever is ready starts a live answer.
    static let afterSeconds = 0.05

    /// Bytes not sent yet, from `offset` on.
    private(set) var pending: [UInt8]
    private var offset = 0

    /// Starts with the head: the status line, the sink's header fields, and the framing ones.
    init(status: Int, headers: [(name: String, value: String)]) {
        pending = HTTPResponse.closingHead(status: status, headers: headers, framing: "Transfer-Encoding: chunked")
    }

    /// True when everything appended so far has been sent.
    var isFlushed: Bool { offset == pending.count }

    /// Appends `bytes` as one chunk (nothing for no bytes: an empty chunk would end the body).
    mutating func append(chunk bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        compact()
        pending += Array(String(bytes.count, radix: 16).utf8) + [13, 10]
        pending += bytes
        pending += [13, 10]
    }

    /// Appends the last chunk: the end of the body.
    mutating func appendEnd() {
        compact()
        pending += Array("0\r\n\r\n".utf8)
    }

    /// Calls `body` with the bytes not sent yet.
    func withUnsent<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try pending.withUnsafeBytes { raw in try body(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
    }

    /// `count` more bytes were sent.
    mutating func advance(by count: Int) {
        offset = min(pending.count, offset + max(0, count))
        compact()
    }

    /// The bytes not sent yet (for a drain thread).
    var unwritten: [UInt8] { Array(pending[offset...]) }

    private mutating func compact() {
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
        }
    }
}
