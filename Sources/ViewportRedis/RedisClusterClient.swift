import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A client of a Redis Cluster (or Valkey cluster) over hiredis, which has no cluster support:
/// it routes each command by its keys' hash slot (``RedisHashSlot``) to the primary the slot map
/// names, keeps a ``RedisPool`` per node, and follows the cluster's redirections:
///
/// - `MOVED`: the slot lives elsewhere now; the map is corrected at once (and refreshed from
///   `CLUSTER SLOTS`, at most every ``refreshInterval``), and the command sent there.
/// - `ASK`: the slot is migrating; the command goes to the importing node once, after `ASKING`,
///   and the map stays as it is.
/// - `TRYAGAIN`: a multi-key command while a migration splits its keys: sent again every 10 ms,
///   for up to a command timeout.
/// - `CLUSTERDOWN`: thrown as ``RedisError/unavailable(_:)``, after a map refresh.
///
/// A pipeline is split by node (one round trip per node, in the order the nodes first appear)
/// and its replies are put back in the order of the commands; a `MULTI`…`EXEC` block goes to
/// one node as a whole. The keys of one command or block must share a slot, else nothing is
/// sent (``RedisError/crossSlot(_:)``). A node that cannot be reached makes the map refresh:
/// a command that was not sent (refused connect, failing fast) goes to the slot's new primary
/// if the map changed (a replica promoted); one that may have been sent fails. The other nodes'
/// commands are sent and answered all the same (``pipelineResults(_:)`` reports each).
///
/// Seeds are any nodes of the cluster (it is discovered from the first that answers); they
/// share the user, the password and the database. A seed that is a server without cluster mode
/// is served as such: every slot on it, its database as given.
public final class RedisClusterClient: RedisClient {
    public let seeds: [RedisEndpoint]
    public let connectTimeout: Double
    public let commandTimeout: Double
    /// Idle connections kept per node.
    public let capacity: Int
    public let retryInterval: Double
    /// Whether each node's pool reconnects in the background (``RedisPool/reconnectsInBackground``).
    public let reconnectsInBackground: Bool

    /// Redirections one command follows before it fails.
    public static let maxRedirections = 5
    /// The shortest time between two refreshes of the slot map (seconds).
    public static let refreshInterval = 0.1

    private struct State {
        var map: RedisSlotMap?
        var pools: [RedisSlotMap.Node: RedisPool] = [:]
        /// Monotonic nanoseconds of the last refresh, and whether one runs now.
        var refreshedAt: Int64 = 0
        var refreshing = false
    }

    private let state = Mutex(State())

    public init(
        seeds: [RedisEndpoint], connectTimeout: Double, commandTimeout: Double, capacity: Int, retryInterval: Double = 0.25,
        reconnectsInBackground: Bool = false
    ) {
        self.reconnectsInBackground = reconnectsInBackground
        self.seeds = seeds
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.capacity = max(1, capacity)
        self.retryInterval = retryInterval
    }

    public func send(_ command: RedisCommand) throws(RedisError) -> RedisReply {
        try execute([command], timeout: nil)[0]
    }

    public func pipeline(_ commands: [RedisCommand]) throws(RedisError) -> [RedisReply] {
        try execute(commands, timeout: nil)
    }

    /// Every node gets its part of the pipeline even when another fails: the commands of a
    /// node that fails (and whose slots no other node serves now) fail with its error.
    public func pipelineResults(_ commands: [RedisCommand]) -> [Result<RedisReply, RedisError>] {
        results(commands, timeout: nil)
    }

    public func send(_ command: RedisCommand, timeout: Double) throws(RedisError) -> RedisReply {
        try execute([command], timeout: timeout)[0]
    }

    public func closeAll() {
        for pool in state.withLock({ Array($0.pools.values) }) { pool.closeAll() }
    }

    /// Whether the seeds are a cluster (false: one server without cluster mode), once known.
    public var isCluster: Bool? { state.withLock { $0.map.map { !$0.isStandalone } } }

    /// The slot map now (nil before the first command), for tests.
    var slotMap: RedisSlotMap? { state.withLock { $0.map } }

    // MARK: Routing

    /// Commands sent together to one node: one command, or a `MULTI`…`EXEC` block.
    private struct Unit {
        var commands: Range<Int>
        /// The slot of its keys; nil for commands without keys (any node answers them).
        var slot: Int?
        /// Where an `ASK` sent it.
        var ask: RedisSlotMap.Node?
    }

