import Synchronization
import ViewportRedis

/// The shared store's operations, typed: layouts by id, and a session's record (acquire, write,
/// renew, release, delete) through ``StoreScripts``, on a ``RedisClient`` (one server's pool, or
/// a cluster's client). Every call is bounded by
/// the pool's timeouts and reports a failure as ``StoreFailure``; each round trip is timed in the
/// metrics and updates the store's health.
final class RedisStateStore: Sendable {
    let pool: any RedisClient
    let keys: StoreKeys
    /// This process' instance id (random per start), in leases and heartbeats.
    let instance: String
    /// Lease length, and how long a session's and a layout's records live without a write.
    let leaseMilliseconds: Int64
    let sessionMilliseconds: Int64
    let layoutMilliseconds: Int64
    /// How long an asker waits for an owner to hand a session over.
    let handoverWait: Double
    /// Handles reserved per step.
    let handleBlock: Int
    let metrics: ServiceMetrics
    let health: StoreHealth
    /// How often each instance's writer runs (`store.flushInterval`, seconds).
    let flushInterval: Double
    /// How soon a live owner is heard from again once the store answers after an outage (its
    /// writer's next round after the pool's fail-fast interval, plus a round trip): during the
    /// grace after an outage a session whose owner is not back by then is taken.
    let comebackMilliseconds: Int64

    init(
        pool: any RedisClient, keys: StoreKeys, instance: String, leaseMilliseconds: Int64, sessionMilliseconds: Int64,
        layoutMilliseconds: Int64, handoverWait: Double, handleBlock: Int, metrics: ServiceMetrics, health: StoreHealth,
        flushInterval: Double
    ) {
        self.flushInterval = flushInterval
        self.comebackMilliseconds = Int64(((flushInterval + pool.retryInterval + pool.commandTimeout) * 1000).rounded(.up))
        self.pool = pool
        self.keys = keys
        self.instance = instance
        self.leaseMilliseconds = leaseMilliseconds
        self.sessionMilliseconds = sessionMilliseconds
        self.layoutMilliseconds = layoutMilliseconds
        self.handoverWait = handoverWait
        self.handleBlock = handleBlock
        self.metrics = metrics
        self.health = health
        self.liveness = Mutex(CellLiveness(cellCount: StoreKeys.cellCount, leaseNanoseconds: leaseMilliseconds * 1_000_000))
    }

    /// A round trip, timed and counted. An error reply that says the store refuses this client
    /// (``refusal(in:)``) fails it like a lost connection.
    private func timed<R>(_ operation: String, refusalsFail: Bool = true, _ body: () throws(RedisError) -> R) throws(StoreFailure) -> R {
        let started = Monotonic.nanoseconds()
        do throws(RedisError) {
            let result = try body()
            if refusalsFail, let refusal = Self.refusal(in: result) { throw RedisError.server(refusal) }
            metrics.recordStore(operation, nanoseconds: Monotonic.nanoseconds() - started, failed: false)
            return result
        } catch {
            metrics.recordStore(operation, nanoseconds: Monotonic.nanoseconds() - started, failed: true)
            if Self.isRefusal(error) {
                health.recordFailure("\(operation): \(error)")
            } else if isOneServer {
                // On a cluster one call reaches one shard: its failure says nothing of the
                // others (the writer's round notes a cluster that answers nothing at all).
                noteUnanswered(error, operation: operation, sentAt: started)
            }
            throw StoreFailure(operation: operation, error: error)
        }
    }

    /// A round trip sent at `sentAt` got no answer (or no connection): the store may be cut off
    /// from this instance since then. A pool failing fast tried nothing.
    private func noteUnanswered(_ error: RedisError, operation: String, sentAt: Int64) {
        guard error.brokeTheConnection else { return }
        health.recordUnanswered("\(operation): \(error)")
        if case .unavailable = error { return }
        health.recordLostReply(sentAt: sentAt)
    }

