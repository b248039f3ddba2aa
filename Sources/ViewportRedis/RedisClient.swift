/// What a user of a Redis-protocol store needs, whether it is one server (``RedisPool``) or a
/// cluster (``RedisClusterClient``): commands and pipelines from many threads, each bounded by
/// the timeouts. An error reply is a reply; a thrown ``RedisError`` means no reply.
public protocol RedisClient: AnyObject, Sendable {
    var connectTimeout: Double { get }
    var commandTimeout: Double { get }
    /// How long calls fail fast after a connection broke.
    var retryInterval: Double { get }

    func send(_ command: RedisCommand) throws(RedisError) -> RedisReply
    /// The replies in the order of `commands`.
    func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply]
    /// A blocking command (`BLPOP key seconds`) that may wait up to `timeout` seconds for its
    /// reply.
    func send(_ command: RedisCommand, timeout: Double) throws(RedisError) -> RedisReply
    /// Closes the idle connections.
    func closeAll()
}
