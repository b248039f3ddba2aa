#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small blocking HTTP/1.1 client over a raw TCP socket, for tests: it sends exactly the
/// bytes asked for (or garbage), reuses its connection (keep-alive), reads chunked bodies,
/// and never waits longer than its timeout.
///
/// One client is one connection; use it from one thread at a time.
public final class HTTPTestClient {
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Seconds any single response (or write) may take.
    public let timeout: Double
    /// Where it is connected.
    public let host: String
    public let port: Int

    private init(fd: Int32, timeout: Double, host: String, port: Int) {
        self.fd = fd
        self.timeout = timeout
        self.host = host
        self.port = port
    }

    deinit { close() }

    /// Connects to `host:port` (IPv4 or IPv6 literal).
    public static func connect(host: String = "127.0.0.1", port: Int, timeout: Double = 5) throws(HTTPTestClientError) -> HTTPTestClient {
        let isV6 = host.contains(":")
        #if canImport(Glibc)
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(isV6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .socket(errnoText()) }
        var seconds = timeval()
        seconds.tv_sec = .init(timeout)
        seconds.tv_usec = .init((timeout - Double(Int(timeout))) * 1_000_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let text = errnoText()
            _ = systemClose(fd)
            throw .connectFailed(text)
        }
        return HTTPTestClient(fd: fd, timeout: timeout, host: host, port: port)
    }

    /// True when a TCP connection to `host:port` is refused (the server is not listening).
    public static func isRefused(host: String = "127.0.0.1", port: Int) -> Bool {
        do {
            let client = try connect(host: host, port: port, timeout: 1)
            client.close()
            return false
        } catch {
            return true
        }
    }

    /// Sends one request and reads its response. Adds `Host`, and `Content-Length` when a
    /// body is given and neither `Content-Length` nor `Transfer-Encoding` is set.
    public func send(
        method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil
    ) throws(HTTPTestClientError) -> HTTPTestResponse {
        try write(Self.request(method: method, path: path, headers: headers, body: body))
        return try readResponse(answersHead: method == "HEAD")
    }

    /// Sends one request with a UTF-8 body and reads its response.
    public func send(
        method: String, path: String, headers: [(name: String, value: String)] = [], body: String
    ) throws(HTTPTestClientError) -> HTTPTestResponse {
        try send(method: method, path: path, headers: headers, body: Array(body.utf8))
    }

    /// The bytes of a request as ``send(method:path:headers:body:)`` writes them.
    public static func request(
        method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil
    ) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\n"
        let names = Set(headers.map { $0.name.lowercased() })
        if !names.contains("host") { text += "Host: localhost\r\n" }
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        if let body, !names.contains("content-length"), !names.contains("transfer-encoding") {
            text += "Content-Length: \(body.count)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + (body ?? [])
    }

    /// `chunks` in chunked transfer encoding, with the final zero-size chunk.
    public static func chunked(_ chunks: [[UInt8]]) -> [UInt8] {
        chunks.flatMap(chunk) + Array("0\r\n\r\n".utf8)
    }

