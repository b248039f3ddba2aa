import Foundation
import Testing
import ViewportRedis
@testable import ViewportService
import ViewportTestSupport

/// Several instances sharing a real redis-server: layouts and sessions are known everywhere, a
/// session moves to whichever instance gets its request, and nothing a client saw is lost.
@Suite(.serialized)
struct SharedStoreTests {
    @Test func aLayoutPostedOnOneInstanceOpensSessionsOnAnother() throws {
        try withCluster(3) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect(), c = try cluster[2].connect()
            let items = gridItems(rows: 40, columns: 3)
            let layout = try a.postLayout(layoutJSON(items))
            let (_, opened) = try b.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#)
            #expect(opened["layout"] as? String == layout)
            let info = try c.get("/v1/layouts/\(layout)")
            #expect(info.status == 200 && info.json["items"] as? Int == items.count, "\(info.text)")
            #expect(try c.get("/v1/layouts/0123456789abcdef0123456789abcdef").status == 404)
            // Posting it again anywhere is the same layout.
            #expect(try c.post("/v1/layouts", layoutJSON(items)).status == 200)
            // Already stored, also for an instance that never saw it: 200, not 201.
            // A reuse identifier no other test or earlier run posts: an external store keeps layouts.
            let other = layoutJSON(listItems(30, reuses: ["row-\(UInt64.random(in: 0...UInt64.max))"]))
            #expect(try a.post("/v1/layouts", other).status == 201)
            #expect(try b.post("/v1/layouts", other).status == 200)
            #expect(try b.post("/v1/layouts", other).status == 200)
            #expect(try c.post("/v1/layouts", other).status == 200)
        }
    }

    @Test func aSessionOnlyReadKeepsItsLayoutInTheStore() throws {
        // An audit: the layout's expiry moved only with writes, so a session that was only read
        // (GETs on its owner) outlived its layout in the store, and answered 503 elsewhere.
        try withCluster(2, configure: { $0.sessions.idleTimeout = .seconds(2) }) { cluster in
            let a = try cluster[0].connect()
            let layout = try a.postLayout(layoutJSON(listItems(200)))
            let (id, _) = try a.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#)
            // The layout's record lives 2 × idle + lease = 6 s from its last write; read for 7 s.
            let started = Date()
            while Date().timeIntervalSince(started) < 7 {
                #expect(try a.state(id).int("seq") == 0)
                usleep(300_000)
            }
            let moved = try cluster[1].connect().get("/v1/sessions/\(id)")
            #expect(moved.status == 200, "\(moved.text)")
        }
    }

    @Test func aSessionHoppingAcrossThreeInstancesOnEveryUpdateFollowsEveryPlanRule() throws {
        try withCluster(3) { cluster in
            let clients = try (0..<3).map { try cluster[$0].connect() }
            let items = listItems(3000, height: 50, reuses: ["row", "ad", nil, "row"])
            var model = ClientModel(items: items, viewport: [375, 667])
            let (id, opened) = try clients[0].openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,667]}"#)
            model.open(opened.object("plan"))
            var rng = SystemRandomNumberGenerator()
            var y = 0.0
            for step in 1...150 {
                y = max(0, min(149_000, y + Double([-900, -120, -37, 0, 45, 130, 1100, 30_000].randomElement(using: &rng) ?? 0)))
                let client = clients[step % 3]
                let reply = try client.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(step)}"#)
                #expect(reply.status == 200, "step \(step) on instance \(step % 3): \(reply.text)")
                guard reply.status == 200 else { return }
                model.apply(reply.json, offset: [0, y])
            }
            // Any instance answers the same state.
            model.check(state: try clients[1].state(id))
            model.check(state: try clients[2].state(id))
        }
    }

    /// A session that edits its stack keeps its own layout version when it moves: the next
    /// instance makes the version again from the stored layout and the edits.
    @Test func anEditedSessionMovesWithItsLayoutVersion() throws {
        try withCluster(3) { cluster in
            let clients = try (0..<3).map { try cluster[$0].connect() }
            let messages = (1...40).map { #"{"id":"m\#($0)"}"# }.joined(separator: ",")
            let layout = #"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":[\#(messages)],"estimate":[375,80],"spacing":4}}]}"#
            let (id, _) = try clients[0].openSession(#"{"layout":\#(layout),"viewport":[375,667]}"#)
            var seq = 0
            var answers: [String] = []
            for step in 0..<12 {
                seq += 1
                let client = clients[step % 3]
                let reply: Reply
                if step % 2 == 0 {
                    let k = step + 1
                    reply = try client.send(
                        "PATCH", "/v1/sessions/\(id)/layout",
                        json: #"{"resize":[{"id":"m\#(k)","size":[375,\#(100 + 7 * k)]}],"insert":[{"at":"end","section":"chat","items":[{"id":"n\#(k)","size":[375,40]}]}],"anchor":"end","seq":\#(seq)}"#)
                } else {
                    reply = try client.update(id, #"{"offset":[0,\#(200 * step)],"seq":\#(seq)}"#)
                }
                #expect(reply.status == 200, "step \(step) on instance \(step % 3): \(reply.text)")
                answers.append(reply.text)
            }
            // Every instance has the same version of the layout, and the same state.
            let versions = try clients.map { try $0.get("/v1/sessions/\(id)/layout").text }
            #expect(Set(versions).count == 1, "\(versions)")
            #expect(versions[0].contains(#""id":"n11""#) && versions[0].contains(#""size":[375,177]"#), "\(versions[0])")
            let states = try clients.map { try $0.state(id) }
            #expect(states.map { $0.int("seq") } == [12, 12, 12])
            #expect(states.map { $0.int("edits") } == [6, 6, 6])
            // A retry of the last update on another instance answers the same plan.
            let retry = try clients[0].update(id, #"{"offset":[0,2200],"seq":12}"#)
            #expect(retry.text == answers[11], "\(retry.text)")
        }
    }

    /// A session that edits its stacks without end (a chat inserting and removing 20 messages)
    /// keeps a bounded snapshot in the store, and moves as quickly after 600 edits as after a
    /// few: its history folds into a checkpoint of its version (`EditHistory`). Before, the
    /// snapshot grew by ~1.3 KB a round (80 KB by the first check here, 400 KB by the last).
    @Test func aSessionThatEditsWithoutEndKeepsABoundedSnapshot() throws {
        try withCluster(2) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect()
            let messages = (0..<40).map { #"{"id":"m\#($0)","size":[375,\#(40 + $0 % 7 * 10)]}"# }.joined(separator: ",")
            let layout = #"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":[\#(messages)],"estimate":[375,60],"spacing":4}}]}"#
            let (id, _) = try a.openSession(#"{"layout":\#(layout),"viewport":[375,600],"buffer":50}"#)
            let before = try a.get("/v1/sessions/\(id)/layout").text
            var seq = 0
            var sizes: [Int] = []
            for round in 1...300 {
                let ids = (0..<20).map { #""r\#(round)n\#($0)""# }
                let items = ids.map { #"{"id":\#($0),"size":[375,50]}"# }.joined(separator: ",")
                seq += 1
                let inserted = try a.send("PATCH", "/v1/sessions/\(id)/layout", json: #"{"insert":[{"at":"end","section":"chat","items":[\#(items)]}],"seq":\#(seq)}"#)
                seq += 1
                let removed = try a.send("PATCH", "/v1/sessions/\(id)/layout", json: #"{"remove":[\#(ids.joined(separator: ","))],"seq":\#(seq)}"#)
                #expect(inserted.status == 200 && removed.status == 200, "round \(round): \(inserted.text) \(removed.text)")
                guard inserted.status == 200 && removed.status == 200 else { return }
                if round % 60 == 0 {
                    // To the other instance (it restores the session from the store) and back.
                    seq += 1
                    #expect(try b.update(id, #"{"offset":[0,\#(round % 300)],"seq":\#(seq)}"#).status == 200)
                    let size = try cluster.storeClient().send(RedisCommand("HSTRLEN", StoreKeys(prefix: "viewportd:").session(id), "snap")).integer
                    #expect(size != nil && size != 0)
                    sizes.append(Int(size ?? -1))
                    seq += 1
                    #expect(try a.update(id, #"{"offset":[0,0],"seq":\#(seq)}"#).status == 200)
                }
            }
            print("snapshots in the store every 120 edits: \(sizes) bytes")
            #expect(sizes.count == 5 && sizes.allSatisfy { $0 > 0 && $0 < 12_000 }, "\(sizes)")
            // Every inserted message was removed: the version is the posted layout again.
            #expect(try b.get("/v1/sessions/\(id)/layout").text == before)
            #expect(try b.state(id).int("edits") == 600)
        }
    }

    /// The owner hands a session over as soon as another instance asks for it: the asker does
    /// not sit out the owner's lease, nor the store timeout (which also bounds how long it waits
    /// for the owner's answer).
    @Test func aRequestForASessionAnotherInstanceOwnsIsHandedOverOnRequestNotAfterALease() throws {
        try withCluster(2) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect()
            let layout = try a.postLayout(layoutJSON(listItems(1000)))
            let id = try a.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#).id
            // Stored once (a flush), so that it can move.
            #expect(try a.update(id, #"{"offset":[0,10],"seq":1}"#).status == 200)
            usleep(150_000)
            var hops: [Double] = []
            for step in 2...41 {
                let client = step % 2 == 0 ? b : a
                let started = Date()
                let reply = try client.update(id, #"{"offset":[0,\#(step * 10)],"seq":\#(step)}"#)
                hops.append(Date().timeIntervalSince(started) * 1000)
                #expect(reply.status == 200, "step \(step): \(reply.text)")
            }
            hops.sort()
            let median = hops[hops.count / 2]
            print("handover latency: median \(String(format: "%.2f", median)) ms, max \(String(format: "%.2f", hops.last ?? 0)) ms over \(hops.count) hops")
            // Every hop was handed over by its owner on request (none taken after a lease ran
            // out or stolen from a silent owner): as many given as taken as hops, over both
            // instances. The owner counts its "given" just after it answers the asker: poll.
            func handovers(_ kind: String) throws -> Int {
                let name = #"viewportd_store_handovers_total{kind="\#(kind)"}"#
                return try [a, b].reduce(0) { $0 + Int(metric(name, in: try $1.get("/metrics").text) ?? 0) }
            }
            var counts = (given: 0, taken: 0)
            let counted = try eventually(within: 5) {
                counts = (try handovers("given"), try handovers("taken"))
                return counts.given == hops.count && counts.taken == hops.count
            }
            #expect(counted, "handovers over \(hops.count) hops: \(counts)")
            // And none sat out a timer. The speed target (10 ms on loopback) is a benchmark's to
            // check, on a release build (scripts/store-bench.py: 0.4 ms). Here, in a debug build
            // beside every other suite on a shared machine (median 44 ms at load 10-13), the bound
            // only tells a handover on request from one that waits for the store timeout (0.5 s
            // in TestCluster) or the lease (2 s): under half the shorter of the two.
            let store = cluster[0].server.configuration.store
            let bound = min(ServiceConfiguration.seconds(store.timeout), ServiceConfiguration.seconds(store.leaseTimeout)) * 1000 / 2
            #expect(median < bound, "median handover \(median) ms, bound \(bound) ms (half the store timeout or lease)")
        }
    }

    @Test func updatesSentToTwoInstancesAtOnceApplyEachSeqOnce() throws {
        try withCluster(2, configure: { $0.http.threads = 3 }) { cluster in
            let setup = try cluster[0].connect()
            let id = try setup.openSession(#"{"layout":\#(layoutJSON(listItems(500))),"viewport":[375,667]}"#).id
            #expect(try setup.update(id, #"{"offset":[0,5],"seq":1}"#).status == 200)
            usleep(150_000)
            let ports = [cluster[0].port, cluster[1].port]
            let bodies = Locked<[Int: Set<String>]>([:])
            let statuses = Locked<[Int: Int]>([:])
            let finished = onThreads(4) { t in
                guard let client = try? Client(HTTPTestClient.connect(port: ports[t % 2], timeout: 10), token: nil) else { return }
                var seq = 2
                while seq <= 60 {
                    guard let reply = try? client.update(id, #"{"offset":[0,\#(seq * 10 + t)],"seq":\#(seq)}"#) else { return }
                    statuses.withLock { $0[reply.status, default: 0] += 1 }
                    if reply.status == 200 {
                        _ = bodies.withLock { $0[seq, default: []].insert(reply.text) }
                        seq += 1
                    } else if reply.status == 409 {
                        let current = (try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])?["seq"] as? Int ?? seq
                        seq = max(seq, current)
                    } else if reply.status == 503 {
                        usleep(10_000)
                    } else {
                        return
                    }
                }
            }
            #expect(finished)
            #expect(Set(statuses.get.keys).isSubset(of: [200, 409, 503]), "\(statuses.get)")
            #expect(bodies.get.count == 59)
            #expect(bodies.get.values.allSatisfy { $0.count == 1 }, "a seq answered two different plans")
            let state = try setup.state(id)
            #expect(state.int("seq") == 60 && state.object("stats").int("updates") == 60)
            print("two instances at once: \(statuses.get)")
        }
    }

    @Test func updatesSentToThreeInstancesAtOnceAreAllApplied() throws {
        // Without seq, each instance's client sends as fast as it is answered: the session moves
        // on nearly every request. A request that lost the session to another instance's three
        // times in a row answered 503 (5 % of them); now every one is applied, once.
        try withCluster(3) { cluster in
            let setup = try cluster[0].connect()
            let id = try setup.openSession(#"{"layout":\#(layoutJSON(listItems(400, height: 50))),"viewport":[300,500],"buffer":0}"#).id
            let ports = [cluster[0].port, cluster[1].port, cluster[2].port]
            let statuses = Locked<[Int: Int]>([:])
            let answered = Locked<[(seq: Int, created: [Int])]>([])
            let finished = onThreads(3) { t in
                guard let client = try? Client(HTTPTestClient.connect(port: ports[t], timeout: 10), token: nil) else { return }
                var rng = SplitMix(seed: UInt64(t))
                for _ in 0..<40 {
                    guard let reply = try? client.update(id, #"{"offset":[0,\#(rng.next() % 500 * 37)]}"#) else { return }
                    statuses.withLock { $0[reply.status, default: 0] += 1 }
                    guard reply.status == 200 else { continue }
                    let plan = reply.json
                    let created = (plan["create"] as? [[String: Any]] ?? []).compactMap { $0["view"] as? Int }
                    answered.withLock { $0.append((plan.int("seq") ?? -1, created)) }
                }
            }
            #expect(finished)
            #expect(statuses.get == [200: 120], "\(statuses.get)")
            #expect(answered.get.map(\.seq).sorted() == Array(1...120))
            let created = answered.get.flatMap(\.created)
            #expect(Set(created).count == created.count, "a handle created twice")
            #expect(try setup.state(id).int("seq") == 120)
        }
    }

    @Test func aStoppedInstanceHandsEverySessionOverAndTheyContinueElsewhere() throws {
        try withCluster(2) { cluster in
            let a = try cluster[0].connect()
            let items = listItems(2000, height: 60, reuses: ["row", "ad"])
            let layout = try a.postLayout(layoutJSON(items))
            var models: [(id: String, model: ClientModel)] = []
            for k in 0..<12 {
                var model = ClientModel(items: items, viewport: [375, 667])
                let (id, opened) = try a.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#)
                model.open(opened.object("plan"))
                // Some never reach the store before the stop (updated just now).
                for step in 1...(k % 4 + 1) {
                    let y = Double(step * 700 + k)
                    let reply = try a.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(step)}"#)
                    #expect(reply.status == 200)
                    model.apply(reply.json, offset: [0, y])
                }
                models.append((id, model))
            }
            cluster[0].stop()
            let b = try cluster[1].connect()
            for (id, var model) in models {
                let y = 5000.0
                let reply = try b.update(id, #"{"offset":[0,5000],"seq":\#(model.seq + 1)}"#)
                #expect(reply.status == 200, "\(reply.text)")
                guard reply.status == 200 else { continue }
                model.apply(reply.json, offset: [0, y])
                model.check(state: try b.state(id))
            }
        }
    }

    @Test func aSessionAheadOfTheStoreAnswers409WithResyncAndAdoptsTheClientsViews() throws {
        try withCluster(2) { cluster in
            let a = try cluster[0].connect(), b = try cluster[1].connect()
            let items = listItems(1000, height: 50, reuses: ["row", "ad"])
            let (id, opened) = try a.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,667]}"#)
            var model = ClientModel(items: items, viewport: [375, 667])
            model.open(opened.object("plan"))
            for step in 1...3 {
                let reply = try a.update(id, #"{"offset":[0,\#(step * 400)],"seq":\#(step)}"#)
                model.apply(reply.json, offset: [0, Double(step * 400)])
            }
            // What the store has after seq 3 (version 4: opened, then three changes), saved as an
            // instance that died then would have left it.
            let key = StoreKeys(prefix: "viewportd:").session(id)
            let redis = try cluster.storeClient()
            #expect(try eventually { try redis.send(RedisCommand("HGET", key, "ver")).text == "4" })
            let stored = try redis.send(RedisCommand("HGET", key, "snap"))
            for step in 4...7 {
                let reply = try a.update(id, #"{"offset":[0,\#(step * 400)],"seq":\#(step)}"#)
                model.apply(reply.json, offset: [0, Double(step * 400)])
            }
            cluster[0].stop()
            // The instance "died" after seq 3 reached the store: put that record back.
            #expect(try redis.send(RedisCommand("HSET", key, "ver", "4", "snap", stored.bytes ?? [])) == .integer(0))
            let ahead = try b.update(id, #"{"offset":[0,3200],"seq":8}"#)
            let problem = ahead.problem(409)
            #expect(problem["seq"] as? Int == 3)
            #expect(problem["resync"] as? Bool == true)
            // Validation: an id not in the layout changes nothing.
            let bad = try b.post("/v1/sessions/\(id)/resync", #"{"seq":7,"offset":[0,2800],"visible":[{"id":"nope","view":1}]}"#)
            _ = bad.problem(422)
            #expect(bad.detail.contains("visible[0].id"), "\(bad.text)")
            #expect(try b.state(id).int("seq") == 3)
            // The client's real views.
            let visible = model.shown.map { #"{"id":"\#($0.key)","view":\#($0.value)}"# }.joined(separator: ",")
            let pool = model.pools.filter { !$0.value.isEmpty }.map { reuse, views in
                #""\#(reuse)":[\#(views.map { #"{"view":\#($0.view),"id":"\#($0.lastItem)"}"# }.joined(separator: ","))]"#
            }.joined(separator: ",")
            let resync = try b.post("/v1/sessions/\(id)/resync", #"{"seq":7,"offset":[0,2800],"visible":[\#(visible)],"pool":{\#(pool)}}"#)
            #expect(resync.status == 200, "\(resync.text)")
            #expect(resync.json.int("seq") == 7)
            #expect(Set(resync.json.ids("visible")) == Set(model.shown.keys))
            // The client continues at seq 8, with every plan rule checked against its real views;
            // new handles are above every handle it held.
            let highest = model.usedHandles.max() ?? 0
            for step in 8...20 {
                let y = Double(step * 330)
                let reply = try b.update(id, #"{"offset":[0,\#(number(y))],"seq":\#(step)}"#)
                #expect(reply.status == 200, "\(reply.text)")
                for entry in reply.json.entries("create") { #expect((entry.int("view") ?? 0) > highest) }
                model.apply(reply.json, offset: [0, y])
            }
        }
    }

    @Test func everyHandleAnsweredIsReservedInTheStoreFirst() throws {
        try withCluster(2) { cluster in
            let a = try cluster[0].connect(timeout: 20), b = try cluster[1].connect(timeout: 20)
            // Items without a reuse identifier: every entering item gets a new view, 1,500 per jump.
            let items = listItems(30_000, height: 10, reuses: [nil])
            let redis = try cluster.storeClient()
            let (id, opened) = try a.openSession(#"{"layout":\#(layoutJSON(items)),"viewport":[375,15000],"buffer":0}"#)
            func reserved() throws -> Int { Int(try redis.send(RedisCommand("HGET", StoreKeys(prefix: "viewportd:").session(id), "hwm")).text ?? "0") ?? 0 }
            var highest = opened.object("plan").entries("create").compactMap { $0.int("view") }.max() ?? 0
            #expect(highest == 1500)
            #expect(try reserved() >= highest, "the opening plan's handles are reserved before the 201")
            for step in 1...8 {
                let client = step % 3 == 0 ? b : a
                let reply = try client.update(id, #"{"offset":[0,\#(step * 15_000 % 285_000)],"seq":\#(step)}"#)
                #expect(reply.status == 200, "\(reply.text)")
                let created = reply.json.entries("create").compactMap { $0.int("view") }
                #expect(created.allSatisfy { $0 > highest }, "a handle used twice")
                highest = max(highest, created.max() ?? 0)
                // Answered handles never run ahead of the reserve a next owner would start above.
                let reserve = try reserved()
                #expect(reserve >= highest, "step \(step): handle \(highest) answered, \(reserve) reserved")
            }
            // A new owner starts above the previous owner's whole reserve: handles stay unique, not dense.
            #expect(highest > 1500 * 9)
        }
    }
}
