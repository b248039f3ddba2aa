/// Where a Redis-protocol server is: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`; a cluster's
/// seed nodes are `redis://[[USER]:PASSWORD@]HOST1[:PORT1],HOST2[:PORT2]…` (``seeds(url:)``).
///
/// The last `@` ends USER:PASSWORD, so a password may hold `/`, `@`, `?` or `#` as they are;
/// `%XX` escapes in either are decoded (write a `%` as `%25`).
/// HOST is a name, an IPv4 address or an IPv6 address in brackets; PORT defaults to 6379 and DB
/// to 0. A password (and, with Redis 6 ACLs, a user) is sent with `AUTH` on every connection.
/// hiredis 0.14 speaks plain TCP only: a server that requires TLS needs a local TLS proxy.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int
    public var user: String?
    public var password: String?

    public init(host: String, port: Int = 6379, database: Int = 0, user: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
    }

    /// Parses a `redis://` URL of one server; the error says what is wrong with it.
    public init(url: String) throws(RedisURLError) {
        let seeds = try Self.seeds(url: url)
        guard seeds.count == 1, let only = seeds.first else {
            throw RedisURLError("names \(seeds.count) hosts (a cluster's seed nodes) where one server is expected")
        }
        self = only
    }

    /// Parses a `redis://` URL of one server or of a cluster's seed nodes,
    /// `redis://[[USER]:PASSWORD@]HOST1[:PORT1],HOST2[:PORT2]…[/DB]`: one endpoint per host, each
    /// with the URL's user, password and database (with several hosts, only database 0: a
    /// cluster has no other).
    public static func seeds(url: String) throws(RedisURLError) -> [RedisEndpoint] {
        let scheme = "redis://"
        guard url.hasPrefix(scheme) else {
            throw RedisURLError("\(url.hasPrefix("rediss://") ? "rediss:// (TLS) is not supported; use a local TLS proxy and redis://" : "must start with redis://") (redis://HOST:PORT[/DB])")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        // The last `@` ends the user and password, which may hold any character (`/`, `@`, `?`
        // too; `%`-escapes are decoded): what follows is the hosts, the ports and the database.
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = info.firstIndex(of: ":") else {
                throw RedisURLError("\"…@\" needs a \":\" before the password: redis://:PASSWORD@HOST, or redis://USER:PASSWORD@HOST with an ACL user")
            }
            let name = info[..<colon]
            user = name.isEmpty ? nil : String(name)
            let given = String(info[info.index(after: colon)...])
            guard !given.isEmpty else { throw RedisURLError("the password before \"@\" is empty") }
            guard let decodedPassword = Self.percentDecoded(given) else { throw RedisURLError("the password has a bad %-escape") }
            user = try user.map { (name) throws(RedisURLError) in
                guard let decoded = Self.percentDecoded(name) else { throw RedisURLError("the user has a bad %-escape") }
                return decoded
            }
            password = decodedPassword
        }
        guard !rest.hasPrefix("/") else {
            throw RedisURLError("Unix sockets are not supported: give a TCP address, redis://HOST:PORT[/DB]")
        }
        guard !rest.contains("?"), !rest.contains("#") else { throw RedisURLError("query strings and fragments are not supported") }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard let db = Int(path), db >= 0, db <= 1_000_000 else {
                    throw RedisURLError("the database \"\(path)\" is not a non-negative integer")
                }
                database = db
            }
        }
        let hosts = rest.split(separator: ",", omittingEmptySubsequences: false)
        if hosts.count > 1 && database != 0 {
            throw RedisURLError("a cluster (several seed nodes) has only database 0: remove \"/\(database)\"")
        }
        return try hosts.map { (hostAndPort) throws(RedisURLError) in
            let (host, port) = try Self.hostAndPort(hostAndPort)
            return RedisEndpoint(host: host, port: port, database: database, user: user, password: password)
        }
    }

    /// `HOST[:PORT]`, `[IPV6][:PORT]`.
    private static func hostAndPort(_ rest: Substring) throws(RedisURLError) -> (String, Int) {
        var host: Substring
        var port = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw RedisURLError("an IPv6 address needs its closing \"]\"") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError("unexpected \"\(after)\" after the host") }
                port = try Self.port(after.dropFirst())
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...])
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw RedisURLError("the host is empty (redis://HOST:PORT[/DB], or redis://HOST1:PORT1,HOST2:PORT2 for a cluster)") }
        guard !host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }) else { throw RedisURLError("the host \"\(host)\" is not a host name or address") }
        return (String(host), port)
    }

    private static func port(_ text: Substring) throws(RedisURLError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else { throw RedisURLError("the port \"\(text)\" is not a port (1…65535)") }
        return port
    }

    private static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The URL with the password hidden, for logs.
    public var description: String {
        let auth = password == nil ? "" : "\(user ?? ""):<redacted>@"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(auth)\(shownHost):\(port)/\(database)"
    }
}

/// Why a `store.url` is not a Redis URL.
public struct RedisURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
