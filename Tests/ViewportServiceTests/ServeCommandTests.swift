import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// The `viewportd` binary as a command: `serve` (the default) and `replay` dispatched by name, the
/// exit codes, and the graceful stop on SIGTERM and SIGINT of a real process.
@Suite(.serialized) struct ServeCommandTests {
    /// Runs the binary with `arguments` until it exits (at most 30 s): exit status, stdout, stderr.
    static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        guard let binary = ViewportdProcess.binary else { throw ChildProcessError("no viewportd binary: run `swift build --product viewportd`") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        // Whatever is wrong with the arguments, nothing must start listening on 8080.
        process.environment = ["HTTP_HOST": "127.0.0.1", "HTTP_PORT": "0"]
        let (stdout, stderr) = (Pipe(), Pipe())
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let killer = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 30, execute: killer)
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test(arguments: [["--help"], ["-h"], ["serve", "--help"], ["--http-port", "1", "--help"]])
    func helpPrintsTheSettingsTable(arguments: [String]) throws {
        let help = try Self.run(arguments)
        #expect(help.status == 0)
        #expect(help.out == ServiceConfiguration.usage + "\n", "\(help.out)")
    }

    @Test func replayIsDispatchedByName() throws {
        let help = try Self.run(["replay", "--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: viewportd replay --layout <file> --trace <file>"), "\(help.out)")
        let missing = try Self.run(["replay"])
        #expect(missing.status == 64 && missing.err.contains("Missing expected argument '--layout <file>'"), "\(missing.err)")
        // Only the first argument names a subcommand: later, `replay` is a stray argument of serve.
        let late = try Self.run(["--log-level", "info", "replay"])
        #expect(late.status == 2 && late.err.contains(#"unexpected argument "replay""#), "\(late.err)")
    }

    @Test(arguments: [
        (["--port", "1"], "viewportd: configuration: unknown flag --port; did you mean --http-port?"),
        (["serve", "--http-port=abc"], #"viewportd: configuration: http.port (HTTP_PORT / --http-port): "abc" is not an integer, from --http-port"#),
        (["9000"], #"viewportd: configuration: unexpected argument "9000"; settings are flags such as --http-port 8080 (see --help)"#),
        (["-p", "1"], #"viewportd: configuration: unexpected argument "-p"; settings are flags such as --http-port 8080 (see --help)"#),
        (["serve", "--http-port"], "viewportd: configuration: --http-port needs a value"),
    ])
    func aConfigurationThatCannotBeUsedExits2NamingIt(arguments: [String], message: String) throws {
        let result = try Self.run(arguments)
        #expect(result.status == 2)
        #expect(result.err == message + "\n", "\(result.err)")
    }

    @Test func aPortInUseExits1() throws {
        let first = try ViewportdProcess(environment: [:])
        defer { first.process.stop() }
        let second = try ChildProcess(
            ViewportdProcess.binary ?? "viewportd", ["serve"],
            environment: ["HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(first.port)], directory: NSTemporaryDirectory())
        #expect(second.waitForExit(timeout: 15) == 1, "\(second.output)")
        #expect(second.output.contains("cannot start"), "\(second.output)")
        #expect(try first.connect().get("/healthz").status == 200)
    }

    /// The sweeper runs as one of the process's services: an idle session is gone.
    @Test func theProcessExpiresIdleSessions() throws {
        let instance = try ViewportdProcess(environment: ["SESSIONS_IDLE_TIMEOUT": "0.3"])
        defer { instance.process.stop() }
        let client = try instance.connect()
        let id = try client.openSession(#"{"layout":\#(layoutJSON(listItems(10))),"viewport":[1,1]}"#).id
        #expect(try eventually { metric("viewportd_sessions", in: try client.get("/metrics").text) == 0 })
        _ = try client.get("/v1/sessions/\(id)").problem(404)
        instance.process.signal(SIGTERM)
        #expect(instance.process.waitForExit(timeout: 15) == 0)
    }

    /// API.md "Running": SIGTERM and SIGINT stop it gracefully: in-flight requests finish, new
    /// ones get 503, the process exits 0.
    @Test(arguments: [SIGTERM, SIGINT])
    func aStopSignalLetsAnInFlightRequestFinishThenExits0(signal: Int32) throws {
        let instance = try ViewportdProcess(environment: ["HTTP_DRAIN_TIMEOUT": "20"])
        defer { instance.process.stop() }
        let body = Array(layoutJSON(listItems(50)).utf8)
        let inFlight = try instance.connect(timeout: 20)
        // A first request on the connection: the server has accepted it.
        #expect(try inFlight.get("/healthz").status == 200)
        // Half a body: once its head is read the request is in flight, which the server's
        // `100 Continue` shows (waited for, not assumed after a sleep).
        try inFlight.raw.write(
            Array("POST /v1/layouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                + body.prefix(body.count / 2))
        #expect(String(decoding: try inFlight.raw.read(through: Array("\r\n\r\n".utf8), timeout: 10), as: UTF8.self).hasPrefix("HTTP/1.1 100 "))
        instance.process.signal(signal)
        #expect(instance.process.waitForOutput("stopping", timeout: 10), "\(instance.process.output)")
        // New requests: 503 once the drain has begun (it begins as the line is logged).
        #expect(try eventually { try instance.connect().get("/healthz").status == 503 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(instance.process.waitForExit(timeout: 0) == nil, "exited before the in-flight request finished")
        try inFlight.raw.write(Array(body.dropFirst(body.count / 2)))
        let response = try inFlight.raw.readResponse()
        #expect(response.status == 201, "\(response.bodyString)")
        #expect(instance.process.waitForExit(timeout: 15) == 0, "\(instance.process.output)")
        let output = instance.process.output
        let stopping = try #require(output.range(of: "stopping: finishing in-flight requests"))
        let stopped = try #require(output.range(of: "stopped", range: stopping.upperBound..<output.endIndex))
        #expect(stopping.upperBound <= stopped.lowerBound)
    }
}
