import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real redis-server for a test, on a free loopback port, without persistence; stopped by
/// `stop()` or when released. It can be paused (SIGSTOP) and resumed, killed and restarted on
/// the same port.
public final class RedisTestServer: @unchecked Sendable {
    public private(set) var port: Int
    private var process: ChildProcess?
    private let extraArguments: [String]

    /// Starts one; `arguments` are added to redis-server's command line (`--requirepass x`).
    public init(arguments: [String] = []) throws {
        port = 0
        extraArguments = arguments
        try start()
    }

    private var commandLine: [String] {
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
         "--protected-mode", "no", "--loglevel", "warning"] + extraArguments
    }

    deinit { stop() }

    public var url: String { "redis://127.0.0.1:\(port)" }
    public var pid: Int32? { process?.pid }

    /// Starts redis-server on a free port and waits until it answers PING.
    private func start() throws {
        var lastError = ""
        for _ in 0..<5 {
            port = ChildProcess.freePort()
            let child = try ChildProcess("redis-server", commandLine)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if Self.ping(port: port) {
                    process = child
                    return
                }
                if !child.isRunning { break }
                usleep(10_000)
            }
            lastError = child.output
            child.stop()
        }
        throw ChildProcessError("redis-server did not start: \(lastError)")
    }

    /// SIGTERM and wait; the port stays reserved for `start()`.
    public func stop() {
        process?.stop()
        process = nil
    }

    /// Restarts on the same port (an empty database).
    public func restart() throws {
        let keep = port
        stop()
        port = keep
        var lastError: (any Error)?
        for _ in 0..<20 {
            do {
                let child = try ChildProcess("redis-server", commandLine)
                let deadline = Date().addingTimeInterval(5)
                while Date() < deadline && child.isRunning && !Self.ping(port: port) { usleep(10_000) }
                if Self.ping(port: port) {
                    process = child
                    return
                }
                child.stop()
            } catch {
                lastError = error
            }
            usleep(100_000)
        }
        throw lastError ?? ChildProcessError("redis-server did not restart on port \(port)")
    }

    public func pause() { process?.signal(SIGSTOP) }
    public func resume() { process?.signal(SIGCONT) }

    /// Runs redis-cli against it and answers its output (for checks from outside the client
    /// under test).
    public func cli(_ arguments: [String]) throws -> String {
        let child = try ChildProcess("redis-cli", ["-p", String(port), "--raw"] + arguments)
        guard child.waitForExit(timeout: 10) != nil else { throw ChildProcessError("redis-cli \(arguments) hung") }
        return child.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether something on 127.0.0.1:port answers PING (+PONG, or -NOAUTH) within a second.
    static func ping(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let ping = Array("PING\r\n".utf8)
        guard write(fd, ping, ping.count) == ping.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = read(fd, &buffer, buffer.count)
        // A server with a password answers -NOAUTH: it is up too.
        let answer = String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
        return answer.hasPrefix("+PONG") || answer.hasPrefix("-NOAUTH")
    }
}
