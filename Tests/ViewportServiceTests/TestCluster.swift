import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Several viewportd servers in this process sharing a real redis-server (started on a free
/// loopback port, stopped by `stop()`).
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

    private func makeInstance() throws -> TestService {
        let url = redis.url
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
