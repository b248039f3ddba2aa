#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import Logging
import ViewportService

/// `viewportd [serve] [--config PATH] [--FLAG VALUE …]`: reads config/viewportd.json, then
/// environment variables, then flags (docs/operations/configuration.md), serves, and stops
/// gracefully on SIGTERM or SIGINT (exit 0). Exit 2: a configuration that cannot be used; exit 1:
/// the server cannot start.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the API (the default).",
        helpNames: [])

    @Flag(name: [.customShort("h"), .customLong("help")], help: "The settings table.")
    var help = false

    /// The settings' flags, as given. They come from the `Setting` table, not from declarations
    /// here; ``ServiceConfiguration/load(arguments:environment:)`` checks them (an unknown flag,
    /// a missing value, a flag given twice, a stray argument: exit 2, naming it).
    @Argument(parsing: .allUnrecognized)
    var settings: [String] = []

    func run() async throws {
        if help {
            print(ServiceConfiguration.usage)
            return
        }
        let configuration: ServiceConfiguration
        do {
            configuration = try await ServiceConfiguration.load(
                arguments: ["viewportd"] + settings, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("viewportd: configuration: \(error)\n".utf8))
            throw ExitCode(2)
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

        do {
            try await ViewportServer(configuration: configuration, logger: logger).run()
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        logger.info("stopped")
    }
}
