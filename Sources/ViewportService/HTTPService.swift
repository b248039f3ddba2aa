import Logging
import ServiceLifecycle

/// The HTTP server as a service: binds and serves when the group runs (logging `listening on`);
/// on graceful shutdown new requests get 503, in-flight ones finish (for up to
/// `http.drainTimeout`), then the port closes (``ViewportServer/stopHTTP()``).
struct HTTPService: Service {
    let server: ViewportServer

    func run() async throws {
        try StopSignals.blocked { try server.startHTTP() }
        // Returns on graceful shutdown, or throws when the group is cancelled: drain either way.
        try? await gracefulShutdown()
        server.beginDrainingHTTP()
        server.logger.info("stopping: finishing in-flight requests")
        await BlockingCall.onOwnThread("viewportd-http-drain") { [server] in server.stopHTTP() }
    }
}
