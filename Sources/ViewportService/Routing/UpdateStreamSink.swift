import ViewportCore
import ViewportHTTP

/// Applies an NDJSON stream of viewport updates line by line as the body arrives, writing one plan
/// line per update. A bad line writes a problem object carrying `"line": n` and stops the stream;
/// the updates before it stay applied.
///
/// libmicrohttpd sends a response only once the whole request is read, so the plan lines are held
/// until then, in 64 KiB chunks that are released one by one as the chunked answer goes out. The
/// held plans are bounded too, by twice `http.maxBodyBytes` (a plan line is typically 1.5× its
/// update line, but a 20-byte jump can answer a plan of thousands of views): once they pass that,
/// the next update line is refused with a 413 problem on its line and the stream stops.
/// The held bytes are then at most the limit plus one plan (itself bounded by `sessions.maxViews`).
final class UpdateStreamSink: HTTPBodySink {
    private let session: SessionHandle
    private let handler: APIHandler
    private let onFinish: (Int) -> Void
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    private static let chunkSize = 64 * 1024
    private var output = JSONWriter(capacity: UpdateStreamSink.chunkSize + 1024)
    /// Full chunks of plan lines, in order.
    private var chunks: [[UInt8]] = []
    private var lineNumber = 0
    private var stopped = false
    /// Bytes of plan lines held in `chunks` and `output`.
    private var heldBytes: Int { heldInChunks + output.count }
    private var heldInChunks = 0
    private let maxHeldBytes: Int

    init(session: SessionHandle, handler: APIHandler, onFinish: @escaping (Int) -> Void) {
        self.session = session
        self.handler = handler
        self.onFinish = onFinish
        self.maxHeldBytes = 2 * handler.maxBodyBytes
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        guard !stopped else { return }
        var start = 0
        for i in 0..<chunk.count where chunk[i] == UInt8(ascii: "\n") {
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
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/x-ndjson")], body: .stream(PlanLineStream(chunks)))
    }

    private func process(_ line: UnsafeRawBufferPointer) {
        lineNumber += 1
        // Blank lines (and a trailing \r) carry no update.
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }) else { return }
        if heldBytes > maxHeldBytes {
            var problem = Problem.tooLarge(
                "line \(lineNumber): the plans answered so far passed twice http.maxBodyBytes (\(maxHeldBytes) bytes) while the upload was still arriving; the updates before this line were applied. Send the rest in another request, or stream live over GET /v1/sessions/{id}/socket")
            problem.line = lineNumber
            write(problem)
            return
        }
        do {
            let update = try UpdateRequest.decode(line)
            try handler.apply(update, to: session, into: &output)
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
