import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A process started by a test (redis-server, a viewportd binary): its output goes to a file,
/// it can be signalled (SIGTERM, SIGKILL, SIGSTOP, SIGCONT), and `deinit` kills it if the test
/// did not stop it, so nothing outlives the test.
public final class ChildProcess: @unchecked Sendable {
    public let executable: String
    public let arguments: [String]
    public let logFile: String
    public let pid: Int32
    private var exitStatus: Int32?

    /// Starts `executable` (a path, or a name looked up on PATH and in /usr/sbin, /usr/bin) with
    /// posix_spawn; stdout and stderr go to `logFile`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws {
        guard let path = ChildProcess.find(executable) else {
            throw ChildProcessError("\(executable) not found on PATH (install it: scripts/install-deps.sh)")
        }
        self.executable = path
        self.arguments = arguments
        logFile = NSTemporaryDirectory() + "viewportd-test-\((executable as NSString).lastPathComponent)-\(UUID().uuidString.prefix(8)).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        // A working directory through GNU env -C (posix_spawn_file_actions_addchdir_np is not
        // imported into Swift).
        let command = directory.map { ["/usr/bin/env", "-C", $0, path] } ?? [path]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        // The test runner may block or ignore signals; a child inherits that, and would never see
        // the SIGTERM a test sends it: start it with no blocked signals and default actions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let status = posix_spawn(&child, command[0], &actions, &attributes, argv, envp)
        guard status == 0 else { throw ChildProcessError("posix_spawn \(path): errno \(status)") }
        pid = child
    }

    deinit {
        if isRunning {
            kill(pid, SIGCONT)
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 10)
        }
        try? FileManager.default.removeItem(atPath: logFile)
    }

    /// Whether it has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            exitStatus = status
            return false
        }
        return result == 0
    }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits up to `timeout` seconds for the process to exit; its exit code (128 + signal when a
    /// signal ended it), or nil if it still runs.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(2_000) }
        guard let status = exitStatus else { return nil }
        let signalNumber = status & 0x7f
        return signalNumber == 0 ? (status >> 8) & 0xff : 128 + signalNumber
    }

    /// SIGTERM, then SIGKILL after `timeout` seconds.
    public func stop(timeout: Double = 10) {
        guard isRunning else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGTERM)
        if waitForExit(timeout: timeout) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 10)
        }
    }

    /// Everything it wrote so far.
    public var output: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// Waits until its output contains `text`; false after `timeout` seconds or if it exited.
    public func waitForOutput(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.contains(text) { return true }
            if !isRunning { return output.contains(text) }
            usleep(10_000)
        }
        return false
    }

    static func find(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin"] {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
