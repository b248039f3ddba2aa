import Dispatch
import Foundation
import Logging
import Synchronization
import ViewportCore
import ViewportRedis

/// The handover side of the shared session store: it answers other instances' requests for the
/// sessions held here, and on shutdown hands every session over.
///
/// - A listener waits for handover requests to this instance (a blocking pop on its inbox list,
///   on a connection of the store's client that it holds while it waits) and answers each at
///   once: the asker is waiting. A session asked for is written and released in one script,
///   which also answers the asker.
/// - On shutdown (``stop()``, once the HTTP server has drained) the writer's rounds stop, every
///   session is written and released in pipelines, this instance's heartbeat ends, and every
///   request still in the inbox is answered.
///
/// A service of the process's group (``BackgroundService``): it runs the listener, and its
/// graceful shutdown is the handover.
final class SessionHandover: BackgroundService {
    let sessions: HeldSessions
    let writer: StoreWriter
    /// Answering handover requests: until shutdown has released every session.
    let listening = AtomicFlag(false)
    /// Whether the listener runs (it may be answering a request it took).
    let listenerRunning = AtomicFlag(false)
    /// Signalled when the listener ends.
    private let listenerEnded = DispatchSemaphore(value: 0)

    /// Seconds one wait for a request lasts before the listener checks whether to stop.
    static let wait = 1.0

    init(sessions: HeldSessions, writer: StoreWriter) {
        self.sessions = sessions
        self.writer = writer
    }

    private var store: RedisStateStore { sessions.store }

    // MARK: The listener

    var threadName: String { "viewportd-handover" }

    /// Answers handover requests while ``listening``.
    func runBlocking() {
        listenerRunning.store(true, ordering: .sequentiallyConsistent)
        defer {
            listenerRunning.store(false, ordering: .sequentiallyConsistent)
            listenerEnded.signal()
        }
        while listening.load(ordering: .relaxed) {
            do {
                if let (session, replyKey) = try store.nextHandoverRequest(timeout: Self.wait) {
                    handOver(session, replyKey: replyKey)
                }
            } catch {
                // The store is unreachable: try again shortly (the client reconnects).
                usleep(100_000)
            }
        }
    }

    /// Hands every session over, then stops the listener (see the type's description).
    func stop() {
        handOverAll()
        // Never started serving: the listener ends all the same.
        if listening.exchange(false, ordering: .sequentiallyConsistent) { store.wakeListener() }
    }

    // MARK: Handover requests

    /// Another instance asks for a session: write it and release it (one script, which also
    /// answers the asker), unless it is not this instance's to give.
    func handOver(_ id: String, replyKey: String) {
        // The asker waits up to `store.handoverWait`: say when half of it went here.
        let asked = Monotonic.nanoseconds()
        defer {
            let took = (Monotonic.nanoseconds() - asked) / 1_000_000
            if Double(took) >= store.handoverWait * 500 { sessions.logger.warning("session \(id): handing it over took \(took) ms") }
        }
        // The gate: a request of this instance taking the session over (or just took it and is
        // applying its update) finishes first.
        sessions.gates.withLock(id) {
            guard let handle = sessions.local.get(id) else {
                tell(replyKey)
                return
            }
            // Being released by shutdown: answer once that is done (the asker then finds it free).
            Self.wait(atMost: store.handoverWait) { handle.state.withLock { $0.ownership.phase == .handingOver } }
            handle.state.withLock { state in
                let action = state.ownership.handoverRequested(
                    now: Monotonic.nanoseconds(), highestHandle: state.session.nextHandle - 1, block: store.handleBlock)
                guard case .release(let ticket) = action, !state.closed else {
                    tell(replyKey)
                    return
                }
                let write = sessions.write(of: handle, state, ticket: ticket, release: true, replyKey: replyKey)
                let outcome = store.write([write], operation: "handover").first ?? .failed
                if outcome == .layoutMissing { sessions.republishLayouts(of: [write]) }
                switch sessions.released(handle, &state, outcome, ticket) {
                case .handedOver:
                    sessions.metrics.countHandover("given")
                case .lost:
                    tell(replyKey)
                case .releaseInDoubt:
                    // It may have run: answer nothing until the store says (the writer's reclaim).
                    sessions.logger.warning("session \(id): its release got no answer; in doubt until the shared store says whether it ran")
                case .releaseNotRun, .confirmed, .writeAgain, .unconfirmed:
                    break
                }
            }
        }
    }

