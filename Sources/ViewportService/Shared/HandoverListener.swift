import Foundation
import Synchronization
import ViewportRedis

/// Waits for handover requests to this instance (a blocking pop on its inbox list, on a
/// connection of the store's client that it holds while it waits) and answers each at once: the
/// asker is waiting.
struct HandoverListener: Sendable {
    let sessions: SharedSessionStore

    /// Seconds one wait for a request lasts before the loop checks whether to stop.
    static let wait = 1.0

    func run() {
        let store = sessions.store
        while sessions.listening.load(ordering: .relaxed) {
            do {
                if let (session, replyKey) = try store.nextHandoverRequest(timeout: Self.wait) {
                    sessions.handOver(session, replyKey: replyKey)
                }
            } catch {
                // The store is unreachable: try again shortly (the client reconnects).
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }
}
