import Configuration
import Logging
import SystemPackage
import ViewportJSON

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
    /// Values are read by swift-configuration's `ConfigReader` over its providers
    /// (`CommandLineArgumentsProvider`, `EnvironmentVariablesProvider`, `FileProvider<JSONSnapshot>`)
    /// in that order, the first that has a key winning (``SettingsReader``).
    public static func load(arguments: [String], environment: [String: String]) async throws
        -> ServiceConfiguration
    {
        try await load(arguments: arguments, environment: environment, defaultConfigFile: defaultConfigFile)
    }

    /// ``load(arguments:environment:)`` with another default file (for tests).
    static func load(arguments: [String], environment: [String: String], defaultConfigFile: String)
        async throws -> ServiceConfiguration
    {
        try checkArguments(arguments)
        let flags = CommandLineArgumentsProvider(
            arguments: arguments, secretsSpecifier: .specific(Set(Setting.all.filter(\.isSecret).map(\.flag))))
        let environmentVariables = EnvironmentVariablesProvider(
            environmentVariables: environment,
            secretsSpecifier: .specific(Set(Setting.all.filter(\.isSecret).map(\.environmentName))))
        var sources: [SettingsReader.Source] = [
            .init(provider: flags, name: { $0.flag }),
            .init(provider: environmentVariables, name: { $0.environmentName }),
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
            sources.append(.init(provider: file, name: { _ in path }))
            configuration.configFile = path
        }

        let values = SettingsReader(sources: sources)
        // Every setting, in table order (a check may read a setting earlier in the table).
        for setting in Setting.all {
            try setting.read(values, into: &configuration)
        }
        return configuration
    }

    /// Refuses what the flags provider would silently ignore: an unknown flag (`--port`), a flag
    /// without its value, a stray argument. The error names it, and a known flag it may mean.
    /// `arguments` starts with the program name; `--help`/`-h` are the caller's.
    static func checkArguments(_ arguments: [String]) throws {
        var index = 1
        var previous: Setting?
        var given = Set<String>()
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { continue }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if let previous, previous.isSecret {
                    // Likely the rest of a secret with a space in it: never echo it.
                    throw ConfigurationError(key: previous.name, "\(previous.forms): a single value is expected (quote a value with spaces)")
                }
                throw ConfigurationError("unexpected argument \(JSONError.quoted(argument)); settings are flags such as --http-port 8080 (see --help)")
            }
            let name = String(argument.prefix { $0 != "=" })
            guard name == "--config" || Setting.withFlag(name) != nil else {
                let hint = Setting.suggestion(for: name).map { "; did you mean \($0)?" } ?? " (see --help)"
                throw ConfigurationError("unknown flag \(name)\(hint)")
            }
            // Which of two values would win is not obvious (the flags provider takes neither).
            guard given.insert(name).inserted else {
                throw ConfigurationError(key: name == "--config" ? "config" : Setting.withFlag(name)?.name, "\(name) is given more than once")
            }
            previous = Setting.withFlag(name)
            if name.count == argument.count {
                // `--flag value`: the value is the next argument.
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ConfigurationError(key: name == "--config" ? "config" : Setting.withFlag(name)?.name, "\(name) needs a value")
                }
                index += 1
            }
        }
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
