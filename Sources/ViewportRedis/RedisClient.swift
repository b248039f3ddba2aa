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
    /// The replies in the order of `commands`, each the reply or why it got none: on a cluster
    /// the nodes that answer give their replies while another node fails (on one server all
    /// succeed or all fail alike).
    func pipelineResults(_ commands: [RedisCommand]) -> [Result<RedisReply, RedisError>]
    /// A blocking command (`BLPOP key seconds`) that may wait up to `timeout` seconds for its
    /// reply.
    func send(_ command: RedisCommand, timeout: Double) throws(RedisError) -> RedisReply
    /// Closes the idle connections.
    func closeAll()
}

extension RedisClient {
    public func pipelineResults(_ commands: [RedisCommand]) -> [Result<RedisReply, RedisError>] {
        do {
            return try pipeline(commands).map { .success($0) }
        } catch {
            return Array(repeating: .failure(error), count: commands.count)
        }
    }
}
