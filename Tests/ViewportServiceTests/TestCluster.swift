import Foundation
import Testing
import ViewportRedis
import ViewportService
import ViewportTestSupport

/// Several viewportd servers in this process sharing a real redis-server (started on a free
/// loopback port, stopped by `stop()`), or the store `VIEWPORTD_TEST_STORE_URL` names (a Redis
/// Cluster started by scripts/redis-cluster.sh, say) when it is set.
final class TestCluster: @unchecked Sendable {
    let redis: RedisTestServer
    private(set) var instances: [TestService]
    private let configure: (inout ServiceConfiguration) -> Void

    init(_ count: Int, configure: @escaping (inout ServiceConfiguration) -> Void = { _ in }) throws {
        redis = try RedisTestServer()
        self.configure = configure
        instances = []
        for _ in 0..<count { instances.append(try makeInstance()) }
    }

    /// `VIEWPORTD_TEST_STORE_URL`, when set: the store every shared-store test uses instead of its
    /// own redis-server (the suites that do not stop or pause the store).
    static var externalStoreURL: String? {
        ProcessInfo.processInfo.environment["VIEWPORTD_TEST_STORE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The URL of the store the instances share.
    var storeURL: String { Self.externalStoreURL ?? redis.url }

    /// A client of the store the instances share (one server or a cluster), to read its keys.
    func storeClient() throws -> RedisClusterClient {
        RedisClusterClient(seeds: try RedisEndpoint.seeds(url: storeURL), connectTimeout: 1, commandTimeout: 1, capacity: 2)
    }

    private func makeInstance() throws -> TestService {
        let url = storeURL
        return try TestService { c in
            c.store.url = url
            c.store.flushInterval = .milliseconds(50)
            c.store.leaseTimeout = .seconds(2)
            c.store.timeout = .milliseconds(500)
            self.configure(&c)
        }
    }

    subscript(_ k: Int) -> TestService { instances[k] }

    /// Replaces instance `k` with a new one (after `stop()` or a simulated death).
    func restart(_ k: Int) throws {
        instances[k].stop()
        instances[k] = try makeInstance()
    }

    func stop() {
        for instance in instances { instance.stop() }
        redis.stop()
    }
}

/// Starts a cluster, runs `body`, stops it.
func withCluster<T>(_ count: Int, configure: @escaping (inout ServiceConfiguration) -> Void = { _ in }, _ body: (TestCluster) throws -> T) throws -> T {
    let cluster = try TestCluster(count, configure: configure)
    defer { cluster.stop() }
    return try body(cluster)
}
