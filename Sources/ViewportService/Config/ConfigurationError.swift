/// A configuration that cannot be used: a bad value (naming the key, its environment variable
/// and flag, and where the value came from), an unreadable or invalid config file.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting concerned (`http.port`), or nil for problems with the file as a whole.
    public var key: String?
    public var message: String

    public init(key: String? = nil, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { message }
}
