import Foundation
import Synchronization
import Testing
import ViewportRedis
import ViewportTestSupport

@testable import ViewportService

/// An instance that stops answers every handover request it was sent, including those its
/// listener never took: an asker that asked while the session was still held here (its release
/// had not landed yet) must not time out and answer 503 for a session that is free by then.
@Suite(.serialized, .tags(.live))
struct HandoverShutdownTests {
    @Test func aHandoverRequestLeftInTheInboxIsAnsweredWhenTheOwnerStops() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let a = try TestService { c in
            c.store.url = redis.url
            c.store.flushInterval = .milliseconds(50)
            c.store.leaseTimeout = .seconds(2)
            c.store.timeout = .milliseconds(500)
        }
        let shared = try #require(a.server.sessions as? SharedSessionStore)
        let (id, _) = try a.connect().openSession(#"{"layout":\#(layoutJSON(listItems(100))),"viewport":[375,667]}"#)

        // The listener takes no more requests (as while it answers another one, or once it ended)…
        shared.listening.store(false, ordering: .sequentiallyConsistent)
        shared.store.wakeListener()
        #expect(eventually(within: 3) { !shared.listenerRunning.load(ordering: .sequentiallyConsistent) })

        // …and another instance asks for the session: the request waits in the inbox.
        let store = shared.store
        let asker = RedisStateStore(
            pool: RedisPool(endpoint: try RedisEndpoint(url: redis.url), connectTimeout: 1, commandTimeout: 1, capacity: 2), keys: store.keys,
            instance: "asker", leaseMilliseconds: store.leaseMilliseconds, sessionMilliseconds: store.sessionMilliseconds,
            layoutMilliseconds: store.layoutMilliseconds, handoverWait: 2, handleBlock: store.handleBlock, metrics: ServiceMetrics(),
            health: StoreHealth(), flushInterval: 0.1)
        let replyKey = store.keys.reply(RedisStateStore.nonce(), session: id)
        let asked = try asker.acquire(id, replyKey: replyKey)
        guard case .owned(let owner, _) = asked else {
            Issue.record("expected the owner to be asked, got \(asked)")
            a.stop()
            return
        }
        #expect(owner == store.instance)

        a.stop()
        // Answered by the shutdown (before it, the asker waited out `handoverWait` for nothing).
        let started = Date()
        #expect(try asker.awaitHandover(replyKey: replyKey), "the asker is told to look again")
        #expect(Date().timeIntervalSince(started) < 1)
        guard case .acquired(_, _, _, _, let stolen) = try asker.acquire(id, replyKey: replyKey) else {
            Issue.record("the session is free after the shutdown")
            return
        }
        #expect(!stolen, "released by its owner, not taken from a lapsed one")
        // Nothing is left in the stopped instance's inbox.
        #expect(try store.takeHandoverRequests().isEmpty)
    }
}
