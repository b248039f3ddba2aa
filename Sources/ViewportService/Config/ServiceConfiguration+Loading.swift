import Configuration
import Logging
import SystemPackage
import ViewportRedis

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ServiceConfiguration {
    /// The config file read when neither `--config` nor `VIEWPORTD_CONFIG` names one, relative to
    /// the working directory; it may be missing (then the defaults apply).
    public static let defaultConfigFile = "config/viewportd.json"

    /// Loads the configuration: defaults, then the JSON config file, then environment variables,
    /// then command-line flags, each overriding the one before.
    ///
    /// - `arguments` are as in `CommandLine.arguments` (program name first). Flags take
    ///   `--key value` or `--key=value`; other arguments are ignored (`--help` is the caller's).
    /// - The file is `--config PATH`, else `VIEWPORTD_CONFIG`, else ``defaultConfigFile``. A
    ///   missing default file is fine; a missing named file, unreadable or invalid JSON, an
    ///   unknown key (a typo must not be silently ignored) or a value of the wrong type is an
    ///   error.
    /// - Every value is validated; errors name the key with its environment variable and flag,
    ///   and where the bad value came from: `http.port (HTTP_PORT / --http-port): 70000 is not a
    ///   port (0…65535), from HTTP_PORT`.
    ///
    /// Values are resolved through swift-configuration's providers (`CommandLineArgumentsProvider`,
    /// `EnvironmentVariablesProvider`, `FileProvider<JSONSnapshot>`) in that order, the first that
    /// has a key winning, like `ConfigReader`; the lookup is done here directly so that a
    /// malformed value is reported (a `ConfigReader` getter with a default falls back silently)
    /// together with its source.
    public static func load(arguments: [String], environment: [String: String]) async throws
        -> ServiceConfiguration
    {
        try await load(arguments: arguments, environment: environment, defaultConfigFile: defaultConfigFile)
    }

    /// ``load(arguments:environment:)`` with another default file (for tests).
    static func load(arguments: [String], environment: [String: String], defaultConfigFile: String)
        async throws -> ServiceConfiguration
    {
        let flags = CommandLineArgumentsProvider(
            arguments: arguments, secretsSpecifier: .specific([Setting.authToken.flag, Setting.storeURL.flag]))
        let environmentVariables = EnvironmentVariablesProvider(
            environmentVariables: environment,
            secretsSpecifier: .specific([Setting.authToken.environmentName, Setting.storeURL.environmentName]))
        var sources: [Source] = [
            Source(provider: flags, name: { $0.flag }),
            Source(provider: environmentVariables, name: { $0.environmentName }),
        ]

        var configuration = ServiceConfiguration()
        let explicitPath = try configFilePath(flags: flags, environment: environment)
        let path = explicitPath ?? defaultConfigFile
        if let contents = try readConfigFile(path, required: explicitPath != nil) {
            try validateConfigFile(contents, path: path)
            let file: FileProvider<JSONSnapshot>
            do {
                file = try await FileProvider<JSONSnapshot>(filePath: FilePath(path))
            } catch {
                throw ConfigurationError("invalid config file \(path): \(error)")
            }
            sources.append(Source(provider: file, name: { _ in path }))
            configuration.configFile = path
        }

        let resolver = Resolver(sources: sources)
        var http = HTTP()
        http.host = try resolver.string(.httpHost, default: http.host) { host in
            host.isEmpty ? "must not be empty" : nil
        }
        http.port = try resolver.int(.httpPort, default: http.port) { port in
            (0...65535).contains(port) ? nil : "\(port) is not a port (0…65535)"
        }
        http.threads = try resolver.int(.httpThreads, default: http.threads, check: atLeastOne)
        http.maxBodyBytes = try resolver.int(.httpMaxBodyBytes, default: http.maxBodyBytes, check: positive)
        http.connectionTimeout = try resolver.seconds(.httpConnectionTimeout, default: http.connectionTimeout)
        http.connectionLimit = try resolver.int(.httpConnectionLimit, default: http.connectionLimit, check: positive)
        http.connectionMemoryLimit = try resolver.int(
            .httpConnectionMemoryLimit, default: http.connectionMemoryLimit, check: positive)
        http.drainTimeout = try resolver.seconds(.httpDrainTimeout, default: http.drainTimeout)
        let maxBody = http.maxBodyBytes
        http.maxBufferedBodyBytes = try resolver.int(.httpMaxBufferedBodyBytes, default: http.maxBufferedBodyBytes) { value in
            value >= maxBody ? nil : "\(value) is less than http.maxBodyBytes (\(maxBody)): a body of the largest allowed size could never be read"
        }
        configuration.http = http

        var sessions = Sessions()
        sessions.max = try resolver.int(.sessionsMax, default: sessions.max, check: positive)
        sessions.idleTimeout = try resolver.seconds(.sessionsIdleTimeout, default: sessions.idleTimeout)
        configuration.sessions = sessions

        var layouts = Layouts()
        layouts.max = try resolver.int(.layoutsMax, default: layouts.max, check: positive)
        layouts.maxItems = try resolver.int(.layoutsMaxItems, default: layouts.maxItems, check: positive)
        layouts.maxTotalItems = try resolver.int(.layoutsMaxTotalItems, default: layouts.maxTotalItems, check: positive)
        sessions.maxViews = try resolver.int(.sessionsMaxViews, default: sessions.maxViews, check: positive)
        configuration.layouts = layouts

        var store = Store()
        let url = try resolver.string(.storeURL, default: "", isSecret: true) { url in
            if url.isEmpty { return nil }
            do {
                _ = try RedisEndpoint(url: url)
                return nil
            } catch {
                return "\(JSONError.quoted(redacted(url))) is not a store URL: \(error)"
            }
        }
        store.url = url.isEmpty ? nil : url
        store.flushInterval = try resolver.seconds(.storeFlushInterval, default: store.flushInterval)
        store.leaseTimeout = try resolver.seconds(.storeLeaseTimeout, default: store.leaseTimeout)
        store.timeout = try resolver.seconds(.storeTimeout, default: store.timeout)
        store.keyPrefix = try resolver.string(.storeKeyPrefix, default: store.keyPrefix) { prefix in
            prefix.utf8.count > 64 || prefix.contains(where: { $0 == " " || $0 == "{" || $0 == "}" })
                ? "must be at most 64 bytes, without spaces or braces" : nil
        }
        let lease = seconds(store.leaseTimeout)
        if seconds(store.flushInterval) * 4 > lease {
            throw ConfigurationError(
                key: Setting.storeFlushInterval.name,
                "\(Setting.storeFlushInterval.forms): \(seconds(store.flushInterval)) s must be at most a quarter of store.leaseTimeout (\(lease) s): leases are renewed with the writes")
        }
        if seconds(store.timeout) * 2 > lease {
            throw ConfigurationError(
                key: Setting.storeTimeout.name,
                "\(Setting.storeTimeout.forms): \(seconds(store.timeout)) s must be at most half of store.leaseTimeout (\(lease) s): a renewal must get through within a lease")
        }
        configuration.store = store

        let token = try resolver.string(.authToken, default: "", isSecret: true) { _ in nil }
        configuration.authToken = token.isEmpty ? nil : token

        let level = try resolver.string(.logLevel, default: configuration.logLevel.rawValue) { name in
            Logger.Level(rawValue: name.lowercased()) == nil
                ? "\(JSONError.quoted(name)) is not a log level (trace, debug, info, notice, warning, error, critical)"
                : nil
        }
        configuration.logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
        return configuration
    }

    private static func positive(_ value: Int) -> String? {
        value > 0 ? nil : "\(value) must be greater than 0"
    }

    private static func atLeastOne(_ value: Int) -> String? {
        value >= 1 ? nil : "\(value) must be at least 1"
    }

    /// `--config PATH` / `--config=PATH`, else `VIEWPORTD_CONFIG`.
    private static func configFilePath(
        flags: CommandLineArgumentsProvider, environment: [String: String]
    ) throws -> String? {
        let flag: String?
        do {
            flag = try flags.value(forKey: AbsoluteConfigKey(["config"]), type: .string).value
                .flatMap { if case .string(let path) = $0.content { path } else { nil } }
        } catch {
            throw ConfigurationError(key: "config", "--config needs exactly one path")
        }
        if let path = flag ?? environment["VIEWPORTD_CONFIG"] {
            guard !path.isEmpty else {
                throw ConfigurationError(key: "config", "the config file path (--config / VIEWPORTD_CONFIG) is empty")
            }
            return path
        }
        return nil
    }

    /// The file's bytes; nil when it does not exist and is not required.
    private static func readConfigFile(_ path: String, required: Bool) throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else {
            if required {
                throw ConfigurationError("config file \(path) does not exist")
            }
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("config file \(path) cannot be read")
        }
        return [UInt8](data)
    }

    /// Checks the file strictly with ``JSONReader``: valid JSON, an object of sections of known
    /// keys, values of the right type (`null` means the default).
    static func validateConfigFile(_ contents: [UInt8], path: String) throws {
        do {
            try JSONReader.read(contents) { reader in
                try reader.readObject { reader, section in
                    let settings = Setting.all.filter { $0.components[0] == section.string }
                    guard !settings.isEmpty else { throw reader.unknownField(section) }
                    try reader.readObject { reader, name in
                        guard let setting = settings.first(where: { name.equals($0.components[1]) }) else {
                            throw reader.unknownField(name)
                        }
                        if reader.readNullIfPresent() { return }
                        switch setting.type {
                        case .string: _ = try reader.readString()
                        case .int: _ = try reader.readInt()
                        case .seconds: _ = try reader.readDouble()
                        }
                    }
                }
                try reader.finish()
            }
        } catch let error as JSONError {
            throw ConfigurationError("invalid config file \(path): \(error)")
        }
    }
}

