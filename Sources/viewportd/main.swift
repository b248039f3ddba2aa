// viewportd: view-recycling bookkeeping of scroll views, over HTTP.
//
// Reads config/viewportd.json, then environment variables, then flags (docs/api.md "Running and configuration"), starts
// the server, and stops it gracefully on SIGTERM or SIGINT (exit 0).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ViewportService

// `viewportd replay …`: an offline tool (Sources/viewportd/ReplayCommand.swift), not the server.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "replay" {
    ReplayCommand.start(Array(CommandLine.arguments.dropFirst(2)))
}

// The stop signals are caught by a handler that writes the signal's number to a pipe; the main
// code waits on the pipe. (Blocking them and calling `sigwait` does not work here: with an async
// top-level, the main thread runs the dispatch main queue with the signals unblocked, so SIGTERM
// took its default action and killed the process mid-request with status 143.)
var stopPipe: [Int32] = [-1, -1]
guard pipe(&stopPipe) == 0 else { fatalError("viewportd: pipe: errno \(errno)") }
nonisolated(unsafe) var stopPipeWriteEnd: Int32 = stopPipe[1]
for stopSignal in [SIGTERM, SIGINT] {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { signal in
        // Only async-signal-safe calls here.
        var byte = UInt8(truncatingIfNeeded: signal)
        _ = write(stopPipeWriteEnd, &byte, 1)
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    sigaction(stopSignal, &action, nil)
}

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
for warning in configuration.warnings {
    logger.warning("configuration: \(warning)")
}

let server = ViewportServer(configuration: configuration, logger: logger)
// libmicrohttpd's threads (and the sweeper) inherit the mask of the thread that starts them:
// block the stop signals while they start, so a signal never interrupts a worker mid-request;
// then unblock them here, where the handler above takes them.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
do {
    try server.start()
} catch {
    logger.critical("cannot start: \(error)")
    exit(1)
}
pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)

var received: UInt8 = 0
while read(stopPipe[0], &received, 1) != 1 {}
logger.info("received signal \(received), stopping: finishing in-flight requests")
server.stop()
logger.info("stopped")
exit(0)
