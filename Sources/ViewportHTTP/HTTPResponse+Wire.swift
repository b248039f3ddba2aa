import CMicroHTTPD

/// Responses the layer writes to the socket itself (mid-body answers and live answers), after
/// which the connection closes.
extension HTTPResponse {
    /// The response as HTTP/1.1 bytes with `Content-Length` and `Connection: close` (a stream is
    /// read to its end).
    func serializedClosing() -> [UInt8] {
        var bytes: [UInt8]
        switch body {
        case .bytes(let whole):
            bytes = whole
        case .buffer(let buffer):
            bytes = buffer.bytes
        case .stream(let stream):
            bytes = []
            while let chunk = stream.nextChunk() { bytes += chunk }
        }
        return Self.closingHead(status: status, headers: headers, framing: "Content-Length: \(bytes.count)") + bytes
    }

    /// The head of a response after which the connection closes: the status line, `headers`
    /// without the framing ones, `framing`, `Connection: close`.
    static func closingHead(status: Int, headers: [(name: String, value: String)], framing: String) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for field in headers
        where !asciiCaseInsensitiveEquals(field.name, "Content-Length")
            && !asciiCaseInsensitiveEquals(field.name, "Transfer-Encoding")
            && !asciiCaseInsensitiveEquals(field.name, "Connection") {
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "\(framing)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// The reason phrase of a status (`OK`, `Payload Too Large`, …), or empty (libmicrohttpd's
    /// table: a lookup, no I/O).
    static func reasonPhrase(_ status: Int) -> String {
        MHD_get_reason_phrase_for(UInt32(clamping: status)).map { String(cString: $0) } ?? ""
    }
}

extension HTTPResponseBody {
    /// The body as chunks in order, to end a live answer with: one chunk for a body in memory,
    /// a stream's chunks read to its end.
    func drainedChunks() -> [[UInt8]] {
        switch self {
        case .bytes(let bytes):
            return [bytes]
        case .buffer(let buffer):
            return [buffer.bytes]
        case .stream(let stream):
            var chunks: [[UInt8]] = []
            while let chunk = stream.nextChunk() { chunks.append(chunk) }
            return chunks
        }
    }
}