/// One configuration key and its forms.
struct Setting: Sendable {
    enum ValueType: Sendable { case string, int, seconds }

    let components: [String]
    let type: ValueType

    init(_ key: String, _ type: ValueType) {
        self.components = key.split(separator: ".").map(String.init)
        self.type = type
    }

    var key: AbsoluteConfigKey { AbsoluteConfigKey(components) }
    var name: String { components.joined(separator: ".") }

    /// `HTTP_MAX_BODY_BYTES`: swift-configuration's environment variable convention.
    var environmentName: String {
        components.map { Self.splitCamelCase($0, separator: "_").uppercased() }.joined(separator: "_")
    }

    /// `--http-max-body-bytes`: swift-configuration's flag convention.
    var flag: String {
        "--" + components.map { Self.splitCamelCase($0, separator: "-").lowercased() }.joined(separator: "-")
    }

    /// `http.port (HTTP_PORT / --http-port)`.
    var forms: String { "\(name) (\(environmentName) / \(flag))" }

    private static func splitCamelCase(_ word: String, separator: Character) -> String {
        var result = ""
        var previousIsLower = false
        for character in word {
            if previousIsLower && character.isUppercase {
                result.append(separator)
            }
            result.append(character)
            previousIsLower = character.isLowercase
        }
        return result
    }

