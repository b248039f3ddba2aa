// viewportd: view-recycling bookkeeping of scroll views, over HTTP.
//
// Reads config/viewportd.json, then environment variables, then flags (API.md "Running"), starts
// the server, and stops it gracefully on SIGTERM or SIGINT (exit 0).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ViewportService

// Block the stop signals before any thread starts, so every thread inherits the mask and the
// signals wait for `sigwait` below instead of killing the process mid-request.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
    print(ServiceConfiguration.usage)
    exit(0)
}

let configuration: ServiceConfiguration
do {
    configuration = try await ServiceConfiguration.load(
        arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("viewportd: configuration: \(error)\n".utf8))
    exit(2)
}

let level = configuration.logLevel
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardOutput(label: label)
    handler.logLevel = level
    return handler
}
let logger = Logger(label: "viewportd")
logger.debug("configuration: \(configuration)")

let server = ViewportServer(configuration: configuration, logger: logger)
do {
    try server.start()
} catch {
    logger.critical("cannot start: \(error)")
    exit(1)
}

var received: Int32 = 0
sigwait(&stopSignals, &received)
logger.info("received signal \(received), stopping: finishing in-flight requests")
server.stop()
logger.info("stopped")
exit(0)
