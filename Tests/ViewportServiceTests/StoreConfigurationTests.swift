import Foundation
import Testing

@testable import ViewportService

/// The `store.*` settings: defaults, validation naming the key, and the URL kept secret.
@Suite struct StoreConfigurationTests {
    static func load(_ arguments: [String] = [], environment: [String: String] = [:]) async throws -> ServiceConfiguration {
        try await ServiceConfiguration.load(arguments: ["viewportd"] + arguments, environment: environment, defaultConfigFile: "/nonexistent.json")
    }

    static func error(_ arguments: [String], environment: [String: String] = [:]) async -> ConfigurationError? {
        do {
            _ = try await load(arguments, environment: environment)
            return nil
        } catch {
            return error as? ConfigurationError
        }
    }

    @Test func withoutAStoreURLEverythingStaysInTheProcess() async throws {
        let configuration = try await Self.load()
        #expect(configuration.store.url == nil)
        #expect(configuration.store.flushInterval == .milliseconds(100))
        #expect(configuration.store.leaseTimeout == .seconds(2))
        #expect(configuration.store.timeout == .milliseconds(500))
        #expect(configuration.store.keyPrefix == "viewportd:")
    }

    @Test func storeSettingsComeFromFlagsAndEnvironment() async throws {
        let configuration = try await Self.load(
            ["--store-url", "redis://:pw@cache:6380/2", "--store-flush-interval", "0.05"], environment: ["STORE_LEASE_TIMEOUT": "3"])
        #expect(configuration.store.url == "redis://:pw@cache:6380/2")
        #expect(configuration.store.flushInterval == .milliseconds(50))
        #expect(configuration.store.leaseTimeout == .seconds(3))
        #expect(!configuration.description.contains("pw"), "\(configuration.description)")
        #expect(configuration.description.contains("store.url=redis://<redacted>@cache:6380/2"))
    }

    @Test func badStoreSettingsNameTheKeyAndSayWhy() async throws {
        let url = await Self.error(["--store-url", "http://cache:6379"])
        #expect(url?.key == "store.url")
        #expect(url?.message.contains("redis://") == true, "\(url?.message ?? "")")
        let port = await Self.error([], environment: ["STORE_URL": "redis://cache:99999"])
        #expect(port?.message.contains("STORE_URL") == true && port?.message.contains("port") == true)
        let secret = await Self.error(["--store-url", "rediss://:hunter2@cache:6379"])
        #expect(secret?.message.contains("hunter2") == false, "\(secret?.message ?? "")")
        let flush = await Self.error(["--store-flush-interval", "1"])
        #expect(flush?.key == "store.flushInterval" && flush?.message.contains("quarter") == true)
        let timeout = await Self.error(["--store-timeout", "1.5"])
        #expect(timeout?.key == "store.timeout")
        let zero = await Self.error(["--store-lease-timeout", "0"])
        #expect(zero?.key == "store.leaseTimeout")
        let park = await Self.error(["--store-park-after", "1"])
        #expect(park?.key == "store.parkAfter" && park?.message.contains("at least store.leaseTimeout") == true, "\(park?.message ?? "")")
        let prefix = await Self.error(["--store-key-prefix", "a b"])
        #expect(prefix?.key == "store.keyPrefix")
    }

    @Test func theRepositorysConfigFileHasTheStoreSection() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("config/viewportd.json").path
        let configuration = try await ServiceConfiguration.load(arguments: ["viewportd", "--config", path], environment: [:])
        #expect(configuration.store == ServiceConfiguration.Store())
        #expect(ServiceConfiguration.usage.contains("store.url") && ServiceConfiguration.usage.contains("STORE_FLUSH_INTERVAL"))
    }
}