    static let httpHost = Setting("http.host", .string)
    static let httpPort = Setting("http.port", .int)
    static let httpThreads = Setting("http.threads", .int)
    static let httpMaxBodyBytes = Setting("http.maxBodyBytes", .int)
    static let httpConnectionTimeout = Setting("http.connectionTimeout", .seconds)
    static let httpConnectionLimit = Setting("http.connectionLimit", .int)
    static let httpConnectionMemoryLimit = Setting("http.connectionMemoryLimit", .int)
    static let httpDrainTimeout = Setting("http.drainTimeout", .seconds)
    static let httpMaxBufferedBodyBytes = Setting("http.maxBufferedBodyBytes", .int)
    static let sessionsMax = Setting("sessions.max", .int)
    static let sessionsIdleTimeout = Setting("sessions.idleTimeout", .seconds)
    static let sessionsMaxViews = Setting("sessions.maxViews", .int)
    static let layoutsMax = Setting("layouts.max", .int)
    static let layoutsMaxItems = Setting("layouts.maxItems", .int)
    static let layoutsMaxTotalItems = Setting("layouts.maxTotalItems", .int)
    static let authToken = Setting("auth.token", .string)
    static let logLevel = Setting("log.level", .string)
    static let storeURL = Setting("store.url", .string)
    static let storeFlushInterval = Setting("store.flushInterval", .seconds)
    static let storeLeaseTimeout = Setting("store.leaseTimeout", .seconds)
    static let storeTimeout = Setting("store.timeout", .seconds)
    static let storeKeyPrefix = Setting("store.keyPrefix", .string)

