#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client on loopback for `viewport-bench net`: plain sockets, no Foundation, so
/// that the client costs little next to the server it measures.
final class NetClient: @unchecked Sendable {
    let fd: Int32
    /// Bytes read and not consumed yet.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Wraps an accepted socket.
    init(accepted: Int32) {
        fd = accepted
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Writes all of `bytes` (blocking).
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw Failure(description: "send: errno \(errno)")
            }
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Reads what the socket has (blocking until something); false at the end of the stream.
    @discardableResult
    func fill() throws -> Bool {
        if pendingStart > 0 && pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                pending.append(contentsOf: chunk[..<n])
                return true
            }
            if n == 0 { return false }
            if errno == EINTR { continue }
            throw Failure(description: "recv: errno \(errno)")
        }
    }

    /// Hands the unconsumed bytes to `body`, which answers how many it consumed.
    func consume(_ body: (UnsafeRawBufferPointer) throws -> Int) rethrows {
        let used = try pending.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[pendingStart...])) }
        pendingStart += used
        if pendingStart > 1 << 20 {
            pending.removeSubrange(..<pendingStart)
            pendingStart = 0
        }
    }

    var available: Int { pending.count - pendingStart }

    /// Reads through the end of the head; returns the status and header lines (lowercased names).
    func readHead() throws -> (status: Int, headers: [String: String]) {
        while true {
            var head: (Int, [String: String])?
            consume { bytes in
                guard let end = Self.find([13, 10, 13, 10], in: bytes) else { return 0 }
                let text = String(decoding: bytes[..<end], as: UTF8.self)
                var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
                let statusLine = lines.removeFirst().split(separator: " ")
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: " ")
                }
                head = (statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0, headers)
                return end + 4
            }
            if let head { return head }
            guard try fill() else { throw Failure(description: "connection closed before the response head") }
        }
    }

    /// Reads a response body (Content-Length, chunked, or to the end of the stream), handing each
    /// piece to `body` as it arrives.
    func readBody(headers: [String: String], _ body: (UnsafeRawBufferPointer) -> Void) throws {
        if let length = headers["content-length"].flatMap({ Int($0) }) {
            var left = length
            while left > 0 {
                if available == 0 { guard try fill() else { throw Failure(description: "body cut short") } }
                consume { bytes in
                    let n = min(left, bytes.count)
                    body(UnsafeRawBufferPointer(rebasing: bytes[..<n]))
                    left -= n
                    return n
                }
            }
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            enum State { case size, data(Int), lineEnd(Int), trailer, finished }
            var state = State.size
            while true {
                var needMore = false
                while !needMore {
                    consume { bytes in
                        switch state {
                        case .size:
                            guard let end = Self.find([13, 10], in: bytes) else { needMore = true; return 0 }
                            let text = String(decoding: bytes[..<end], as: UTF8.self)
                            let size = Int(text.split(separator: ";").first.map(String.init) ?? "", radix: 16) ?? 0
                            state = size == 0 ? .trailer : .data(size)
                            return end + 2
                        case .data(let left):
                            guard !bytes.isEmpty else { needMore = true; return 0 }
                            let n = min(left, bytes.count)
                            body(UnsafeRawBufferPointer(rebasing: bytes[..<n]))
                            state = n == left ? .lineEnd(2) : .data(left - n)
                            return n
                        case .lineEnd(let left):
                            guard !bytes.isEmpty else { needMore = true; return 0 }
                            let n = min(left, bytes.count)
                            state = n == left ? .size : .lineEnd(left - n)
                            return n
                        case .trailer:
                            guard let end = Self.find([13, 10], in: bytes) else { needMore = true; return 0 }
                            if end == 0 { state = .finished; needMore = true }
                            return end + 2
                        case .finished:
                            needMore = true
                            return 0
                        }
                    }
                }
                if case .finished = state { return }
                guard try fill() else { throw Failure(description: "chunked body cut short") }
            }
        } else {
            while true {
                consume { bytes in
                    body(bytes)
                    return bytes.count
                }
                guard try fill() else { return }
            }
        }
    }

    /// One request with a JSON body (or none); the status and the whole body.
    func request(_ method: String, _ path: String, json: [UInt8]? = nil) throws -> (status: Int, body: [UInt8]) {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if let json { head += "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n" }
        head += "\r\n"
        try write(Array(head.utf8) + (json ?? []))
        let (status, headers) = try readHead()
        var body: [UInt8] = []
        try readBody(headers: headers) { body.append(contentsOf: $0) }
        return (status, body)
    }

    static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var i = 0
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0] {
                var match = true
                for k in 1..<needle.count where bytes[i + k] != needle[k] {
                    match = false
                    break
                }
                if match { return i }
            }
            i += 1
        }
        return nil
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self[...]
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
