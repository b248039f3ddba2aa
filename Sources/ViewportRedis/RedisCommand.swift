/// One command: its arguments as bytes (binary-safe), and for `EVALSHA` the script, so that a
/// `NOSCRIPT` error (a restarted or flushed server) is answered by sending it again as `EVAL`.
public struct RedisCommand: Sendable, Hashable {
    public var arguments: [[UInt8]]
    /// Set for `EVALSHA`: the script whose SHA-1 is the second argument.
    public var script: RedisScript?

    public init(_ arguments: [[UInt8]], script: RedisScript? = nil) {
        self.arguments = arguments
        self.script = script
    }

    /// `RedisCommand("SET", key, value)`: each argument as its bytes (strings as UTF-8,
    /// integers in decimal).
    public init(_ name: String, _ arguments: any RedisArgument...) {
        self.arguments = [Array(name.utf8)] + arguments.map(\.redisBytes)
    }

    public init(_ name: String, arguments: [any RedisArgument]) {
        self.arguments = [Array(name.utf8)] + arguments.map(\.redisBytes)
    }

    /// `EVALSHA sha numkeys keys… args…` for `script`.
    public static func evalsha(_ script: RedisScript, keys: [any RedisArgument], arguments: [any RedisArgument]) -> RedisCommand {
        RedisCommand(
            [Array("EVALSHA".utf8), Array(script.sha1.utf8), Array(String(keys.count).utf8)] + keys.map(\.redisBytes)
                + arguments.map(\.redisBytes),
            script: script)
    }

    /// The same command as `EVAL` with the script's source.
    var asEval: RedisCommand {
        guard let script, arguments.count >= 2 else { return self }
        var copy = self
        copy.arguments[0] = Array("EVAL".utf8)
        copy.arguments[1] = Array(script.source.utf8)
        copy.script = nil
        return copy
    }

    /// The command's name, for errors and metrics.
    public var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }
}

/// A value that can be a command argument.
public protocol RedisArgument: Sendable {
    var redisBytes: [UInt8] { get }
}

extension String: RedisArgument {
    public var redisBytes: [UInt8] { Array(utf8) }
}

extension Array: RedisArgument where Element == UInt8 {
    public var redisBytes: [UInt8] { self }
}

extension Int: RedisArgument {
    public var redisBytes: [UInt8] { Array(String(self).utf8) }
}

extension Int64: RedisArgument {
    public var redisBytes: [UInt8] { Array(String(self).utf8) }
}

extension UInt64: RedisArgument {
    public var redisBytes: [UInt8] { Array(String(self).utf8) }
}

extension RedisCommand {
    /// The keys the command names, by Redis' own key positions for the commands a client of a
    /// cluster routes: a script's (`EVAL`, `EVALSHA`, `FCALL` and their `_RO` forms) after its key
    /// count; every argument of `DEL`, `EXISTS`, `MGET`, `WATCH` and the like; every other one of
    /// `MSET`; all but the timeout of `BLPOP` and the like; none for commands about the server or
    /// the connection (`PING`, `MULTI`, `INFO`, `CLUSTER`…); else the first argument.
    public var keys: [[UInt8]] {
        guard arguments.count > 1 else { return [] }
        let name = String(decoding: arguments[0], as: UTF8.self).uppercased()
        switch name {
        case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
            guard arguments.count > 2, let count = Int(String(decoding: arguments[2], as: UTF8.self)), count > 0 else { return [] }
            return Array(arguments[3..<min(arguments.count, 3 + count)])
        case "DEL", "UNLINK", "EXISTS", "TOUCH", "MGET", "WATCH", "SINTER", "SUNION", "SDIFF", "PFCOUNT":
            return Array(arguments[1...])
        case "MSET", "MSETNX":
            return stride(from: 1, to: arguments.count, by: 2).map { arguments[$0] }
        case "BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX":
            return Array(arguments[1..<(arguments.count - 1)])
        case "RENAME", "RENAMENX", "SMOVE", "RPOPLPUSH", "LMOVE", "COPY", "BLMOVE", "BRPOPLPUSH":
            return Array(arguments[1...min(2, arguments.count - 1)])
        case "PING", "ECHO", "MULTI", "EXEC", "DISCARD", "UNWATCH", "INFO", "TIME", "SCRIPT", "FUNCTION", "CLUSTER", "ASKING",
            "READONLY", "READWRITE", "AUTH", "HELLO", "SELECT", "CLIENT", "CONFIG", "COMMAND", "DBSIZE", "FLUSHALL", "FLUSHDB",
            "WAIT", "LASTSAVE", "SAVE", "BGSAVE", "MEMORY", "LATENCY", "SLOWLOG", "DEBUG", "ROLE", "PUBLISH", "QUIT", "RESET":
            return []
        default:
            return [arguments[1]]
        }
    }
}