    static let all: [Setting] = [
        httpHost, httpPort, httpThreads, httpMaxBodyBytes, httpConnectionTimeout, httpConnectionLimit,
        httpConnectionMemoryLimit, httpDrainTimeout, httpMaxBufferedBodyBytes, sessionsMax, sessionsIdleTimeout, sessionsMaxViews, layoutsMax,
        layoutsMaxItems, layoutsMaxTotalItems, authToken, logLevel,
        storeURL, storeFlushInterval, storeLeaseTimeout, storeTimeout, storeKeyPrefix,
    ]
}

/// A provider with the name of a key in its form (`HTTP_PORT`, `--http-port`, the file path).
struct Source: Sendable {
    let provider: any ConfigProvider
    let name: @Sendable (Setting) -> String
}

/// Looks keys up in the sources in order; the first that has a key wins.
struct Resolver {
    let sources: [Source]

    /// The content and the name of its source, or nil when no source has the key.
    private func lookup(_ setting: Setting, _ type: ConfigType, isSecret: Bool) throws
        -> (ConfigContent, String)?
    {
        for source in sources {
            let result: LookupResult
            do {
                result = try source.provider.value(forKey: setting.key, type: type)
            } catch {
                let raw = try? source.provider.value(forKey: setting.key, type: .string).value
                var shown = "the value"
                if !isSecret, let raw, case .string(let text) = raw.content {
                    shown = JSONError.quoted(text)
                }
                let expected =
                    switch setting.type {
                    case .int: "an integer"
                    case .seconds: "a number of seconds"
                    case .string: "a single string"
                    }
                throw ConfigurationError(
                    key: setting.name,
                    "\(setting.forms): \(shown) is not \(expected), from \(source.name(setting))")
            }
            if let value = result.value {
                return (value.content, source.name(setting))
            }
        }
        return nil
    }

    private func invalid(_ setting: Setting, _ problem: String, from source: String) -> ConfigurationError {
        ConfigurationError(key: setting.name, "\(setting.forms): \(problem), from \(source)")
    }

    func int(_ setting: Setting, default value: Int, check: (Int) -> String?) throws -> Int {
        guard let (content, source) = try lookup(setting, .int, isSecret: false) else { return value }
        guard case .int(let int) = content else {
            throw invalid(setting, "not an integer", from: source)
        }
        if let problem = check(int) {
            throw invalid(setting, problem, from: source)
        }
        return int
    }

    func seconds(_ setting: Setting, default value: Duration) throws -> Duration {
        guard let (content, source) = try lookup(setting, .double, isSecret: false) else { return value }
        guard case .double(let seconds) = content else {
            throw invalid(setting, "not a number of seconds", from: source)
        }
        guard seconds.isFinite, seconds > 0 else {
            throw invalid(setting, "\(seconds) must be a duration in seconds greater than 0", from: source)
        }
        guard seconds < 1e9 else {
            throw invalid(setting, "\(seconds) seconds is too long", from: source)
        }
        return .seconds(seconds)
    }

    func string(
        _ setting: Setting, default value: String, isSecret: Bool = false, check: (String) -> String?
    ) throws -> String {
        guard let (content, source) = try lookup(setting, .string, isSecret: isSecret) else { return value }
        guard case .string(let string) = content else {
            throw invalid(setting, "not a string", from: source)
        }
        if let problem = check(string) {
            throw invalid(setting, problem, from: source)
        }
        return string
    }
}