    /// Error replies that mean the store will not serve this client until someone acts (a
    /// password, an ACL, memory, a failover), whatever the command: `NOAUTH`, `WRONGPASS`,
    /// `NOPERM`, `OOM`, `READONLY` (a replica), `MASTERDOWN`, `LOADING`, `MISCONF`.
    static let refusalCodes = ["NOAUTH", "WRONGPASS", "NOPERM", "OOM", "READONLY", "MASTERDOWN", "LOADING", "MISCONF"]

    /// Whether an error reply's message is a refusal.
    static func isRefusal(_ message: String) -> Bool {
        let code = message.prefix { $0 != " " }
        if refusalCodes.contains(where: { $0 == code }) { return true }
        // A command a script calls and the ACL forbids: Redis 7.0 answers `ERR The user
        // executing the script can't run this command…`, later versions `NOPERM …`.
        return code == "ERR" && (message.contains("can't run this command") || message.contains("no permissions"))
    }

    /// The message of the first refusal in a reply (or a pipeline's replies), nil when none.
    static func refusal<R>(in result: R) -> String? {
        func check(_ reply: RedisReply) -> String? {
            guard case .error(let message) = reply, isRefusal(message) else { return nil }
            return message
        }
        if let reply = result as? RedisReply { return check(reply) }
        if let replies = result as? [RedisReply] { return replies.lazy.compactMap(check).first }
        return nil
    }

    private static func isRefusal(_ error: RedisError) -> Bool {
        if case .server(let message) = error { return isRefusal(message) }
        return false
    }

    // MARK: Layouts

    func putLayout(id: String, bytes: [UInt8]) throws(StoreFailure) {
        let reply = try timed("layout_put") { () throws(RedisError) in
            try pool.send(RedisCommand("SET", keys.layout(id), bytes, "PX", layoutMilliseconds))
        }
        if case .error(let message) = reply { throw StoreFailure(operation: "layout_put", error: .server(message)) }
    }

    /// Writes a layout the store does not have yet (`SET NX`); false when it has one under `id`
    /// (left as it is: the caller refreshes its expiry).
    func addLayout(id: String, bytes: [UInt8]) throws(StoreFailure) -> Bool {
        let reply = try timed("layout_put") { () throws(RedisError) in
            try pool.send(RedisCommand("SET", keys.layout(id), bytes, "PX", layoutMilliseconds, "NX"))
        }
        if case .error(let message) = reply { throw StoreFailure(operation: "layout_put", error: .server(message)) }
        return reply != .null
    }

    /// Pushes back a stored layout's expiry; false when the store does not have it.
    func refreshLayout(id: String) throws(StoreFailure) -> Bool {
        let reply = try timed("layout_refresh") { () throws(RedisError) in
            try pool.send(RedisCommand("PEXPIRE", keys.layout(id), layoutMilliseconds))
        }
        return reply.integer == 1
    }

    func getLayout(id: String) throws(StoreFailure) -> [UInt8]? {
        let reply = try timed("layout_get") { () throws(RedisError) in try pool.send(RedisCommand("GET", keys.layout(id))) }
        switch reply {
        case .string(let bytes): return bytes
        case .null: return nil
        default: throw StoreFailure(operation: "layout_get", error: .unexpected("\(reply)"))
        }
    }

    // MARK: Sessions

    /// When the instance's heartbeat key was last renewed, in milliseconds ago (nil: it has
    /// none: the instance is gone).
    func heardFrom(_ instance: String) throws(StoreFailure) -> Int64? {
        let reply = try timed("exists") { () throws(RedisError) in try pool.send(RedisCommand("PTTL", keys.instance(instance))) }
        guard let left = reply.integer, left >= 0 else { return nil }
        return max(0, leaseMilliseconds - left)
    }

