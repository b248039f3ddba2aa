import Configuration
import Synchronization
import ViewportJSON

/// Reads settings through swift-configuration's `ConfigReader`: its providers in order (flags,
/// environment variables, the config file), the first that has a key winning.
///
/// The reader's getters answer nil (or their default) for a malformed value and their errors
/// name no provider, while a bad setting must stop the start naming where its value came from:
/// `http.port (HTTP_PORT / --http-port): 70000 is not a port (0…65535), from HTTP_PORT`. So
/// every lookup is also recorded by an access reporter, whose event lists each provider's
/// answer up to the one that decided: a value, or an error.
struct SettingsReader {
    /// A provider with the name of a key in its form (`HTTP_PORT`, `--http-port`, the file path).
    struct Source: Sendable {
        let provider: any ConfigProvider
        let name: @Sendable (Setting) -> String
    }

    private let sources: [Source]
    private let reader: ConfigReader
    private let lookups = LookupRecorder()

    init(sources: [Source]) {
        self.sources = sources
        reader = ConfigReader(providers: sources.map(\.provider), accessReporter: lookups)
    }

    /// The value and the name of its source, or nil when no source has the key.
    private func lookup<Value>(
        _ setting: Setting, isSecret: Bool = false, _ get: (ConfigReader, ConfigKey) -> Value?
    ) throws -> (Value, String)? {
        let value = get(reader, ConfigKey(setting.components))
        guard let event = lookups.take(), !event.providerResults.isEmpty else { return nil }
        // The sources were asked in order until one had the key or failed.
        let decided = event.providerResults.count - 1
        let source = sources[decided]
        guard case .success = event.providerResults[decided].result, event.conversionError == nil else {
            var shown = "the value"
            if !isSecret, let raw = try? source.provider.value(forKey: setting.key, type: .string).value,
                case .string(let text) = raw.content
            {
                shown = JSONError.quoted(text)
            }
            let expected =
                switch setting.type {
                case .int: "an integer"
                case .seconds: "a number of seconds"
                case .string: "a single string"
                }
            throw ConfigurationError(key: setting.name, "\(setting.forms): \(shown) is not \(expected), from \(source.name(setting))")
        }
        return value.map { ($0, source.name(setting)) }
    }

    private func invalid(_ setting: Setting, _ problem: String, from source: String) -> ConfigurationError {
        ConfigurationError(key: setting.name, "\(setting.forms): \(problem), from \(source)")
    }

    func int(_ setting: Setting, default value: Int, check: (Int) -> String?) throws -> Int {
        guard let (int, source) = try lookup(setting, { $0.int(forKey: $1) }) else { return value }
        if let problem = check(int) {
            throw invalid(setting, problem, from: source)
        }
        return int
    }

    func seconds(_ setting: Setting, default value: Duration) throws -> Duration {
        guard let (seconds, source) = try lookup(setting, { $0.double(forKey: $1) }) else { return value }
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
        guard let (string, source) = try lookup(setting, isSecret: isSecret, { $0.string(forKey: $1, isSecret: isSecret) })
        else { return value }
        if let problem = check(string) {
            throw invalid(setting, problem, from: source)
        }
        return string
    }
}

/// Keeps the last lookup's access event (one load reads one setting at a time).
private final class LookupRecorder: AccessReporter {
    private let last = Mutex<AccessEvent?>(nil)

    func report(_ event: AccessEvent) {
        last.withLock { $0 = event }
    }

    func take() -> AccessEvent? {
        last.withLock { $0.take() }
    }
}
