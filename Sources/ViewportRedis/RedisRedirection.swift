/// What a cluster node answers instead of running a command elsewhere's: `MOVED slot host:port`
/// (the slot lives on that node now), `ASK slot host:port` (it is migrating there: ask that node
/// once, after `ASKING`), `TRYAGAIN` (a multi-key command while its keys are split by a
/// migration) or `CLUSTERDOWN` (the cluster serves no commands now).
enum RedisRedirection: Equatable {
    case moved(slot: Int, to: RedisSlotMap.Node)
    case ask(slot: Int, to: RedisSlotMap.Node)
    case tryAgain
    case clusterDown(String)

    /// The redirection an error reply is, nil for any other reply. An address without a host
    /// (`:7001`, a node that does not know its own) is on `current`'s host.
    init?(_ reply: RedisReply, from current: RedisSlotMap.Node) {
        guard case .error(let message) = reply else { return nil }
        if message.hasPrefix("TRYAGAIN") {
            self = .tryAgain
            return
        }
        if message.hasPrefix("CLUSTERDOWN") {
            self = .clusterDown(message)
            return
        }
        let parts = message.split(separator: " ")
        guard parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK", let slot = Int(parts[1]),
            (0..<RedisHashSlot.count).contains(slot), let colon = parts[2].lastIndex(of: ":"),
            let port = Int(parts[2][parts[2].index(after: colon)...])
        else { return nil }
        var host = String(parts[2][..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let node = RedisSlotMap.Node(host: host.isEmpty ? current.host : host, port: port)
        self = parts[0] == "MOVED" ? .moved(slot: slot, to: node) : .ask(slot: slot, to: node)
    }
}
