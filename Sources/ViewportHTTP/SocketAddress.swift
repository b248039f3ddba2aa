#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A resolved bind address (`sockaddr_in` or `sockaddr_in6` bytes) for MHD_OPTION_SOCK_ADDR.
struct SocketAddress: Sendable {
    let storage: [UInt8]
    let isIPv6: Bool

    /// Resolves `host` (IP literal, "localhost", or a name) with `port`.
    init(host: String, port: Int) throws(HTTPServerError) {
        let name = host == "localhost" ? "127.0.0.1" : host
        let port16 = UInt16(port).bigEndian
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port16
            storage = withUnsafeBytes(of: v4) { Array($0) }
            isIPv6 = false
            return
        }
        var v6 = sockaddr_in6()
        let literal = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port16
            storage = withUnsafeBytes(of: v6) { Array($0) }
            isIPv6 = true
            return
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_flags = AI_ADDRCONFIG
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &result) == 0, let first = result else {
            throw .cannotResolveHost(host)
        }
        defer { freeaddrinfo(result) }
        // Prefer IPv4 when the name has both.
        var chosen: UnsafeMutablePointer<addrinfo>? = first
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if entry.pointee.ai_family == AF_INET { chosen = entry; break }
            cursor = entry.pointee.ai_next
        }
        guard let entry = chosen, let address = entry.pointee.ai_addr else { throw .cannotResolveHost(host) }
        if entry.pointee.ai_family == AF_INET {
            var resolved = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            resolved.sin_port = port16
            storage = withUnsafeBytes(of: resolved) { Array($0) }
            isIPv6 = false
        } else if entry.pointee.ai_family == AF_INET6 {
            var resolved = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            resolved.sin6_port = port16
            storage = withUnsafeBytes(of: resolved) { Array($0) }
            isIPv6 = true
        } else {
            throw .cannotResolveHost(host)
        }
    }
}