    /// The commands as units, each with its slot (on a server without cluster mode, any keys
    /// go together).
    private static func units(_ commands: [RedisCommand], standalone: Bool) throws(RedisError) -> [Unit] {
        var units: [Unit] = []
        var start = 0
        while start < commands.count {
            var end = start + 1
            if commands[start].name.uppercased() == "MULTI" {
                // Up to its EXEC (or DISCARD), or the end.
                while end < commands.count {
                    end += 1
                    if ["EXEC", "DISCARD"].contains(commands[end - 1].name.uppercased()) { break }
                }
            }
            var slot: Int?
            var seen: [(key: [UInt8], slot: Int)] = []
            for command in commands[start..<end] where !standalone {
                for key in command.keys {
                    let keySlot = RedisHashSlot.of(key)
                    seen.append((key, keySlot))
                    if slot == nil { slot = keySlot }
                    guard slot == keySlot else {
                        let shown = seen.map { "\(String(decoding: $0.key.prefix(64), as: UTF8.self).debugDescription) (slot \($0.slot))" }
                        throw .crossSlot("\(command.name): " + shown.joined(separator: ", "))
                    }
                }
            }
            units.append(Unit(commands: start..<end, slot: slot))
            start = end
        }
        return units
    }

    /// The replies, or the first failure.
    private func execute(_ commands: [RedisCommand], timeout: Double?) throws(RedisError) -> [RedisReply] {
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for result in results(commands, timeout: timeout) {
            switch result {
            case .success(let reply): replies.append(reply)
            case .failure(let error): throw error
            }
        }
        return replies
    }

    /// Each command's reply or failure: a node that fails fails its units only.
    private func results(_ commands: [RedisCommand], timeout: Double?) -> [Result<RedisReply, RedisError>] {
        guard !commands.isEmpty else { return [] }
        var map: RedisSlotMap
        var pending: [Unit]
        do throws(RedisError) {
            map = try currentMap()
            pending = try Self.units(commands, standalone: map.isStandalone)
        } catch {
            return Array(repeating: .failure(error), count: commands.count)
        }
        var results = [Result<RedisReply, RedisError>](repeating: .success(.null), count: commands.count)
        func fail(_ unit: Unit, _ error: RedisError) {
            for index in unit.commands { results[index] = .failure(error) }
        }
        var lastRedirection = ""
        // `TRYAGAIN` (a migration splits a command's keys for a moment) is retried for up to a
        // command timeout without counting as a redirection.
        let tryAgainUntil = RedisPool.now() + Int64(commandTimeout * 1e9)
        var redirections = 0
        var round = 0
        while redirections <= Self.maxRedirections {
            if pending.isEmpty { return results }
            if round > 0 { map = (try? refresh()) ?? map }
            round += 1
            var onlyTryAgain = true
            // The units by node, in the order the nodes first appear.
            var order: [RedisSlotMap.Node] = []
            var byNode: [RedisSlotMap.Node: [Unit]] = [:]
            for unit in pending {
                guard let node = unit.ask ?? unit.slot.map({ map.node(forSlot: $0) }) ?? map.nodes.first ?? seedNodes.first else {
                    _ = try? refresh()
                    fail(unit, .unavailable("CLUSTERDOWN: no primary serves slot \(unit.slot ?? -1)"))
                    continue
                }
                if byNode[node] == nil { order.append(node) }
                byNode[node, default: []].append(unit)
            }
            var next: [Unit] = []
            for node in order {
                let units = byNode[node] ?? []
                var batch: [RedisCommand] = []
                var positions: [Int?] = []
                for unit in units {
                    if unit.ask != nil {
                        batch.append(RedisCommand("ASKING"))
                        positions.append(nil)
                    }
                    for index in unit.commands {
                        // After ASKING, a script goes as EVAL: a NOSCRIPT answer's second try
                        // would come without ASKING.
                        batch.append(unit.ask == nil ? commands[index] : commands[index].asEval)
                        positions.append(index)
                    }
                }
                let answers: [RedisReply]
                do {
                    answers = try roundTrip(batch, on: node, timeout: timeout)
                } catch {
                    // The node is gone or unreachable: the map may name its replacement for
                    // the units not sent; the others fail.
                    let refreshed = try? refresh()
                    let notSent: Bool
                    switch error {
                    case .connect, .unavailable: notSent = true
                    default: notSent = false
                    }
                    if let refreshed { map = refreshed }
                    for unit in units {
                        if notSent, let refreshed, unit.ask == nil, let slot = unit.slot, refreshed.node(forSlot: slot) != node {
                            next.append(unit)
                        } else {
                            fail(unit, error)
                        }
                    }
                    continue
                }
                for (k, index) in positions.enumerated() {
                    if let index { results[index] = .success(answers[k]) }
                }
                for var unit in units {
                    guard let redirection = unit.commands.lazy.compactMap({ index -> RedisRedirection? in
                        guard case .success(let reply) = results[index] else { return nil }
                        return RedisRedirection(reply, from: node)
                    }).first else { continue }
                    lastRedirection = "\(redirection)"
                    if case .tryAgain = redirection {} else { onlyTryAgain = false }
                    switch redirection {
                    case .moved(let slot, let target):
                        map.assign(slot: slot, to: target)
                        state.withLock { $0.map?.assign(slot: slot, to: target) }
                        unit.ask = nil
                    case .ask(_, let target):
                        unit.ask = target
                    case .tryAgain:
                        usleep(10_000)
                    case .clusterDown(let message):
                        _ = try? refresh()
                        fail(unit, .unavailable(message))
                        continue
                    }
                    next.append(unit)
                }
            }
            if !(onlyTryAgain && RedisPool.now() < tryAgainUntil) { redirections += 1 }
            pending = next
        }
        for unit in pending {
            fail(unit, .unavailable("still redirected after \(Self.maxRedirections) redirections (last: \(lastRedirection))"))
        }
        return results
    }