    /// One chunk of a chunked body (nothing for no bytes: an empty chunk ends the body).
    public static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        bytes.isEmpty ? [] : Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10]
    }

    /// Writes raw bytes (garbage, partial requests, trickled bodies).
    public func sendRaw(_ bytes: [UInt8]) throws(HTTPTestClientError) {
        try write(bytes)
    }

    /// Writes raw bytes.
    public func write(_ bytes: [UInt8]) throws(HTTPTestClientError) {
        guard fd >= 0 else { throw .closedByPeer }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                systemSend(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                if errno == EPIPE || errno == ECONNRESET { throw .closedByPeer }
                throw .socket(Self.errnoText())
            }
            offset += written
        }
    }

    /// Reads one complete response (skipping `100 Continue`). With `acceptSwitchingProtocols`,
    /// a `101 Switching Protocols` head is returned as it is (no body: the connection now speaks
    /// another protocol; read it with ``read(exactly:)``). With `answersHead` (the request was
    /// `HEAD`) the response has no body, whatever its `Content-Length` says.
    public func readResponse(acceptSwitchingProtocols: Bool = false, answersHead: Bool = false) throws(HTTPTestClientError) -> HTTPTestResponse {
        let deadline = Self.now() + timeout
        while true {
            let headEnd = try readUntil([13, 10, 13, 10], deadline: deadline)
            let headBytes = Array(buffer[..<headEnd])
            buffer.removeFirst(headEnd + 4)
            var lines = headBytes.split(separator: 10, omittingEmptySubsequences: false).map { line in
                String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            let statusLine = lines.removeFirst()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw .malformed("status line '\(statusLine)'")
            }
            var headers: [(name: String, value: String)] = []
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line '\(line)'") }
                let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
                headers.append((String(line[..<colon]), String(value)))
            }
            var response = HTTPTestResponse(
                status: status, reason: parts.count > 2 ? String(parts[2]) : "",
                headers: headers, body: [], wasChunked: false)
            if status == 101 && acceptSwitchingProtocols { return response }
            if (100..<200).contains(status) { continue }
            if status == 204 || status == 304 || answersHead { return response }
            if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                response.wasChunked = true
                response.body = try readChunkedBody(deadline: deadline)
            } else if let lengthText = response.header("Content-Length") {
                guard let length = Int(lengthText) else { throw .malformed("Content-Length '\(lengthText)'") }
                try fill(count: length, deadline: deadline)
                response.body = Array(buffer[..<length])
                buffer.removeFirst(length)
            } else {
                while try readMore(deadline: deadline) {}
                response.body = buffer
                buffer.removeAll()
            }
            return response
        }
    }

    /// Exactly `count` bytes (buffered ones first), waiting at most `timeout` seconds (the
    /// client's timeout by default).
    public func read(exactly count: Int, timeout: Double? = nil) throws(HTTPTestClientError) -> [UInt8] {
        try fill(count: count, deadline: Self.now() + (timeout ?? self.timeout))
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// The bytes up to and including the first `marker` (buffered ones first), waiting at most
    /// `timeout` seconds (the client's timeout by default): for reading an answer piece by piece.
    public func read(through marker: [UInt8], timeout: Double? = nil) throws(HTTPTestClientError) -> [UInt8] {
        let end = try readUntil(marker, deadline: Self.now() + (timeout ?? self.timeout)) + marker.count
        let bytes = Array(buffer[..<end])
        buffer.removeFirst(end)
        return bytes
    }

    /// Half-closes: no more bytes from this side (the peer reads end of stream).
    public func shutdownWrite() {
        if fd >= 0 { _ = shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Waits until the server closes the connection (true) or `seconds` pass (false);
    /// any bytes received meanwhile are kept for the next read.
    public func waitForClose(seconds: Double) -> Bool {
        let deadline = Self.now() + seconds
        do {
            while try readMore(deadline: deadline) {}
            return true
        } catch HTTPTestClientError.closedByPeer {
            return true
        } catch {
            return false
        }
    }

    /// Closes the connection. Idempotent.
    public func close() {
        if fd >= 0 {
            _ = systemClose(fd)
            fd = -1
        }
    }

    private func readChunkedBody(deadline: Double) throws(HTTPTestClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil([13, 10], deadline: deadline)
            let line = String(decoding: buffer[..<lineEnd], as: UTF8.self)
            buffer.removeFirst(lineEnd + 2)
            let sizeText = line.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: " ") ?? ""
            guard let size = Int(sizeText, radix: 16) else { throw .malformed("chunk size '\(line)'") }
            if size == 0 {
                // Trailers, then the empty line.
                while true {
                    let end = try readUntil([13, 10], deadline: deadline)
                    buffer.removeFirst(end + 2)
                    if end == 0 { return body }
                }
            }
            try fill(count: size + 2, deadline: deadline)
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
        }
    }

    /// Index of `marker` in the buffer, reading until it appears.
    private func readUntil(_ marker: [UInt8], deadline: Double) throws(HTTPTestClientError) -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                var index = searchFrom
                while index + marker.count <= buffer.count {
                    if buffer[index] == marker[0] && Array(buffer[index..<(index + marker.count)]) == marker {
                        return index
                    }
                    index += 1
                }
                searchFrom = max(0, buffer.count - marker.count + 1)
            }
            guard try readMore(deadline: deadline) else { throw .closedByPeer }
        }
    }

    private func fill(count: Int, deadline: Double) throws(HTTPTestClientError) {
        while buffer.count < count {
            guard try readMore(deadline: deadline) else { throw .closedByPeer }
        }
    }

    /// Reads what is available into the buffer; false at end of stream.
    private func readMore(deadline: Double) throws(HTTPTestClientError) -> Bool {
        guard fd >= 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let remaining = deadline - Self.now()
            guard remaining > 0 else { throw .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 60) * 1000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .socket(Self.errnoText())
            }
            if ready == 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                if errno == ECONNRESET { throw .closedByPeer }
                throw .socket(Self.errnoText())
            }
            if count == 0 { return false }
            buffer += chunk[..<count]
            return true
        }
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    private static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}

#if canImport(Glibc)
private let systemConnect = Glibc.connect
private let systemSend = Glibc.send
private let systemClose = Glibc.close
#elseif canImport(Darwin)
private let systemConnect = Darwin.connect
private let systemSend = Darwin.send
private let systemClose = Darwin.close
#endif
