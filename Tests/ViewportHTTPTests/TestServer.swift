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

