import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Redis Cluster for a test: `primaries` primaries with one replica each
/// (`redis-server --cluster-enabled yes` on free loopback ports, in a temporary directory),
/// created with `redis-cli --cluster create --cluster-replicas 1`, and ready once every node
/// says `cluster_state:ok` and knows every node. A short `cluster-node-timeout` (1 s) makes a
/// failover quick; `cluster-require-full-coverage no` keeps the other shards serving while one
/// has no primary. Everything stops and is removed with `stop()` or when released.
public final class RedisTestCluster: @unchecked Sendable {
    public struct Node: Sendable {
        public let port: Int
        public let process: ChildProcess
    }

    public private(set) var nodes: [Node] = []
    public let directory: String
    public let nodeTimeoutMilliseconds: Int

    public init(primaries: Int = 3, nodeTimeoutMilliseconds: Int = 1000) throws {
        self.nodeTimeoutMilliseconds = nodeTimeoutMilliseconds
        directory = NSTemporaryDirectory() + "viewportd-redis-cluster-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            for k in 0..<(2 * primaries) { nodes.append(try Self.startNode(directory: directory, index: k, timeout: nodeTimeoutMilliseconds)) }
            let create = try ChildProcess(
                "redis-cli", ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "1", "--cluster-yes"])
            guard create.waitForExit(timeout: 60) == 0 else { throw ChildProcessError("redis-cli --cluster create failed: \(create.output)") }
            guard waitUntilOK(timeout: 30) else { throw ChildProcessError("the cluster did not reach cluster_state:ok") }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    private static func startNode(directory: String, index: Int, timeout: Int) throws -> Node {
        var lastError = ""
        for _ in 0..<5 {
            let port = ChildProcess.freePort()
            let bus = ChildProcess.freePort()
            let nodeDirectory = "\(directory)/\(index)-\(port)"
            try FileManager.default.createDirectory(atPath: nodeDirectory, withIntermediateDirectories: true)
            let child = try ChildProcess(
                "redis-server",
                ["--port", String(port), "--cluster-port", String(bus), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", String(timeout), "--cluster-require-full-coverage", "no", "--dir", nodeDirectory,
                 "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"])
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && child.isRunning {
                if RedisTestServer.ping(port: port) { return Node(port: port, process: child) }
                usleep(10_000)
            }
            lastError = child.output
            child.stop()
        }
        throw ChildProcessError("a cluster node did not start: \(lastError)")
    }

    /// `redis://127.0.0.1:PORT` of the first node.
    public var seedURL: String { "redis://127.0.0.1:\(nodes[0].port)" }

    /// Runs redis-cli against the node on `port` and answers its output.
    public func cli(_ port: Int, _ arguments: [String]) throws -> String {
        let child = try ChildProcess("redis-cli", ["-p", String(port), "--raw"] + arguments)
        guard child.waitForExit(timeout: 30) != nil else { throw ChildProcessError("redis-cli \(arguments) hung") }
        return child.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The ports of the nodes that are primaries now (and running).
    public func primaryPorts() -> [Int] {
        nodes.filter { $0.process.isRunning }.compactMap { node in
            (try? cli(node.port, ["ROLE"]))?.hasPrefix("master") == true ? node.port : nil
        }
    }

    /// The node id of the node on `port`.
    public func nodeID(_ port: Int) throws -> String { try cli(port, ["CLUSTER", "MYID"]) }

    /// The port of the primary that serves `slot` now, as the node on `askingPort` sees it.
    public func owner(ofSlot slot: Int, asking askingPort: Int) throws -> Int? {
        let lines = try cli(askingPort, ["CLUSTER", "SLOTS"]).split(separator: "\n").map(String.init)
        // --raw prints each range as: first, last, host, port, id, [replica host, port, id]…
        var k = 0
        while k + 4 < lines.count {
            if let first = Int(lines[k]), let last = Int(lines[k + 1]), lines[k + 2] == "127.0.0.1", let port = Int(lines[k + 3]),
                (first...last).contains(slot)
            {
                return port
            }
            k += 1
        }
        return nil
    }

    /// Whether every running node says `cluster_state:ok` and agrees on the owner of every slot,
    /// within `timeout` seconds.
    @discardableResult
    public func waitUntilOK(timeout: Double) -> Bool {
        eventually(within: timeout, every: 0.1) {
            let running = nodes.filter { $0.process.isRunning }
            let states = running.map { (try? cli($0.port, ["CLUSTER", "INFO"])) ?? "" }
            guard states.allSatisfy({ $0.contains("cluster_state:ok") }) else { return false }
            let maps = running.map { (try? cli($0.port, ["CLUSTER", "SLOTS"])) ?? "" }
            return Set(maps.map { Self.primariesOnly($0) }).count == 1
        }
    }

    /// The CLUSTER SLOTS text without the replicas (ranges and primaries only), sorted: replicas
    /// are listed in an order that varies between nodes.
    private static func primariesOnly(_ slots: String) -> String {
        let lines = slots.split(separator: "\n").map(String.init)
        var ranges: [String] = []
        var k = 0
        while k + 4 < lines.count {
            if Int(lines[k]) != nil, Int(lines[k + 1]) != nil, Int(lines[k + 3]) != nil, lines[k + 2] == "127.0.0.1" {
                ranges.append("\(lines[k])-\(lines[k + 1])@\(lines[k + 3])")
                k += 5
            } else {
                k += 1
            }
        }
        return ranges.sorted().joined(separator: ",")
    }

    /// Stops every node and removes the directory.
    public func stop() {
        for node in nodes { node.process.stop(timeout: 5) }
        nodes = []
        try? FileManager.default.removeItem(atPath: directory)
    }
}
