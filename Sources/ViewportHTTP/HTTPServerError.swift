/// Why an ``HTTPServer`` could not start.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// The host is neither an IP literal nor a name that resolves.
    case cannotResolveHost(String)
    /// libmicrohttpd refused to start (typically: cannot bind host:port); `reason` is its log.
    case cannotStart(host: String, port: Int, reason: String)
    /// ``HTTPServer/start()`` was called twice, or after ``HTTPServer/stop()``.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidConfiguration(let message):
            return "invalid HTTP configuration: \(message)"
        case .cannotResolveHost(let host):
            return "cannot resolve host '\(host)'"
        case .cannotStart(let host, let port, let reason):
            return "cannot listen on \(host):\(port): \(reason.isEmpty ? "libmicrohttpd failed to start" : reason)"
        case .alreadyStarted:
            return "the HTTP server was already started"
        }
    }
}