    /// Whether the store has the session (a deleted one's tombstone has no snapshot), or may have
    /// lost it while an owner still holds it: during a grace, or before the first heartbeat
    /// after the store lost its keys (``StoreScripts/heartbeat``). Then the request goes on to
    /// ``acquire(_:replyKey:)``, which answers `.outage` (503), not a 404 for a live session.
    func sessionExists(_ id: String) throws(StoreFailure) -> Bool {
        let replies = try timed("exists") { () throws(RedisError) in
            try pool.pipeline([
                RedisCommand("HEXISTS", keys.session(id), "snap"), RedisCommand("EXISTS", keys.beat(of: id)),
                RedisCommand("PTTL", keys.grace(of: id)),
            ])
        }
        guard replies.count == 3 else { throw StoreFailure(operation: "exists", error: .unexpected("\(replies)")) }
        return replies[0].integer == 1 || replies[1].integer == 0 || (replies[2].integer ?? -2) > 0
    }

    /// Which cells this instance beats, and what it knows of each.
    private let liveness: Mutex<CellLiveness>

    enum Acquisition: Equatable {
        /// No such session in the store.
        case missing
        /// Taken: the snapshot, at `epoch`; handles up to `reservedBefore` may have been handed
        /// out before, up to `reservedBefore + handleBlock` are this owner's.
        case acquired(epoch: Int64, reservedBefore: Int, version: UInt64, snapshot: [UInt8], stolen: Bool)
        /// A live instance owns it; it was asked to hand it over (answer on the reply key).
        case owned(by: String, leaseMillisecondsLeft: Int64)
        /// Every instance lost the store a moment ago and its owner did not release it: not
        /// taken, so that the owner can write back what it answered meanwhile (for
        /// `millisecondsLeft`; ``StoreScripts/heartbeat``).
        case outage(millisecondsLeft: Int64)
    }

    /// A silence of every instance's heartbeats this long means the store was unreachable for all
    /// (``StoreScripts/heartbeat``): half a lease, the shortest outage after which an owner's
    /// lease can have lapsed (leases are renewed every eighth of one).
    var outageGapMilliseconds: Int64 { max(1, leaseMilliseconds / 2) }

    func acquire(_ id: String, replyKey: String) throws(StoreFailure) -> Acquisition {
        let sentAt = Monotonic.nanoseconds()
        let reply = try timed("acquire") { () throws(RedisError) in
            try pool.send(.evalsha(
                StoreScripts.acquire,
                keys: [keys.session(id), keys.lease(id), keys.beat(of: id), keys.grace(of: id), keys.seen(of: id), keys.pulse(of: id)],
                arguments: [instance, leaseMilliseconds, handleBlock, comebackMilliseconds]))
        }
        guard let fields = reply.array, let kind = fields.first?.text else {
            throw StoreFailure(operation: "acquire", error: .unexpected("\(reply)"))
        }
        switch kind {
        case "missing":
            return .missing
        case "wait" where fields.count == 3:
            let owner = fields[1].text ?? "?"
            // The request, in the owner's inbox (a key of its own slot: not in the script).
            let inbox = keys.inbox(owner)
            let pushed = try timed("acquire") { () throws(RedisError) in
                try pool.pipeline([RedisCommand("RPUSH", inbox, id + " " + replyKey), RedisCommand("PEXPIRE", inbox, 2 * leaseMilliseconds)])
            }
            if let message = pushed.lazy.compactMap(\.errorMessage).first {
                throw StoreFailure(operation: "acquire", error: .server(message))
            }
            return .owned(by: owner, leaseMillisecondsLeft: fields[2].integer ?? leaseMilliseconds)
        case "outage" where fields.count == 2:
            liveness.withLock { $0.waiting(StoreKeys.cellIndex(of: id), sentAt: sentAt) }
            return .outage(millisecondsLeft: fields[1].integer ?? leaseMilliseconds)
        case "acquired" where fields.count == 7:
            guard let epoch = fields[1].integer, let before = fields[2].integer, let version = fields[3].integer,
                let snapshot = fields[4].bytes, let stolen = fields[5].integer, let storeTime = fields[6].integer
            else { throw StoreFailure(operation: "acquire", error: .unexpected("\(reply)")) }
            liveness.withLock { $0.acquired(StoreKeys.cellIndex(of: id), storeTime: storeTime, sentAt: sentAt) }
            return .acquired(epoch: epoch, reservedBefore: Int(before), version: UInt64(max(0, version)), snapshot: snapshot, stolen: stolen == 1)
        default:
            throw StoreFailure(operation: "acquire", error: .unexpected("\(reply)"))
        }
    }