    private func roundTrip(_ commands: [RedisCommand], on node: RedisSlotMap.Node, timeout: Double?) throws(RedisError) -> [RedisReply] {
        let pool = pool(for: node)
        guard let timeout else { return try pool.pipeline(commands) }
        return try pool.withConnection { (connection) throws(RedisError) in
            let normal = connection.commandTimeout
            connection.setCommandTimeout(timeout)
            defer { connection.setCommandTimeout(normal) }
            return try connection.pipeline(commands)
        }
    }

    // MARK: The slot map

    private var seedNodes: [RedisSlotMap.Node] { seeds.map { RedisSlotMap.Node(host: $0.host, port: $0.port) } }

    private func pool(for node: RedisSlotMap.Node) -> RedisPool {
        state.withLock { state in
            if let pool = state.pools[node] { return pool }
            var endpoint = seeds.first ?? RedisEndpoint(host: node.host)
            endpoint.host = node.host
            endpoint.port = node.port
            let pool = RedisPool(
                endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout, capacity: capacity,
                retryInterval: retryInterval, reconnectsInBackground: reconnectsInBackground)
            state.pools[node] = pool
            return pool
        }
    }

    private func currentMap() throws(RedisError) -> RedisSlotMap {
        if let map = state.withLock({ $0.map }) { return map }
        return try refresh()
    }

    /// Asks the known primaries, then the seeds, for the slot map, and installs the first
    /// answer; answers the map as it is when another thread refreshes it now or it was
    /// refreshed less than ``refreshInterval`` ago.
    @discardableResult
    func refresh() throws(RedisError) -> RedisSlotMap {
        let now = RedisPool.now()
        let (current, candidates): (RedisSlotMap?, [RedisSlotMap.Node]) = state.withLock { state in
            if let map = state.map, state.refreshing || now - state.refreshedAt < Int64(Self.refreshInterval * 1e9) {
                return (map, [])
            }
            state.refreshing = true
            return (nil, (state.map?.nodes ?? []) + seedNodes)
        }
        if let current { return current }
        defer { state.withLock { $0.refreshing = false } }
        var asked: Set<RedisSlotMap.Node> = []
        var lastError = RedisError.connect("no seed node given")
        for node in candidates where asked.insert(node).inserted {
            do {
                let map = try discover(from: node)
                let gone: [RedisPool] = state.withLock { state in
                    state.map = map
                    state.refreshedAt = RedisPool.now()
                    let keep = Set(map.nodes + seedNodes)
                    let gone = state.pools.filter { !keep.contains($0.key) }
                    for node in gone.keys { state.pools[node] = nil }
                    return Array(gone.values)
                }
                for pool in gone { pool.closeAll() }
                return map
            } catch {
                lastError = error
            }
        }
        state.withLock { $0.refreshedAt = RedisPool.now() }
        throw lastError
    }

    /// The slot map as `node` sees it: `CLUSTER SLOTS` (`CLUSTER SHARDS` where that is refused),
    /// or every slot on `node` when it is not in cluster mode.
    private func discover(from node: RedisSlotMap.Node) throws(RedisError) -> RedisSlotMap {
        let pool = pool(for: node)
        let reply = try pool.send(RedisCommand("CLUSTER", "SLOTS"))
        guard case .error(let message) = reply else {
            let map = try RedisSlotMap.parse(slots: reply, queried: node)
            guard !map.nodes.isEmpty else { throw .unavailable("CLUSTERDOWN: the cluster at \(node) serves no slots yet") }
            return map
        }
        if message.contains("cluster support disabled") { return RedisSlotMap(everySlotOn: node, standalone: true) }
        let shards = try pool.send(RedisCommand("CLUSTER", "SHARDS"))
        if case .error = shards {
            // A user whose ACL does not allow `CLUSTER` (written for one server) on the one seed
            // given: served as one server. On a cluster its commands then fail redirected
            // (`MOVED`): a cluster's user needs `+cluster|slots`.
            if message.hasPrefix("NOPERM"), seeds.count == 1 { return RedisSlotMap(everySlotOn: node, standalone: true) }
            throw .server("\(message) (CLUSTER SLOTS on \(node))")
        }
        let map = try RedisSlotMap.parse(shards: shards, queried: node)
        guard !map.nodes.isEmpty else { throw .unavailable("CLUSTERDOWN: the cluster at \(node) serves no slots yet") }
        return map
    }
}