    /// Tells an asker to look again (the session is not here).
    private func tell(_ replyKey: String) {
        _ = try? store.pool.pipeline([
            .init("RPUSH", replyKey, "released"), .init("PEXPIRE", replyKey, 10_000),
        ])
    }

    // MARK: Shutdown

    /// Hands every session over: written and released in pipelines (a few tries while the store
    /// answers), then this instance's heartbeat ends and every handover request still in its
    /// inbox is answered. Once; later calls return at once.
    func handOverAll() {
        guard sessions.running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        writer.stopRounds()
        var remaining = sessions.local.allHandles
        var handedOver = 0
        for attempt in 0..<5 where !remaining.isEmpty {
            if attempt > 0 { usleep(200_000) }
            let now = Monotonic.nanoseconds()
            var writes: [(handle: SessionHandle, write: RedisStateStore.Write)] = []
            for handle in remaining {
                let write: RedisStateStore.Write? = handle.state.withLock { state in
                    guard !state.closed,
                        let ticket = state.ownership.beginShutdownRelease(
                            now: now, highestHandle: state.session.nextHandle - 1, block: store.handleBlock)
                    else { return nil }
                    return sessions.write(of: handle, state, ticket: ticket, release: true)
                }
                if let write { writes.append((handle, write)) }
            }
            var failed: [SessionHandle] = []
            for batch in StoreBatches(writes: writes.count, limit: StoreWriter.batchLimit) {
                let chunk = writes[batch.writes]
                let outcomes = store.write(chunk.map(\.write), operation: "release")
                sessions.republishLayouts(of: zip(chunk, outcomes).filter { $0.1 == .layoutMissing }.map(\.0.write))
                for ((handle, write), outcome) in zip(chunk, outcomes) {
                    handle.state.withLock { state in
                        switch sessions.released(handle, &state, outcome, write.ticket) {
                        case .handedOver:
                            handedOver += 1
                        case .releaseInDoubt, .releaseNotRun:
                            failed.append(handle)
                        case .lost, .confirmed, .writeAgain, .unconfirmed:
                            break
                        }
                    }
                }
            }
            remaining = failed
        }
        if !remaining.isEmpty {
            sessions.logger.error(
                "shutdown: \(remaining.count) session(s) could not be written to the shared store; their changes since the last write are lost")
        }
        // Without this instance's heartbeat an asker no longer asks it (it takes a session this
        // instance could not release at once), so no request reaches the inbox from now on.
        store.endHeartbeat()
        answerLeftoverHandoverRequests()
        sessions.logger.info("shutdown: \(handedOver) session(s) handed over to the shared store")
    }

    /// Stops the listener and answers every handover request still in the inbox. An instance
    /// that asked while a session was still held here (its release had not landed yet) waits
    /// for an answer, and the listener takes one request at a time: unanswered, the asker would
    /// time out and answer 503 for a session that is free.
    private func answerLeftoverHandoverRequests() {
        listening.store(false, ordering: .sequentiallyConsistent)
        if listenerRunning.load(ordering: .sequentiallyConsistent) {
            // Woken from its wait, it finishes the request it may have taken and ends.
            store.wakeListener()
            _ = listenerEnded.wait(timeout: .now() + Self.wait + 2 * store.pool.commandTimeout + store.handoverWait)
        }
        let left: [(session: String, replyKey: String)]
        do {
            left = try store.takeHandoverRequests()
        } catch {
            sessions.logger.warning("shutdown: the handover requests left could not be read (\(error)); their askers time out and answer 503")
            return
        }
        // Released sessions are no longer here: each asker is told to look again and finds it
        // free; one this instance still holds (its release failed) gets one more try.
        for (session, replyKey) in left { handOver(session, replyKey: replyKey) }
    }

    /// Checks `condition` every millisecond while it holds, for at most `seconds`: a session
    /// asked for while shutdown releases it is answered once its release is done.
    private static func wait(atMost seconds: Double, while condition: () -> Bool) {
        let deadline = Monotonic.nanoseconds() + Int64(seconds * 1e9)
        while condition() && Monotonic.nanoseconds() < deadline { usleep(1_000) }
    }
}