    /// Waits up to `handoverWait` for an owner's answer on `replyKey`: true when it released the
    /// session.
    func awaitHandover(replyKey: String) throws(StoreFailure) -> Bool {
        let reply = try timed("handover_wait") { () throws(RedisError) in
            try pool.send(RedisCommand("BLPOP", replyKey, String(handoverWait)), timeout: handoverWait + pool.commandTimeout)
        }
        return reply.array?.last?.text == "released"
    }

    /// One write of a session's state.
    struct Write {
        var session: String
        var ticket: SessionOwnership.WriteTicket
        var snapshot: [UInt8]
        /// The layouts the snapshot names (their expiry moves with the session's).
        var layouts: [String]
        /// Release the session after writing it; with a reply key (a whole key, from
        /// ``StoreKeys/reply(_:)``), tell the asker.
        var release: Bool = false
        var replyKey: String? = nil
    }

    enum Outcome: Equatable {
        case ok
        /// A newer owner has it (or it was deleted): this instance must drop its copy.
        case lost
        /// The server lost the record (restarted without persistence): write it again.
        case missing
        /// Written, but the server lost a layout the session names: write that again.
        case layoutMissing
        /// No answer: it may or may not have run (try again).
        case failed
        /// Not run: not sent (the store is known to be unreachable) or refused with an error.
        case unsent
    }

    /// A lease to renew: the session, the epoch it is held at, whether it was read since the
    /// last renewal (its record's and its layouts' expiry move then), the layouts it names.
    typealias Renewal = (session: String, epoch: Int64, touched: Bool, layouts: [String])

    /// Whether the store is known to be one server (not a cluster): a script may then touch keys
    /// of several cells (a cluster runs a script on one slot only).
    private var isOneServer: Bool {
        if pool is RedisPool { return true }
        return (pool as? RedisClusterClient)?.isCluster == false
    }

    /// Writes (and releases) sessions in one pipeline. A failed round trip fails them all (on a
    /// cluster: the writes of the shard that failed).
    func write(_ writes: [Write], operation: String = "write") -> [Outcome] {
        round(writes: writes, operation: operation).writes
    }

    /// Releases idle sessions (``Write/release``) in one pipeline, their records to expire in
    /// `expiresIn` ms (what is left of their idle timeout: a parked session is gone when it would
    /// have been had it stayed held).
    func park(_ writes: [Write], expiresIn: Int64) -> [Outcome] {
        round(heartbeat: false, forceBeats: false, writes: writes, renewals: [], operation: "park", sessionMilliseconds: expiresIn).writes
    }

    /// Renews leases in one pipeline.
    func renew(_ renewals: [Renewal]) -> [Outcome] {
        round(renewals: renewals, operation: "renew").renewals
    }

    /// One round trip of the writer: the heartbeat (this instance's key; its beats in the cells
    /// it may hold leases in, when an eighth of a lease went by since the last that all got
    /// through, and in a cell it begins to hold one in, before the write; the coarse check of
    /// every cell every few leases: ``CellLiveness``), the writes
    /// (one script call per cell) and the renewals, and the expiry of every layout they name,
    /// once per layout. A layout the store no longer has makes the outcome of the writes and
    /// renewals naming it ``Outcome/layoutMissing``.
    func round(heartbeat: Bool = false, writes: [Write] = [], renewals: [Renewal] = [], operation: String = "write")
        -> (writes: [Outcome], renewals: [Outcome])
    {
        let result = round(heartbeat: heartbeat, forceBeats: false, writes: writes, renewals: renewals, operation: operation)
        return (result.writes, result.renewals)
    }

