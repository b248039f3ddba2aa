#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ViewportCore
import ViewportHTTP
import ViewportJSON

/// Applies an NDJSON stream of viewport updates line by line as the body arrives, writing one plan
/// line per update. A line `{"patch": {…}}` is an edit of the session's layout (the body of
/// `PATCH /v1/sessions/{id}/layout`), applied in order with the updates around it and answered by
/// its plan. A bad line writes a problem object carrying `"line": n` and stops the stream;
/// the updates before it stay applied.
///
/// Plans go out while the upload continues (an ``HTTPLiveBodySink``): libmicrohttpd sends a
/// response only once the whole request is read, so once 64 KiB of plan lines are ready, or the
/// upload has lasted 50 ms, the HTTP layer writes the chunked answer itself and takes the lines as
/// the socket accepts them. A client that reads while it uploads (curl does) sees its plans as
/// they are made; one that reads only afterwards finds them held here until the socket takes
/// them, in 64 KiB chunks. Small streams are answered after the upload like any request. The
/// held plans are bounded too, by twice `http.maxBodyBytes` (a plan line is typically 1.5× its
/// update line, but a 20-byte jump can answer a plan of thousands of views): once they pass that,
/// the next update line is refused with a 413 problem on its line and the stream stops.
/// The held bytes are then at most the limit plus one plan (itself bounded by `sessions.maxViews`).
///
/// The HTTP layer calls it from one thread at a time (the connection's MHD worker), so its state
/// skips the runtime's exclusivity checks (`@exclusivity(unchecked)`: a check per access was ~4 %
/// of a small-step line's time, `perf`).
final class UpdateStreamSink: HTTPLiveBodySink {
    private let sessionID: String
    /// The session's handle here, kept between lines (it changes if the session moves).
    @exclusivity(unchecked) private var hint: SessionHandle?
    private let service: SessionMessages
    /// Told the stream's status when it ends (the handler records the request then).
    var onFinish: (Int) -> Void = { _ in }
    /// The start of a line whose end has not arrived yet.
    @exclusivity(unchecked) private var partial: [UInt8] = []
    private static let chunkSize = 64 * 1024
    @exclusivity(unchecked) private var output = JSONWriter(capacity: UpdateStreamSink.chunkSize + 1024)
    /// Full chunks of plan lines, in order; those before `firstChunk` were taken (and emptied).
    private var chunks: [[UInt8]] = []
    private var firstChunk = 0
    @exclusivity(unchecked) private var lineNumber = 0
    @exclusivity(unchecked) private var stopped = false
    /// Bytes of plan lines held in `chunks` and `output`.
    private var heldBytes: Int { heldInChunks + output.count }
    private var heldInChunks = 0
    private let maxHeldBytes: Int

    init(sessionID: String, hint: SessionHandle?, messages: SessionMessages, maxBodyBytes: Int) {
        self.sessionID = sessionID
        self.hint = hint
        self.service = messages
        self.maxHeldBytes = 2 * maxBodyBytes
    }

    /// Before the stream starts (on a thread that may wait for the store, not the connection's
    /// worker): takes the session here, so that its lines are answered from memory. Its problem
    /// (404, 503) answers the request instead of a stream.
    func holdSession() throws(Problem) {
        try service.hold(sessionID, hint: &hint)
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        guard !stopped, let base = chunk.baseAddress else { return }
        var start = 0
        // Each line's end found with memchr.
        while start < chunk.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), chunk.count - start) {
            let i = base.distance(to: UnsafeRawPointer(found))
            if partial.isEmpty {
                process(UnsafeRawBufferPointer(rebasing: chunk[start..<i]))
            } else {
                partial.append(contentsOf: chunk[start..<i])
                let line = partial
                partial.removeAll(keepingCapacity: true)
                line.withUnsafeBytes { process($0) }
            }
            start = i + 1
            if stopped { return }
        }
        if start < chunk.count { partial.append(contentsOf: chunk[start...]) }
    }

    // MARK: HTTPLiveBodySink

    var liveStatus: Int { 200 }
    var liveHeaders: [(name: String, value: String)] { Self.headers }
    var readyBytes: Int { heldBytes }
    /// The body so far ends with a whole line: a client that sends a line and waits for its plan
    /// before the next one gets it now.
    var answersAreDue: Bool { partial.isEmpty }

    /// The oldest 64 KiB chunk, or the lines since the last one: the layer holds at most one
    /// piece it could not send yet, and the rest stays here under `maxHeldBytes`.
    func takeReady() -> [UInt8] {
        if firstChunk < chunks.count {
            let chunk = chunks[firstChunk]
            chunks[firstChunk] = []
            firstChunk += 1
            if firstChunk == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                firstChunk = 0
            }
            heldInChunks -= chunk.count
            return chunk
        }
        defer { output.removeAll() }
        return output.bytes
    }

    private static let headers: [(name: String, value: String)] = [("Content-Type", "application/x-ndjson")]

    func finish(truncated: Bool) -> HTTPResponse {
        if !stopped {
            if truncated {
                lineNumber += 1
                var problem = Problem.tooLarge("body: the stream grew past http.maxBodyBytes; the updates before this line were applied")
                problem.line = lineNumber
                write(problem)
            } else if !partial.isEmpty {
                let line = partial
                partial = []
                line.withUnsafeBytes { process($0) }
            }
        }
        onFinish(200)
        if !output.isEmpty { chunks.append(output.bytes) }
        return HTTPResponse(status: 200, headers: Self.headers, body: .stream(PlanLineStream(Array(chunks[firstChunk...]))))
    }

    private func process(_ line: UnsafeRawBufferPointer) {
        lineNumber += 1
        // Blank lines (and a trailing \r) carry no update.
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }) else { return }
        if heldBytes > maxHeldBytes {
            var problem = Problem.tooLarge(
                "line \(lineNumber): the plans held for this stream, not yet read by the client, passed twice http.maxBodyBytes (\(maxHeldBytes) bytes); the updates before this line were applied. Read the answer while sending, send the rest in another request, or stream live over GET /v1/sessions/{id}/socket")
            problem.line = lineNumber
            write(problem)
            return
        }
        do {
            let message = try StreamMessage.decode(line)
            try service.apply(message, sessionID: sessionID, hint: &hint, into: &output)
            output.raw(byte: UInt8(ascii: "\n"))
            if output.count >= Self.chunkSize {
                chunks.append(output.bytes)
                heldInChunks += output.count
                output.removeAll()
            }
        } catch {
            var problem = error.problem
            problem.line = lineNumber
            problem.detail = "line \(lineNumber): \(problem.detail)"
            write(problem)
        }
    }

    private func write(_ problem: Problem) {
        problem.encode(into: &output)
        output.raw(byte: UInt8(ascii: "\n"))
        stopped = true
    }
}
