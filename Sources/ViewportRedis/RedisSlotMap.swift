/// Which primary serves each of a Redis Cluster's 16,384 hash slots, as `CLUSTER SLOTS` or
/// `CLUSTER SHARDS` answer it. A slot no primary serves (a failed shard in a cluster that
/// tolerates partial coverage) has none.
struct RedisSlotMap: Sendable, Equatable {
    /// A node's address: what the map, the redirections and the pools name it by.
    struct Node: Sendable, Hashable, CustomStringConvertible {
        var host: String
        var port: Int
        var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The primaries the map names.
    private(set) var nodes: [Node] = []
    /// Per slot, its primary's index in `nodes`, or -1.
    private var owners = [Int16](repeating: -1, count: RedisHashSlot.count)

    /// Whether the map stands for one server without cluster mode.
    private(set) var isStandalone = false

    /// Every slot served by `node`: what a server that is not a cluster amounts to.
    init(everySlotOn node: Node, standalone: Bool = false) {
        isStandalone = standalone
        nodes = [node]
        owners = [Int16](repeating: 0, count: RedisHashSlot.count)
    }

    private init() {}

    /// The primary of `slot`, nil when none serves it.
    /// - Complexity: O(1).
    func node(forSlot slot: Int) -> Node? {
        let index = owners[slot]
        return index < 0 ? nil : nodes[Int(index)]
    }

    /// `slot` is served by `node` from now on (what a `MOVED` says).
    mutating func assign(slot: Int, to node: Node) {
        owners[slot] = index(of: node)
    }

    /// Whether every slot has a primary.
    var coversEverySlot: Bool { !owners.contains(-1) }

    private mutating func index(of node: Node) -> Int16 {
        if let known = nodes.firstIndex(of: node) { return Int16(known) }
        nodes.append(node)
        return Int16(nodes.count - 1)
    }

    private mutating func assign(_ range: ClosedRange<Int>, to node: Node) throws(RedisError) {
        guard range.lowerBound >= 0, range.upperBound < RedisHashSlot.count else {
            throw .unexpected("slot range \(range) is outside 0…\(RedisHashSlot.count - 1)")
        }
        let index = index(of: node)
        for slot in range { owners[slot] = index }
    }

    /// The map in a `CLUSTER SLOTS` reply from `queried`: `[[first, last, [host, port, id…],
    /// replicas…], …]`. An empty or `?` host (a node that does not know its address) is the
    /// queried node's host.
    static func parse(slots reply: RedisReply, queried: Node) throws(RedisError) -> RedisSlotMap {
        guard let ranges = reply.array else { throw .unexpected("CLUSTER SLOTS answered \(reply)") }
        var map = RedisSlotMap()
        for range in ranges {
            guard let fields = range.array, fields.count >= 3, let first = fields[0].integer, let last = fields[1].integer, first <= last,
                let primary = fields[2].array, primary.count >= 2, let port = primary[1].integer
            else { throw .unexpected("CLUSTER SLOTS answered \(range)") }
            let node = Node(host: host(primary[0].text, queried: queried), port: Int(port))
            try map.assign(Int(first)...Int(last), to: node)
        }
        return map
    }

    /// The map in a `CLUSTER SHARDS` reply (Redis 7.0+) from `queried`: per shard, `slots`
    /// (first, last, first, last…) and `nodes`, each with `ip` (or `endpoint`), `port` and
    /// `role`; the slots go to the shard's `master`.
    static func parse(shards reply: RedisReply, queried: Node) throws(RedisError) -> RedisSlotMap {
        guard let shards = reply.array else { throw .unexpected("CLUSTER SHARDS answered \(reply)") }
        var map = RedisSlotMap()
        for shard in shards {
            let fields = try Self.fields(shard)
            guard let slots = fields["slots"]?.array, slots.count % 2 == 0, let nodes = fields["nodes"]?.array else {
                throw .unexpected("CLUSTER SHARDS answered \(shard)")
            }
            if slots.isEmpty { continue }
            var primary: Node?
            for node in nodes {
                let node = try Self.fields(node)
                guard node["role"]?.text == "master" else { continue }
                guard let port = node["port"]?.integer ?? node["tls-port"]?.integer else { throw .unexpected("CLUSTER SHARDS node without a port") }
                primary = Node(host: host(node["ip"]?.text ?? node["endpoint"]?.text, queried: queried), port: Int(port))
            }
            guard let primary else { continue }
            for k in stride(from: 0, to: slots.count, by: 2) {
                guard let first = slots[k].integer, let last = slots[k + 1].integer, first <= last else {
                    throw .unexpected("CLUSTER SHARDS slots \(slots)")
                }
                try map.assign(Int(first)...Int(last), to: primary)
            }
        }
        return map
    }

    private static func host(_ given: String?, queried: Node) -> String {
        guard let given, !given.isEmpty, given != "?" else { return queried.host }
        return given
    }

    /// A RESP2 map (a flat array of names and values) by name.
    private static func fields(_ reply: RedisReply) throws(RedisError) -> [String: RedisReply] {
        guard let flat = reply.array, flat.count % 2 == 0 else { throw .unexpected("expected a map, got \(reply)") }
        var fields: [String: RedisReply] = [:]
        for k in stride(from: 0, to: flat.count, by: 2) {
            if let name = flat[k].text { fields[name] = flat[k + 1] }
        }
        return fields
    }
}