    /// ``round(heartbeat:writes:renewals:operation:)``, with every beat and check now
    /// (`forceBeats`), and whether the heartbeat got an answer; the writes' records expire in
    /// `sessionMilliseconds` (default: the idle timeout and a lease) when they renew or release.
    private func round(
        heartbeat: Bool, forceBeats: Bool, writes: [Write], renewals: [Renewal], operation: String, sessionMilliseconds: Int64? = nil
    ) -> (writes: [Outcome], renewals: [Outcome], answered: Bool) {
        guard heartbeat || !writes.isEmpty || !renewals.isEmpty else { return ([], [], false) }
        var commands: [RedisCommand] = []
        let sentAt = Monotonic.nanoseconds()
        let leasing = writes.filter { !$0.release }.map(\.session) + renewals.map(\.session)
        let (beats, checks, due, coarse) = liveness.withLock { cells in
            cells.plan(now: sentAt, heartbeat: heartbeat, force: forceBeats, writing: leasing.map(StoreKeys.cellIndex(of:)))
        }
        if heartbeat || !leasing.isEmpty { commands.append(RedisCommand("SET", keys.instance(instance), "1", "PX", leaseMilliseconds)) }
        let firstBeat = commands.count
        commands += beatCommands(beats)
        let firstCheck = commands.count
        commands += checkCommands(checks)
        let heartbeatCount = commands.count
        // The writes, then the renewals, one script call per cell on a cluster, one in all on one
        // server (``StoreScripts/write``, ``StoreScripts/renew``): (command, indices of its
        // writes or renewals).
        var writeCalls: [(command: Int, members: [Int])] = []
        for members in scriptCalls(writes.map(\.session)) {
            var keyList: [any RedisArgument] = []
            var arguments: [any RedisArgument] = [instance, leaseMilliseconds, sessionMilliseconds ?? self.sessionMilliseconds]
            for w in members.map({ writes[$0] }) {
                keyList += [keys.session(w.session), keys.lease(w.session), w.replyKey ?? keys.reply("none", session: w.session)]
                arguments += [
                    w.ticket.epoch, w.ticket.version, w.snapshot, w.ticket.handleLimit, w.ticket.renews ? "1" : "0",
                    w.release ? "release" : "write", w.replyKey == nil ? "0" : "1",
                ]
            }
            writeCalls.append((commands.count, members))
            commands.append(.evalsha(StoreScripts.write, keys: keyList, arguments: arguments))
        }
        var renewalCalls: [(command: Int, members: [Int])] = []
        for members in scriptCalls(renewals.map(\.session)) {
            var keyList: [any RedisArgument] = []
            var arguments: [any RedisArgument] = [instance, leaseMilliseconds]
            for r in members.map({ renewals[$0] }) {
                keyList += [keys.session(r.session), keys.lease(r.session)]
                arguments += [r.epoch, r.touched ? self.sessionMilliseconds : 0]
            }
            renewalCalls.append((commands.count, members))
            commands.append(.evalsha(StoreScripts.renew, keys: keyList, arguments: arguments))
        }
        // Each layout's expiry once, however many sessions name it, with the writes that renew
        // their session's lease (every eighth of a lease) or release it, and the renewals: a
        // layout lives for many idle timeouts, so pushing it back at every flush would only cost.
        var layoutIDs: [String] = []
        var seen = Set<String>()
        let refreshing = writes.lazy.filter { $0.ticket.renews || $0.release }.flatMap(\.layouts)
        for id in refreshing + renewals.flatMap(\.layouts) where seen.insert(id).inserted { layoutIDs.append(id) }
        let firstLayout = commands.count
        commands += layoutIDs.map { RedisCommand("PEXPIRE", keys.layout($0), layoutMilliseconds) }

        if heartbeat { health.heartbeatSent(at: sentAt) }
        // Each command's reply, or why it got none: on a cluster a shard that fails (a primary
        // failing over) fails the writes and renewals of its cells only.
        let results = pool.pipelineResults(commands)
        let failures = results.map { result -> RedisError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        let replies = results.map { result -> RedisReply in
            if case .success(let reply) = result { return reply }
            return .null
        }
        metrics.recordStore(operation, nanoseconds: Monotonic.nanoseconds() - sentAt, failed: failures.contains { $0 != nil })
        if let error = failures.lazy.compactMap({ $0 }).first, failures.allSatisfy({ $0 != nil }), isOneServer || heartbeat {
            // No part of the store answered (on a cluster: not one shard of the writer's round,
            // which beats every cell this instance holds leases in): as any round trip without an
            // answer.
            noteUnanswered(error, operation: operation, sentAt: sentAt)
            if heartbeat { health.heartbeatEnded(sentAt: sentAt, answered: false) }
            let outcome: Outcome = Self.mayHaveRun(error) ? .failed : .unsent
            return (Array(repeating: outcome, count: writes.count), Array(repeating: outcome, count: renewals.count), false)
        }
        if let refusal = Self.refusal(in: replies) { health.recordFailure("\(operation): \(refusal)") }
        /// A beat's or a check's answer: a script's `ok`, or a plain command's 1 (found) or 0.
        func answer(_ command: Int) -> CellLiveness.Answer {
            guard failures[command] == nil else { return .failed }
            if replies[command] == .integer(0) { return .absent }
            return replies[command] == .integer(1) || replies[command].text == "ok" ? .present : .failed
        }
        let answered = (0..<heartbeatCount).contains { failures[$0] == nil && replies[$0].errorMessage == nil }
        if heartbeat { health.heartbeatEnded(sentAt: sentAt, answered: answered) }
        liveness.withLock { cells in
            cells.record(
                sentAt: sentAt, beats: beats.enumerated().map { ($0.element.cell, answer(firstBeat + $0.offset)) }, due: due,
                checks: checks.enumerated().map { ($0.element.cell, answer(firstCheck + $0.offset)) }, coarse: coarse)
        }
        var missing = Set<String>()
        for (offset, id) in layoutIDs.enumerated() where failures[firstLayout + offset] == nil && replies[firstLayout + offset].integer == 0 {
            missing.insert(id)
        }
        func outcome(_ command: Int, layouts: [String]) -> Outcome {
            if let error = failures[command] { return Self.mayHaveRun(error) ? .failed : .unsent }
            let reply = replies[command]
            return outcome(reply, layouts: layouts)
        }
        func outcome(_ reply: RedisReply, layouts: [String]) -> Outcome {
            switch reply.text {
            case "ok": return layouts.contains(where: missing.contains) ? .layoutMissing : .ok
            case "lost": return .lost
            case "missing": return .missing
            default:
                // A refusal stops a script before its first write (`OOM`, `NOPERM`); any
                // other error reply may have stopped it midway.
                if case .error(let message) = reply, Self.isRefusal(message) { return .unsent }
                return .failed
            }
        }
        /// Each member's outcome from its call's reply: one answer per member, or the call's
        /// failure for all (a call that stopped midway leaves them failed: those before ran).
        func outcomes(of calls: [(command: Int, members: [Int])], count: Int, layouts: (Int) -> [String]) -> [Outcome] {
            var result = Array(repeating: Outcome.failed, count: count)
            for call in calls {
                let reply = replies[call.command]
                if failures[call.command] != nil {
                    for index in call.members { result[index] = outcome(call.command, layouts: []) }
                } else if let answers = reply.array, answers.count == call.members.count {
                    for (answer, index) in zip(answers, call.members) { result[index] = outcome(answer, layouts: layouts(index)) }
                } else if call.members.count == 1 {
                    result[call.members[0]] = outcome(reply, layouts: layouts(call.members[0]))
                }
            }
            return result
        }
        let writeOutcomes = outcomes(of: writeCalls, count: writes.count) { writes[$0].layouts }
        let renewalOutcomes = outcomes(of: renewalCalls, count: renewals.count) { renewals[$0].layouts }
        liveness.withLock { cells in
            for (w, result) in zip(writes, writeOutcomes) where !w.release && [.ok, .layoutMissing, .missing].contains(result) {
                cells.leased(StoreKeys.cellIndex(of: w.session), sentAt: sentAt)
            }
            for (r, result) in zip(renewals, renewalOutcomes) where [.ok, .layoutMissing].contains(result) {
                cells.leased(StoreKeys.cellIndex(of: r.session), sentAt: sentAt)
            }
        }
        return (writeOutcomes, renewalOutcomes, answered)
    }

    /// The script calls a round makes for `sessions` (indices into it): one per cell on a
    /// cluster (a script runs on one slot), one in all on one server (a call costs more than
    /// the few commands each session's part runs).
    /// - Complexity: O(sessions).
    private func scriptCalls(_ sessions: [String]) -> [[Int]] {
        guard !sessions.isEmpty else { return [] }
        if isOneServer { return [Array(sessions.indices)] }
        var byCell: [Int: Int] = [:]
        var calls: [[Int]] = []
        for (index, id) in sessions.enumerated() {
            let cell = StoreKeys.cellIndex(of: id)
            if let call = byCell[cell] {
                calls[call].append(index)
            } else {
                byCell[cell] = calls.count
                calls.append([index])
            }
        }
        return calls
    }

    func delete(_ id: String, epoch: Int64) throws(StoreFailure) -> Outcome {
        let reply = try timed("delete") { () throws(RedisError) in
            try pool.send(.evalsha(StoreScripts.delete, keys: [keys.session(id), keys.lease(id)], arguments: [instance, epoch, sessionMilliseconds]))
        }
        return reply.text == "ok" ? .ok : .lost
    }

    /// Whether a command that failed with `error` may have reached the store and run: anything
    /// but a connection that was never made (or a pool failing fast) and a refusal.
    static func mayHaveRun(_ error: RedisError) -> Bool {
        switch error {
        case .connect, .unavailable, .crossSlot: return false
        case .server(let message): return !isRefusal(message)
        case .io, .closed, .protocolError, .unexpected: return true
        }
    }

    enum Reclaim: Equatable {
        case ok(epoch: Int64)
        case lost
        case missing
        case failed
    }

    /// Takes back sessions whose release got no answer (``StoreScripts/reclaim``), in one
    /// pipeline: (session, the epoch the release named).
    func reclaim(_ sessions: [(session: String, epoch: Int64)]) -> [Reclaim] {
        guard !sessions.isEmpty else { return [] }
        let commands = sessions.map { r in
            RedisCommand.evalsha(
                StoreScripts.reclaim, keys: [keys.session(r.session), keys.lease(r.session)],
                arguments: [instance, r.epoch, leaseMilliseconds])
        }
        do {
            let replies = try timed("reclaim") { () throws(RedisError) in try pool.pipeline(commands) }
            return replies.map { reply in
                guard let fields = reply.array, let kind = fields.first?.text else { return .failed }
                switch kind {
                case "ok": return fields.count == 2 ? fields[1].integer.map { .ok(epoch: $0) } ?? .failed : .failed
                case "lost": return .lost
                case "missing": return .missing
                default: return .failed
                }
            }
        } catch {
            return Array(repeating: .failed, count: commands.count)
        }
    }

    // MARK: Instances

    /// This instance is alive for another lease: its heartbeat key, its beat in every cell it may
    /// hold leases in, and the coarse check of every cell (``CellLiveness``), now, each with its
    /// script. The writer sends the same in its rounds
    /// (``round(heartbeat:forceBeats:writes:renewals:operation:)``), each part when it is due,
    /// mostly as plain commands.
    func heartbeat() throws(StoreFailure) {
        guard round(heartbeat: true, forceBeats: true, writes: [], renewals: [], operation: "heartbeat").answered else {
            throw StoreFailure(operation: "heartbeat", error: .unavailable("no part of the store answered"))
        }
    }

    /// This instance's beat in each of `beats`' cells: the script (``StoreScripts/heartbeat``), or
    /// a plain `PEXPIRE` of the cell's pulse (``CellLiveness``).
    private func beatCommands(_ beats: [CellLiveness.Beat]) -> [RedisCommand] {
        let heard = liveness.withLock { cells in beats.map { cells.cells[$0.cell].heard } }
        return zip(beats, heard).map { beat, heard in
            let cell = StoreKeys.cell(beat.cell)
            guard beat.full else { return RedisCommand("PEXPIRE", keys.pulse(cell: cell), outageGapMilliseconds) }
            return .evalsha(
                StoreScripts.heartbeat, keys: [keys.beat(cell: cell), keys.grace(cell: cell), keys.seen(cell: cell), keys.pulse(cell: cell)],
                arguments: [leaseMilliseconds, outageGapMilliseconds, heard ? "1" : "0", instance, beat.floor])
        }
    }

    /// The coarse check of each of `checks`' cells: the script (``StoreScripts/cellCheck``), or a
    /// plain `EXISTS` of the cell's `beat`.
    private func checkCommands(_ checks: [CellLiveness.Check]) -> [RedisCommand] {
        let heard = liveness.withLock { cells in checks.map { cells.cells[$0.cell].heard } }
        return zip(checks, heard).map { check, heard in
            let cell = StoreKeys.cell(check.cell)
            guard check.full else { return RedisCommand("EXISTS", keys.beat(cell: cell)) }
            return .evalsha(StoreScripts.cellCheck, keys: [keys.beat(cell: cell), keys.grace(cell: cell)], arguments: [leaseMilliseconds, heard ? "1" : "0"])
        }
    }

    /// This instance is gone (after its sessions were released): its heartbeat key, and its
    /// heartbeat in every cell (during a grace it is no longer waited for).
    func endHeartbeat() {
        let cells = (0..<StoreKeys.cellCount).map { RedisCommand("HDEL", keys.seen(cell: StoreKeys.cell($0)), instance) }
        _ = try? timed("heartbeat") { () throws(RedisError) in try pool.pipeline([RedisCommand("DEL", keys.instance(instance))] + cells) }
    }

    /// Waits up to `timeout` seconds (on a connection it holds meanwhile) for the next handover
    /// request to this instance: (session, reply key).
    func nextHandoverRequest(timeout: Double) throws(StoreFailure) -> (session: String, replyKey: String)? {
        let reply: RedisReply
        do {
            reply = try pool.send(RedisCommand("BLPOP", keys.inbox(instance), String(timeout)), timeout: timeout + pool.commandTimeout)
        } catch {
            health.recordUnanswered("inbox: \(error)")
            throw StoreFailure(operation: "inbox", error: error)
        }
        return reply.array?.last?.text.flatMap(Self.handoverRequest)
    }

    /// An inbox entry as a handover request: `<session> <reply key>` (nil for anything else,
    /// such as the marker ``wakeListener()`` pushes).
    static func handoverRequest(_ entry: String) -> (session: String, replyKey: String)? {
        let parts = entry.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        return (parts[0], parts[1])
    }

    /// Wakes this instance's listener from its wait with an entry that is not a request.
    func wakeListener() {
        _ = try? timed("inbox") { () throws(RedisError) in try pool.send(RedisCommand("RPUSH", keys.inbox(instance), "wake")) }
    }

    /// Takes every request left in this instance's inbox at once, without waiting.
    func takeHandoverRequests() throws(StoreFailure) -> [(session: String, replyKey: String)] {
        let inbox = keys.inbox(instance)
        let replies = try timed("inbox") { () throws(RedisError) in
            try pool.pipeline([RedisCommand("MULTI"), RedisCommand("LRANGE", inbox, 0, -1), RedisCommand("DEL", inbox), RedisCommand("EXEC")])
        }
        guard let entries = replies.last?.array?.first?.array else {
            throw StoreFailure(operation: "inbox", error: .unexpected("\(replies)"))
        }
        return entries.compactMap { $0.text.flatMap(Self.handoverRequest) }
    }

    /// A new unguessable reply key.
    static func nonce() -> String { SessionStore.newID() }
}

/// The shared store did not answer (or answered nonsense): the request that needed it answers
/// 503 with `Retry-After`.
struct StoreFailure: Error, Sendable, CustomStringConvertible {
    var operation: String
    var error: RedisError

    var description: String { "store \(operation): \(error)" }

    var problem: Problem { .unavailable("the shared store is unavailable (\(operation): \(error)); retry shortly") }
}
