#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The answer of an ``HTTPLiveBodySink`` that the layer writes itself while the request body is
/// still arriving: chunked HTTP/1.1 on the connection's socket, with `Connection: close`.
///
/// Writes never block the MHD worker: ``flush()`` sends what the socket takes and keeps the rest
/// in `pending` (at most one ``HTTPLiveBodySink/takeReady()`` worth: the driver takes more only
/// once `pending` is empty). What is left when the body ends is written by a drain thread while
/// MHD holds the connection suspended (see ``RequestDriver``).
struct LiveAnswer {
    /// Ready bytes that start a live answer at once.
    static let thresholdBytes = 64 * 1024
    /// How long a body may arrive before whatever is ready starts a live answer.
    static let afterSeconds = 0.05

    let socket: Int32
    /// Bytes not written yet, from `offset` on.
    private(set) var pending: [UInt8]
    private var offset = 0

    /// Starts with the head: the status line, the sink's header fields, and the framing ones.
    init(socket: Int32, status: Int, headers: [(name: String, value: String)]) {
        self.socket = socket
        pending = RequestDriver.closingHead(status: status, headers: headers, framing: "Transfer-Encoding: chunked")
    }

    /// True when everything appended so far has been written.
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

    /// Sends what the socket takes now, without waiting. False when the connection is broken.
    mutating func flush() -> Bool {
        while offset < pending.count {
            let written = pending.withUnsafeBytes { raw in
                send(socket, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
            } else if written < 0 && SocketWriter.isTransient(errno) {
                return true
            } else {
                return false
            }
        }
        compact()
        return true
    }

    /// The bytes still to write (for a drain thread).
    var unwritten: [UInt8] { Array(pending[offset...]) }

    private mutating func compact() {
        if offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
        }
    }
}
