import Configuration
import Logging
import ViewportRedis
import ViewportJSON

/// One configuration key: its forms (file key, environment variable, flag), what it sets, how it
/// is read and validated into a ``ServiceConfiguration``, and how its value is shown.
///
/// ``Setting/all`` is the one table of settings: loading, `viewportd --help`, the startup log
/// line (``ServiceConfiguration/description``) and the settings table of
/// docs/operations/configuration.md all come from it (a test fails when that copy differs).
struct Setting: Sendable {
    enum ValueType: Sendable { case string, int, seconds }

    let components: [String]
    let type: ValueType
    /// One line: what the setting does (the "meaning" column of docs/operations/configuration.md).
    let summary: String
    /// Never shown or logged (the value is `<redacted>`).
    let isSecret: Bool
    /// Reads the setting (itself, to name it in errors) from the sources into a configuration.
    private let reader: @Sendable (Setting, SettingsReader, inout ServiceConfiguration) throws -> Void
    /// The value as shown in the startup log and, for the defaults, in `--help` and docs/operations/configuration.md.
    let show: @Sendable (ServiceConfiguration) -> String

    /// Reads the setting from the sources into `configuration`, validating it; settings earlier
    /// in the table are already read.
    func read(_ values: SettingsReader, into configuration: inout ServiceConfiguration) throws {
        try reader(self, values, &configuration)
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

    /// The default value as shown, with its unit for durations.
    var defaultText: String {
        let value = show(ServiceConfiguration())
        return type == .seconds ? "\(value) (s)" : value
    }

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

    // MARK: Kinds of settings

    static func int(
        _ key: String, _ path: any WritableKeyPath<ServiceConfiguration, Int> & Sendable, _ summary: String,
        check: @escaping @Sendable (Int, ServiceConfiguration) -> String?
    ) -> Setting {
        Setting(key, .int, summary, isSecret: false) { setting, values, configuration in
            let current = configuration
            let value = try values.int(setting, default: configuration[keyPath: path]) { check($0, current) }
            // A default is checked too: a setting it depends on may have been given
            // (`layouts.maxItems` above the default `layouts.maxTotalItems`).
            if let problem = check(value, current) {
                throw ConfigurationError(key: setting.name, "\(setting.forms): \(problem) (its default: set it as well)")
            }
            configuration[keyPath: path] = value
        } show: { String($0[keyPath: path]) }
    }

    static func seconds(
        _ key: String, _ path: any WritableKeyPath<ServiceConfiguration, Duration> & Sendable, _ summary: String,
        check: @escaping @Sendable (Double, ServiceConfiguration) -> String? = { _, _ in nil }
    ) -> Setting {
        Setting(key, .seconds, summary, isSecret: false) { setting, values, configuration in
            let value = try values.seconds(setting, default: configuration[keyPath: path])
            if let problem = check(ServiceConfiguration.seconds(value), configuration) {
                throw ConfigurationError(key: setting.name, "\(setting.forms): \(problem)")
            }
            configuration[keyPath: path] = value
        } show: { ServiceConfiguration.secondsText($0[keyPath: path]) }
    }

    static func string(
        _ key: String, _ path: any WritableKeyPath<ServiceConfiguration, String> & Sendable, _ summary: String,
        check: @escaping @Sendable (String) -> String?
    ) -> Setting {
        Setting(key, .string, summary, isSecret: false) { setting, values, configuration in
            configuration[keyPath: path] = try values.string(setting, default: configuration[keyPath: path], check: check)
        } show: { $0[keyPath: path] }
    }

    private init(
        _ key: String, _ type: ValueType, _ summary: String, isSecret: Bool,
        read: @escaping @Sendable (Setting, SettingsReader, inout ServiceConfiguration) throws -> Void,
        show: @escaping @Sendable (ServiceConfiguration) -> String
    ) {
        self.components = key.split(separator: ".").map(String.init)
        self.type = type
        self.summary = summary
        self.isSecret = isSecret
        self.reader = read
        self.show = show
    }

    static func positive(_ value: Int, _: ServiceConfiguration) -> String? {
        value > 0 ? nil : "\(value) must be greater than 0"
    }

    /// A check that the value is at least the setting `name` (read earlier in the table), since
    /// otherwise `consequence`.
    static func atLeast(
        _ path: any KeyPath<ServiceConfiguration, Int> & Sendable, _ name: String, otherwise consequence: String
    ) -> @Sendable (Int, ServiceConfiguration) -> String? {
        { value, configuration in
            let other = configuration[keyPath: path]
            return value >= other ? nil : "\(value) is less than \(name) (\(other)): \(consequence)"
        }
    }

    // MARK: The table

    static let all: [Setting] = [
        .string("http.host", \.http.host, "address to bind") { $0.isEmpty ? "must not be empty" : nil },
        .int("http.port", \.http.port, "TCP port (0: any free port)") { port, _ in
            (0...65535).contains(port) ? nil : "\(port) is not a port (0…65535)"
        },
        .int("http.threads", \.http.threads, "libmicrohttpd thread pool (epoll; 1…1024)") { threads, _ in
            (1...1024).contains(threads) ? nil : "\(threads) must be from 1 to 1024"
        },
        .int("http.maxBodyBytes", \.http.maxBodyBytes, "larger bodies get 413", check: positive),
        .seconds(
            "http.connectionTimeout", \.http.connectionTimeout,
            "seconds a connection may idle, counted in whole seconds by libmicrohttpd (a fraction is rounded up; a WebSocket is pinged after half of it)"),
        .int(
            "http.connectionLimit", \.http.connectionLimit,
            "concurrent connections (an open WebSocket is one); more wait, unanswered, until one closes", check: positive),
        .int(
            "http.connectionMemoryLimit", \.http.connectionMemoryLimit,
            "bytes of buffer per connection, at least 4096 (a request's head must fit: larger answers 431; libmicrohttpd zeroes it per request: 16 KiB measured 8% faster than 64 KiB)"
        ) { bytes, _ in
            bytes >= 4096 ? nil : "\(bytes) must be at least 4096"
        },
        .seconds("http.drainTimeout", \.http.drainTimeout, "seconds a stop waits for in-flight requests"),
        .int(
            "http.maxBufferedBodyBytes", \.http.maxBufferedBodyBytes,
            "JSON bodies are read whole before parsing: bytes all of them may hold at once; a body that would pass it answers 503 with `Retry-After: 1` (at least `http.maxBodyBytes`)",
            check: atLeast(\.http.maxBodyBytes, "http.maxBodyBytes", otherwise: "a body of the largest allowed size could never be read")),
        .int("sessions.max", \.sessions.max, "open sessions (more: 429)", check: positive),
        .seconds("sessions.idleTimeout", \.sessions.idleTimeout, "seconds before an unused session is gone (404)"),
        .int(
            "sessions.maxViews", \.sessions.maxViews,
            "items one session may materialize at once; more answers 422 and changes nothing", check: positive),
        .int("layouts.max", \.layouts.max, "stored layouts", check: positive),
        .int("layouts.maxItems", \.layouts.maxItems, "items per layout (more: 413)", check: positive),
        .int(
            "layouts.maxTotalItems", \.layouts.maxTotalItems,
            "items across stored layouts (the layout memory bound, ~90 B/item; at least `layouts.maxItems`)",
            check: atLeast(\.layouts.maxItems, "layouts.maxItems", otherwise: "a layout of the largest allowed size could never be stored")),
        Setting(
            "auth.token", .string,
            "when set, every path but `/healthz` and `/readyz` needs `Authorization: Bearer <token>` (a WebSocket may send the subprotocol `bearer.<token>` instead)",
            isSecret: true
        ) { setting, values, configuration in
            var givenEmpty = false
            let token = try values.string(setting, default: "", isSecret: true) { token in
                givenEmpty = token.isEmpty
                return nil
            }
            configuration.authToken = token.isEmpty ? nil : token
            if givenEmpty {
                // An orchestrator that injects an empty secret must not start an open service unnoticed.
                configuration.warnings.append("\(setting.forms) is empty: bearer auth is off, every path answers without a token")
            }
        } show: { $0.authToken == nil ? "none" : "<redacted>" },
        Setting(
            "store.url", .string,
            "`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` of a Redis or Valkey server that several instances share, or `redis://[[USER]:PASSWORD@]HOST1[:PORT1],HOST2[:PORT2]…` of nodes of a Redis or Valkey cluster (see [the shared store](store.md)); none: everything stays in this process. A secret (the password is never logged)",
            isSecret: true
        ) { setting, values, configuration in
            let url = try values.string(setting, default: "", isSecret: true) { url in
                if url.isEmpty { return nil }
                do {
                    _ = try RedisEndpoint.seeds(url: url)
                    return nil
                } catch {
                    return "\(JSONError.quoted(ServiceConfiguration.redacted(url))) is not a store URL: \(error)"
                }
            }
            configuration.store.url = url.isEmpty ? nil : url
        } show: { $0.store.url.map(ServiceConfiguration.redacted) ?? "none" },
        .seconds(
            "store.leaseTimeout", \.store.leaseTimeout,
            "seconds an instance's claim on a session lasts without renewal; after a crash its sessions move after this long"),
        .seconds(
            "store.flushInterval", \.store.flushInterval,
            "seconds between writes of changed sessions to the store (what a crash can lose); at most a quarter of `store.leaseTimeout`"
        ) { flush, configuration in
            let lease = ServiceConfiguration.seconds(configuration.store.leaseTimeout)
            return flush * 4 > lease
                ? "\(flush) s must be at most a quarter of store.leaseTimeout (\(lease) s): leases are renewed with the writes" : nil
        },
        .seconds(
            "store.timeout", \.store.timeout,
            "seconds one round trip to the store may take (connect, command), and a request waits for another instance to hand a session over, before 503; at most half of `store.leaseTimeout`"
        ) { timeout, configuration in
            let lease = ServiceConfiguration.seconds(configuration.store.leaseTimeout)
            return timeout * 2 > lease
                ? "\(timeout) s must be at most half of store.leaseTimeout (\(lease) s): a renewal must get through within a lease" : nil
        },
        .seconds(
            "store.parkAfter", \.store.parkAfter,
            "seconds a session held by an instance may go without a request before it is written and released to the store, so that its lease needs no more renewals (its next request takes it back, one round trip); at least `store.leaseTimeout`"
        ) { park, configuration in
            let lease = ServiceConfiguration.seconds(configuration.store.leaseTimeout)
            return park < lease ? "\(park) s must be at least store.leaseTimeout (\(lease) s): a pause in scrolling should not move a session" : nil
        },
        .int(
            "store.requestThreads", \.store.requestThreads,
            "threads that answer requests needing a round trip to the store (a session not held here, a lease to renew first, opening, deleting, layouts, the start of a stream or a WebSocket), so that no HTTP worker waits on the store; 1…256"
        ) { threads, _ in
            (1...256).contains(threads) ? nil : "\(threads) must be from 1 to 256"
        },
        .string("store.keyPrefix", \.store.keyPrefix, "prefix of every key, so that deployments can share a server") { prefix in
            prefix.utf8.count > 64 || prefix.contains(where: { $0 == " " || $0 == "{" || $0 == "}" })
                ? "must be at most 64 bytes, without spaces or braces" : nil
        },
        Setting("log.level", .string, "`trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`", isSecret: false) {
            setting, values, configuration in
            let level = try values.string(setting, default: configuration.logLevel.rawValue) { name in
                Logger.Level(rawValue: name.lowercased()) == nil
                    ? "\(JSONError.quoted(name)) is not a log level (trace, debug, info, notice, warning, error, critical)"
                    : nil
            }
            configuration.logLevel = Logger.Level(rawValue: level.lowercased()) ?? .info
        } show: { $0.logLevel.rawValue },
    ]

    /// The setting with this flag (`--http-port`).
    static func withFlag(_ flag: String) -> Setting? { all.first { $0.flag == flag } }

    /// The flag an unknown one most likely means: the only flag ending like it (`--port` →
    /// `--http-port`), else the nearest by edit distance when it is close.
    static func suggestion(for unknown: String) -> String? {
        let word = unknown.drop { $0 == "-" }.lowercased()
        guard !word.isEmpty else { return nil }
        let endings = all.map(\.flag).filter { $0.hasSuffix("-" + word) }
        if endings.count == 1 { return endings[0] }
        let ranked = all.map { ($0.flag, editDistance(Array($0.flag), Array("--" + word))) }.min { $0.1 < $1.1 }
        guard let (flag, distance) = ranked, distance <= max(2, word.count / 3) else { return nil }
        return flag
    }

    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
