import Foundation
import Testing
import ViewportTestSupport

/// A real viewportd process (the binary `swift build` made, next to the test bundle, or
/// `VIEWPORTD_BINARY`), on a free loopback port, for what only a process can show: SIGTERM and
/// kill -9.
final class ViewportdProcess: @unchecked Sendable {
    let port: Int
    let process: ChildProcess

    static var binary: String? {
        if let given = ProcessInfo.processInfo.environment["VIEWPORTD_BINARY"] { return given }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // …/debug/viewportdPackageTests.xctest (a file on Linux, a bundle directory elsewhere).
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("viewportd").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    init(environment: [String: String]) throws {
        guard let binary = Self.binary else {
            throw ChildProcessError("no viewportd binary next to the tests: run `swift build` (or set VIEWPORTD_BINARY)")
        }
        port = ChildProcess.freePort()
        var env = ["HTTP_HOST": "127.0.0.1", "HTTP_PORT": String(port), "HTTP_THREADS": "4", "LOG_LEVEL": "info"]
        for (key, value) in environment { env[key] = value }
        process = try ChildProcess(binary, [], environment: env, directory: NSTemporaryDirectory())
        guard process.waitForOutput("listening on http://", timeout: 30) else {
            throw ChildProcessError("viewportd did not start: \(process.output)")
        }
    }

    func connect(timeout: Double = 5) throws -> Client {
        Client(try HTTPTestClient.connect(port: port, timeout: timeout), token: nil)
    }
}

extension ClientModel {
    /// The views this client really holds, as a `POST /v1/sessions/{id}/resync` body.
    var resyncBody: String {
        let visible = shown.map { #"{"id":"\#($0.key)","view":\#($0.value)}"# }.joined(separator: ",")
        let pool = pools.filter { !$0.value.isEmpty }.map { reuse, views in
            #""\#(reuse)":[\#(views.map { #"{"view":\#($0.view),"id":"\#($0.lastItem)"}"# }.joined(separator: ","))]"#
        }.joined(separator: ",")
        return #"{"seq":\#(seq),"offset":[\#(offset.map(number).joined(separator: ","))],"visible":[\#(visible)],"pool":{\#(pool)}}"#
    }
}
