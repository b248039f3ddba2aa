import Foundation
import Logging
import Testing

@testable import ViewportService

/// A temporary config file, removed at the end of the test.
private final class TemporaryFile {
    let path: String

    init(_ contents: String) throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("viewportd-\(UUID().uuidString).json").path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

private let missingDefault = "/nonexistent/viewportd.json"

private func load(
    _ arguments: [String] = [], environment: [String: String] = [:], defaultFile: String = missingDefault
) async throws -> ServiceConfiguration {
    try await ServiceConfiguration.load(
        arguments: ["viewportd"] + arguments, environment: environment, defaultConfigFile: defaultFile)
}

private func loadError(
    _ arguments: [String] = [], environment: [String: String] = [:]
) async -> ConfigurationError? {
    do {
        _ = try await load(arguments, environment: environment)
        return nil
    } catch let error as ConfigurationError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

@Suite struct ServiceConfigurationTests {
    @Test func defaultsApplyWithoutAFile() async throws {
        let configuration = try await load()
        #expect(configuration == ServiceConfiguration())
        #expect(configuration.http.host == "0.0.0.0")
        #expect(configuration.http.port == 8080)
        #expect(configuration.http.threads == 2)
        #expect(configuration.http.maxBodyBytes == 134_217_728)
        #expect(configuration.http.connectionTimeout == .seconds(30))
        #expect(configuration.http.connectionLimit == 1024)
        #expect(configuration.http.connectionMemoryLimit == 16384)
        #expect(configuration.http.drainTimeout == .seconds(10))
        #expect(configuration.sessions.max == 10_000)
        #expect(configuration.sessions.idleTimeout == .seconds(600))
        #expect(configuration.layouts.max == 1000)
        #expect(configuration.layouts.maxItems == 2_000_000)
        #expect(configuration.authToken == nil)
        #expect(configuration.logLevel.rawValue == "info")
        #expect(configuration.configFile == nil)
    }

    @Test func shippedConfigFileHoldsTheDefaults() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/viewportd.json").path
        var configuration = try await load(["--config", path])
        #expect(configuration.configFile == path)
        configuration.configFile = nil
        #expect(configuration == ServiceConfiguration())
    }

    @Test func fileOverridesDefaults() async throws {
        let file = try TemporaryFile(
            #"{"http": {"port": 9000, "connectionTimeout": 2.5}, "auth": {"token": "s3cret"}, "log": {"level": "debug"}}"#)
        let configuration = try await load(["--config", file.path])
        #expect(configuration.http.port == 9000)
        #expect(configuration.http.connectionTimeout == .milliseconds(2500))
        #expect(configuration.http.threads == 2)
        #expect(configuration.authToken == "s3cret")
        #expect(configuration.logLevel.rawValue == "debug")
        #expect(!configuration.description.contains("s3cret"))
    }

    @Test func defaultFileIsReadWhenPresent() async throws {
        let file = try TemporaryFile(#"{"sessions": {"max": 5}}"#)
        let configuration = try await load(defaultFile: file.path)
        #expect(configuration.sessions.max == 5)
        #expect(configuration.configFile == file.path)
    }

    @Test func environmentOverridesFile() async throws {
        let file = try TemporaryFile(#"{"http": {"port": 9000, "maxBodyBytes": 1000}}"#)
        let configuration = try await load(
            environment: ["VIEWPORTD_CONFIG": file.path, "HTTP_PORT": "9001", "LAYOUTS_MAX_ITEMS": "10"])
        #expect(configuration.http.port == 9001)
        #expect(configuration.http.maxBodyBytes == 1000)
        #expect(configuration.layouts.maxItems == 10)
    }

    @Test func flagsOverrideEnvironment() async throws {
        let file = try TemporaryFile(#"{"http": {"port": 9000, "host": "127.0.0.1"}}"#)
        let configuration = try await load(
            ["--config=\(file.path)", "--http-port", "9002", "--http-max-body-bytes=2048", "--log-level", "warning"],
            environment: ["HTTP_PORT": "9001", "HTTP_MAX_BODY_BYTES": "1024", "SESSIONS_IDLE_TIMEOUT": "1.5"])
        #expect(configuration.http.port == 9002)
        #expect(configuration.http.maxBodyBytes == 2048)
        #expect(configuration.http.host == "127.0.0.1")
        #expect(configuration.sessions.idleTimeout == .milliseconds(1500))
        #expect(configuration.logLevel.rawValue == "warning")
    }

    @Test func everyKeyHasItsEnvironmentVariableAndFlag() async throws {
        let environment = [
            "HTTP_HOST": "::1", "HTTP_PORT": "1", "HTTP_THREADS": "3", "HTTP_MAX_BODY_BYTES": "4",
            "HTTP_CONNECTION_TIMEOUT": "5", "HTTP_CONNECTION_LIMIT": "6", "HTTP_CONNECTION_MEMORY_LIMIT": "4097",
            "HTTP_DRAIN_TIMEOUT": "8", "HTTP_MAX_BUFFERED_BODY_BYTES": "13", "SESSIONS_MAX": "9", "SESSIONS_IDLE_TIMEOUT": "10", "LAYOUTS_MAX": "11",
            "LAYOUTS_MAX_ITEMS": "12", "AUTH_TOKEN": "t", "LOG_LEVEL": "trace",
        ]
        let fromEnvironment = try await load(environment: environment)
        let flags = environment.flatMap { name, value in
            ["--" + name.lowercased().replacingOccurrences(of: "_", with: "-"), value]
        }
        let fromFlags = try await load(flags)
        for configuration in [fromEnvironment, fromFlags] {
            #expect(configuration.http.host == "::1")
            #expect(configuration.http.port == 1)
            #expect(configuration.http.threads == 3)
            #expect(configuration.http.maxBodyBytes == 4)
            #expect(configuration.http.connectionTimeout == .seconds(5))
            #expect(configuration.http.connectionLimit == 6)
            #expect(configuration.http.connectionMemoryLimit == 4097)
            #expect(configuration.http.drainTimeout == .seconds(8))
            #expect(configuration.http.maxBufferedBodyBytes == 13)
            #expect(configuration.sessions.max == 9)
            #expect(configuration.sessions.idleTimeout == .seconds(10))
            #expect(configuration.layouts.max == 11)
            #expect(configuration.layouts.maxItems == 12)
            #expect(configuration.authToken == "t")
            #expect(configuration.logLevel.rawValue == "trace")
        }
    }

    @Test func rejectsAPortOutOfRangeNamingTheKey() async {
        let error = await loadError(environment: ["HTTP_PORT": "70000"])
        #expect(error?.key == "http.port")
        #expect(error?.message == "http.port (HTTP_PORT / --http-port): 70000 is not a port (0…65535), from HTTP_PORT")
    }

    @Test(arguments: [
        (["--http-threads", "0"], "http.threads (HTTP_THREADS / --http-threads)"),
        (["--http-max-body-bytes=-1"], "http.maxBodyBytes (HTTP_MAX_BODY_BYTES / --http-max-body-bytes)"),
        (["--http-connection-timeout", "0"], "http.connectionTimeout"),
        (["--sessions-idle-timeout", "nan"], "sessions.idleTimeout"),
        (["--http-drain-timeout=-3"], "http.drainTimeout"),
        (["--sessions-max", "0"], "sessions.max"),
        (["--layouts-max", "0"], "layouts.max"),
        (["--layouts-max-items", "0"], "layouts.maxItems"),
        (["--http-connection-limit", "0"], "http.connectionLimit"),
        (["--http-connection-memory-limit", "0"], "http.connectionMemoryLimit"),
        (["--log-level", "verbose"], "log.level (LOG_LEVEL / --log-level)"),
        (["--http-port", "abc"], "http.port (HTTP_PORT / --http-port): \"abc\" is not an integer, from --http-port"),
        (["--http-host="], "http.host"),
        (["--http-max-buffered-body-bytes", "1000"], "http.maxBufferedBodyBytes (HTTP_MAX_BUFFERED_BODY_BYTES / --http-max-buffered-body-bytes): 1000 is less than http.maxBodyBytes"),
        (["--http-threads", "1025"], "http.threads (HTTP_THREADS / --http-threads): 1025 must be from 1 to 1024, from --http-threads"),
        (["--http-connection-memory-limit", "4095"], "http.connectionMemoryLimit (HTTP_CONNECTION_MEMORY_LIMIT / --http-connection-memory-limit): 4095 must be at least 4096, from --http-connection-memory-limit"),
        (["--layouts-max-total-items", "10"], "layouts.maxTotalItems (LAYOUTS_MAX_TOTAL_ITEMS / --layouts-max-total-items): 10 is less than layouts.maxItems (2000000)"),
        // A default is checked against what was given: here the default 20,000,000 total.
        (["--layouts-max-items", "30000000"], "layouts.maxTotalItems (LAYOUTS_MAX_TOTAL_ITEMS / --layouts-max-total-items): 20000000 is less than layouts.maxItems (30000000): a layout of the largest allowed size could never be stored (its default: set it as well)"),
        (["--http-max-body-bytes", "2000000000"], "http.maxBufferedBodyBytes (HTTP_MAX_BUFFERED_BODY_BYTES / --http-max-buffered-body-bytes): 1073741824 is less than http.maxBodyBytes (2000000000)"),
        (["--sessions-max", "5", "--sessions-max", "6"], "--sessions-max is given more than once"),
        (["--auth-token", "a", "--auth-token=b"], "--auth-token is given more than once"),
        (["--config", "a.json", "--config=b.json"], "--config is given more than once"),
    ])
    func rejectsBadValuesNamingTheKey(arguments: [String], expected: String) async {
        let error = await loadError(arguments)
        #expect(error?.message.hasPrefix(expected) == true, "\(String(describing: error))")
    }

    @Test func rejectsMalformedEnvironmentValues() async {
        let error = await loadError(environment: ["SESSIONS_MAX": "lots"])
        #expect(error?.message == "sessions.max (SESSIONS_MAX / --sessions-max): \"lots\" is not an integer, from SESSIONS_MAX")
    }

    @Test func doesNotShowABadTokenValue() async {
        let error = await loadError(["--auth-token", "a", "b"])
        #expect(error?.key == "auth.token")
        #expect(error?.message.contains("\"a\"") == false)
    }

    @Test func rejectsAMissingExplicitFile() async {
        let error = await loadError(["--config", "/nonexistent/viewportd.json"])
        #expect(error?.message == "config file /nonexistent/viewportd.json does not exist")
        let fromEnvironment = await loadError(environment: ["VIEWPORTD_CONFIG": "/nonexistent/x.json"])
        #expect(fromEnvironment != nil)
    }

    @Test(arguments: [
        (#"{"http": {"prot": 1}}"#, #"http: unknown field "prot""#),
        (#"{"htp": {}}"#, #"unknown field "htp""#),
        (#"{"http": {"port": "8080"}}"#, "http.port: expected a number, got a string"),
        (#"{"http": {"port": 80.5}}"#, "http.port: expected an integer, got 80.5"),
        (#"{"http": {"port": 1,}}"#, "trailing comma"),
        (#"{"log": {"level": 3}}"#, "log.level: expected a string, got a number"),
        ("", "unexpected end of input"),
    ])
    func rejectsAnInvalidFile(contents: String, expected: String) async throws {
        let file = try TemporaryFile(contents)
        let error = await loadError(["--config", file.path])
        #expect(error?.message.hasPrefix("invalid config file \(file.path): ") == true)
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }

    @Test func rejectsAnOutOfRangeValueFromTheFileNamingTheFile() async throws {
        let file = try TemporaryFile(#"{"http": {"port": -1}}"#)
        let error = await loadError(["--config", file.path])
        #expect(error?.message == "http.port (HTTP_PORT / --http-port): -1 is not a port (0…65535), from \(file.path)")
    }

    @Test func treatsNullAndEmptyTokenAsNone() async throws {
        let file = try TemporaryFile(#"{"auth": {"token": null}, "http": {"port": null}}"#)
        let configuration = try await load(["--config", file.path], environment: ["AUTH_TOKEN": ""])
        #expect(configuration.authToken == nil)
        #expect(configuration.http.port == 8080)
        // An empty token given is accepted (auth off) but not silently: main logs it as a warning.
        #expect(configuration.warnings == ["auth.token (AUTH_TOKEN / --auth-token) is empty: bearer auth is off, every path answers without a token"])
        #expect(try await load(["--config", file.path]).warnings.isEmpty)
        #expect(try await load().warnings.isEmpty)
        #expect(try await load(["--auth-token", "t"]).warnings.isEmpty)
    }
}
