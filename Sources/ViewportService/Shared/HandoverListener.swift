import Foundation
import Synchronization
import ViewportRedis

/// Waits for handover requests to this instance (a blocking pop on its inbox list, on a
/// connection of its own) and answers each at once: the asker is waiting.
struct HandoverListener: Sendable {
    let sessions: SharedSessionStore

    /// Seconds one wait for a request lasts before the loop checks whether to stop.
    static let wait = 1.0

    func run() {
        let store = sessions.store
        let connection = RedisConnection(
            endpoint: store.pool.endpoint, connectTimeout: store.pool.connectTimeout,
            commandTimeout: Self.wait + store.pool.commandTimeout)
        while sessions.listening.load(ordering: .relaxed) {
            do {
                if let (session, replyKey) = try store.nextHandoverRequest(on: connection, timeout: Self.wait) {
                    sessions.handOver(session, replyKey: replyKey)
                }
            } catch {
                // The store is unreachable: try again shortly (the connection reconnects).
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        connection.close()
    }
}
