import Foundation
import Logging
import Testing
import ViewportTestSupport

@testable import ViewportService

/// Every setting of the table, through each of its three sources, and the table's other uses
/// (`--help`, docs/operations/configuration.md) — so that a key read in the wrong place, or documented but not read,
/// fails a test.
@Suite struct SettingsTableTests {
    /// A valid value for each key that differs from its default, as the environment and a flag
    /// spell it, and as it shows once loaded.
    static func sample(for setting: Setting) -> (text: String, json: String, shown: String) {
        switch setting.type {
        case .int:
            // One more than the default is valid for every integer key (the port is below 65535,
            // the buffered-body budget stays above the body limit).
            let value = (Int(setting.show(ServiceConfiguration())) ?? 0) + 1
            return (String(value), String(value), String(value))
        case .seconds:
            // Half the default is valid for every duration, alone (the store's durations are
            // checked against each other).
            let seconds = (Double(setting.show(ServiceConfiguration())) ?? 2) / 2
            let text = String(seconds)
            return (text, text, ServiceConfiguration.secondsText(.seconds(seconds)))
        case .string:
            switch setting.name {
            case "store.url": return ("redis://127.0.0.1:6390/2", #""redis://127.0.0.1:6390/2""#, "redis://127.0.0.1:6390/2")
            case "log.level": return ("debug", #""debug""#, "debug")
            case "auth.token": return ("t0ken", #""t0ken""#, "<redacted>")
            default: return ("127.0.0.2", #""127.0.0.2""#, "127.0.0.2")
            }
        }
    }

    static func load(_ arguments: [String] = [], environment: [String: String] = [:]) async throws -> ServiceConfiguration {
        try await ServiceConfiguration.load(
            arguments: ["viewportd"] + arguments, environment: environment, defaultConfigFile: "/nonexistent/viewportd.json")
    }

    /// Checks that exactly `setting` differs from the defaults, showing `shown`.
    static func expectOnly(_ setting: Setting, shows shown: String, in configuration: ServiceConfiguration, from source: String) {
        let defaults = ServiceConfiguration()
        for other in Setting.all {
            let expected = other.name == setting.name ? shown : other.show(defaults)
            #expect(other.show(configuration) == expected, "\(other.name) after setting \(setting.name) from \(source)")
        }
    }

    @Test(arguments: Setting.all.map(\.name))
    func everyKeyIsReadFromTheFileTheEnvironmentAndAFlag(name: String) async throws {
        let setting = try #require(Setting.all.first { $0.name == name })
        let (text, json, shown) = Self.sample(for: setting)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("viewportd-\(UUID().uuidString).json").path
        try Data(#"{"\#(setting.components[0])": {"\#(setting.components[1])": \#(json)}}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var fromFile = try await Self.load(["--config", path])
        fromFile.configFile = nil
        Self.expectOnly(setting, shows: shown, in: fromFile, from: "the file")

        Self.expectOnly(setting, shows: shown, in: try await Self.load(environment: [setting.environmentName: text]), from: "the environment")
        Self.expectOnly(setting, shows: shown, in: try await Self.load([setting.flag, text]), from: "a flag")
        Self.expectOnly(setting, shows: shown, in: try await Self.load(["\(setting.flag)=\(text)"]), from: "a flag with =")
    }

    /// The reported bug: `SESSIONS_MAX_VIEWS=3` was ignored, and a session materializing 69
    /// items opened with 201.
    @Test func sessionsMaxViewsFromTheEnvironmentLimitsSessions() async throws {
        var configuration = try await Self.load(environment: ["SESSIONS_MAX_VIEWS": "3", "HTTP_HOST": "127.0.0.1", "HTTP_PORT": "0"])
        configuration.http.connectionTimeout = .seconds(5)
        let server = ViewportServer(configuration: configuration, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try server.start()
        defer { server.stop() }
        let client = Client(try HTTPTestClient.connect(port: server.port), token: nil)
        let items = (0..<69).map { #"{"id":"i\#($0)","rect":[0,\#($0 * 10),375,10]}"# }.joined(separator: ",")
        let reply = try client.post("/v1/sessions", #"{"layout":{"items":[\#(items)]},"viewport":[375,1000]}"#)
        let problem = reply.problem(422)
        #expect((problem["detail"] as? String)?.contains("sessions.maxViews") == true, "\(problem)")
    }

    @Test(arguments: [
        (["--port", "9000"], "unknown flag --port; did you mean --http-port?"),
        (["--sesions-max", "3"], "unknown flag --sesions-max; did you mean --sessions-max?"),
        (["9000"], #"unexpected argument "9000"; settings are flags such as --http-port 8080 (see --help)"#),
        (["--http-port"], "--http-port needs a value"),
        (["--http-port", "--log-level", "debug"], "--http-port needs a value"),
        (["--frobnicate=1"], "unknown flag --frobnicate (see --help)"),
        (["-p", "1"], #"unexpected argument "-p"; settings are flags such as --http-port 8080 (see --help)"#),
    ])
    func unknownFlagsAndStrayArgumentsAreRefusedByName(arguments: [String], message: String) async {
        do {
            _ = try await Self.load(arguments)
            Issue.record("\(arguments) were accepted")
        } catch let error as ConfigurationError {
            #expect(error.message == message)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func helpListsEverySettingInAlignedColumns() throws {
        let lines = ServiceConfiguration.usage.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("  key ") })
        let rows = Array(lines[header...])
        #expect(rows.count == Setting.all.count + 1)
        // Each column starts where the header's does, on every row.
        let starts = ["environment", "flag", "default"].compactMap { rows[0].range(of: $0)?.lowerBound.utf16Offset(in: rows[0]) }
        #expect(starts.count == 3)
        for (row, setting) in zip(rows.dropFirst(), Setting.all) {
            let cells = [setting.environmentName, setting.flag, setting.defaultText]
            for (start, cell) in zip(starts, cells) {
                let utf16 = Array(row.utf16)
                #expect(utf16.count >= start + cell.utf16.count && String(decoding: utf16[start..<(start + cell.utf16.count)], as: UTF16.self) == cell,
                    "\(cell) of \(setting.name) is not at column \(start): \(row)")
            }
        }
    }

    @Test func configurationPageTableIsTheSettingsTable() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/operations/configuration.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- settings table: generated from Setting.all -->\n"))
        let end = try #require(text.range(of: "\n<!-- end of settings table -->", range: begin.upperBound..<text.endIndex))
        let table = String(text[begin.upperBound..<end.lowerBound])
        #expect(table == ServiceConfiguration.markdownSettingsTable, "docs/operations/configuration.md's settings table should read:\n\(ServiceConfiguration.markdownSettingsTable)")
    }

    @Test func startupLineNamesEverySettingAndHidesSecrets() async throws {
        let configuration = try await Self.load(environment: ["AUTH_TOKEN": "s3cret"])
        for setting in Setting.all { #expect(configuration.description.contains("\(setting.name)=")) }
        #expect(!configuration.description.contains("s3cret"))
        #expect(configuration.description.contains("auth.token=<redacted>"))
    }
}
