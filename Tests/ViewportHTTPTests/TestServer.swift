import Foundation
import ViewportHTTP
import ViewportTestSupport

/// Starts a server on 127.0.0.1, port 0, runs `body`, stops it.
@discardableResult
func withTestServer<T>(
    handler: TestHandler = TestHandler(),
    configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    _ body: (HTTPServer) throws -> T
) throws -> T {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 5, drainTimeout: 3)
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, handler: handler)
    try server.start()
    defer { server.stop() }
    return try body(server)
}

/// Runs `body(i)` on `count` OS threads at once and waits for all (at most `timeout`).
/// Returns false on timeout.
@discardableResult
func onThreads(_ count: Int, timeout: Double = 20, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    return group.wait(timeout: .now() + timeout) == .success
}
