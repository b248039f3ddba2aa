/// The answer of an ``HTTPLiveBodySink`` that the layer writes itself while the request body is
/// still arriving: chunked HTTP/1.1 with `Connection: close`. This is its byte buffer only; the
/// ``RequestStateMachine`` decides what goes in, and ``RequestDriver`` sends it on the socket.
///
/// Writes never block the MHD worker: the driver sends what the socket takes and reports it with
/// ``advance(by:)``; the rest stays here (at most one ``HTTPLiveBodySink/takeReady()`` worth: the
/// machine takes more only once everything was sent). What is left when the body ends is written
/// by a drain thread while MHD holds the connection suspended.
///
/// The end of a long answer (a client that reads only after sending: everything the sink still
/// holds, up to hundreds of MB) is kept as the sink's own pieces (``following``), not copied into
/// one buffer: appending them all to `pending` cost two full copies plus the page faults of a
/// buffer growing to that size, a fifth of an NDJSON stream of 100k jumps (`perf`).
struct LiveAnswer {
    /// Ready bytes that start a live answer at once.
    static let thresholdBytes = 64 * 1024
    /// How long a body may arrive before whatever is ready starts a live answer.
    static let afterSeconds = 0.05

    /// Bytes not sent yet, from `offset` on.
    private(set) var pending: [UInt8]
    private var offset = 0
    /// Whole pieces that follow `pending` (the end of the answer), sent by a drain thread.
    private var following: [[UInt8]] = []

    /// Starts with the head: the status line, the sink's header fields, and the framing ones.
    init(status: Int, headers: [(name: String, value: String)]) {
        pending = HTTPResponse.closingHead(status: status, headers: headers, framing: "Transfer-Encoding: chunked")
    }

    /// True when everything appended so far has been sent.
    var isFlushed: Bool { offset == pending.count && following.isEmpty }

    /// Appends `bytes` as one chunk (nothing for no bytes: an empty chunk would end the body).
    mutating func append(chunk bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        compact()
        pending += Self.sizeLine(bytes.count)
        pending += bytes
        pending += [13, 10]
    }

    /// Appends `bytes` as one chunk of the answer's end (after the body has ended): into
    /// `pending` while it stays within ``thresholdBytes`` (a short end goes out without a drain
    /// thread), else as pieces that follow it, not copied.
    mutating func appendToEnd(chunk bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        guard following.isEmpty && pending.count - offset + bytes.count <= Self.thresholdBytes else {
            following.append(Self.sizeLine(bytes.count))
            following.append(bytes)
            following.append([13, 10])
            return
        }
        append(chunk: bytes)
    }

    /// Appends the last chunk: the end of the body.
    mutating func appendEnd() {
        compact()
        let end = Array("0\r\n\r\n".utf8)
        if following.isEmpty { pending += end } else { following.append(end) }
    }

    /// Calls `body` with the bytes of `pending` not sent yet (the pieces that follow it go to a
    /// drain thread: ``unwrittenPieces``).
    func withUnsent<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try pending.withUnsafeBytes { raw in try body(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
    }

    /// `count` more bytes of `pending` were sent.
    mutating func advance(by count: Int) {
        offset = min(pending.count, offset + max(0, count))
        compact()
    }

    /// The bytes not sent yet, in order, as pieces (for a drain thread; none is empty).
    var unwrittenPieces: [[UInt8]] {
        let rest = offset < pending.count ? [Array(pending[offset...])] : []
        return rest + following
    }

    /// The bytes not sent yet, in one buffer.
    var unwritten: [UInt8] { unwrittenPieces.flatMap { $0 } }

    /// A chunk's size line: its length in hex, CRLF.
    private static func sizeLine(_ count: Int) -> [UInt8] { Array(String(count, radix: 16).utf8) + [13, 10] }

    private mutating func compact() {
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
        }
    }
}
