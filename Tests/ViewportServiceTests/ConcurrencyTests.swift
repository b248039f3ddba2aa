import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// Many connections at once: updates to one session are serialised, sessions are independent.
@Suite(.serialized, .tags(.live)) struct ConcurrencyTests {
    @Test func concurrentUpdatesToOneSessionAreSerialised() throws {
        try withService({ $0.http.threads = 4 }) { service in
            let setup = try service.connect()
            let session = try setup.openSession(#"{"layout":\#(layoutJSON(listItems(2000, height: 50, reuses: ["a", "b", nil]))),"viewport":[375,667]}"#).id
            let seqs = Locked<[Int]>([])
            let failures = Locked<[String]>([])
            let port = service.port
            let finished = onThreads(8) { t in
                do {
                    let client = Client(try HTTPTestClient.connect(port: port, timeout: 10), token: nil)
                    for i in 0..<50 {
                        let reply = try client.update(session, #"{"offset":[0,\#((t * 50 + i) * 37 % 90_000)],"phase":"dragging"}"#)
                        guard reply.status == 200, let seq = (try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])?["seq"] as? Int else {
                            failures.withLock { $0.append("\(reply.status) \(reply.text)") }
                            continue
                        }
                        seqs.withLock { $0.append(seq) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(finished)
            #expect(failures.get.isEmpty, "\(failures.get.prefix(3))")
            #expect(seqs.get.sorted() == Array(1...400))
            let state = try setup.state(session)
            #expect(state.object("stats").int("updates") == 400)
            #expect(state.int("seq") == 400)
            // The state is consistent: every visible item has a distinct view.
            let views = state.entries("visible").compactMap { $0.int("view") }
            #expect(Set(views).count == views.count)
        }
    }

    @Test func concurrentSeqUpdatesApplyEachSeqExactlyOnce() throws {
        // Every thread tries seq 1…100 in order; each seq is applied by exactly one, retries answer 200,
        // the rest 409.
        try withService({ $0.http.threads = 4 }) { service in
            let setup = try service.connect()
            let session = try setup.openSession(#"{"layout":\#(layoutJSON(listItems(500))),"viewport":[375,667]}"#).id
            let port = service.port
            let bodies = Locked<[Int: Set<String>]>([:])
            let statuses = Locked<[Int: Int]>([:])
            let finished = onThreads(6) { t in
                guard let client = try? Client(HTTPTestClient.connect(port: port, timeout: 10), token: nil) else { return }
                var seq = 1
                while seq <= 100 {
                    guard let reply = try? client.update(session, #"{"offset":[0,\#(seq * 10 + t)],"seq":\#(seq)}"#) else { return }
                    statuses.withLock { $0[reply.status, default: 0] += 1 }
                    if reply.status == 200 {
                        bodies.withLock { $0[seq, default: []].insert(reply.text) }
                        seq += 1
                    } else if reply.status == 409 {
                        let current = (try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])?["seq"] as? Int ?? seq
                        seq = max(seq, current)  // retry the current one: it answers the applied plan
                    } else {
                        return
                    }
                }
            }
            #expect(finished)
            #expect(Set(statuses.get.keys).isSubset(of: [200, 409]))
            // Every seq answered one plan only, whoever asked.
            #expect(bodies.get.count == 100)
            #expect(bodies.get.values.allSatisfy { $0.count == 1 })
            #expect(try setup.state(session).int("seq") == 100)
        }
    }

    @Test func manySessionsOpenedAndUpdatedFromSeveralThreadsStayConsistent() throws {
        try withService({ $0.http.threads = 4 }) { service in
            let setup = try service.connect()
            let items = gridItems(rows: 100, columns: 3, cell: 125)
            let layout = try setup.postLayout(layoutJSON(items))
            let port = service.port
            let opened = Locked<[(String, Double)]>([])
            let failures = Locked<[String]>([])
            let finished = onThreads(8) { t in
                do {
                    let client = Client(try HTTPTestClient.connect(port: port, timeout: 10), token: nil)
                    for i in 0..<25 {
                        let reply = try client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[375,667]}"#)
                        guard reply.status == 201, let id = (try? JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])?["session"] as? String else {
                            failures.withLock { $0.append("open \(reply.status)") }
                            continue
                        }
                        let y = Double((t * 25 + i) * 41 % 11_000)
                        let update = try client.update(id, #"{"offset":[0,\#(number(y))]}"#)
                        if update.status != 200 { failures.withLock { $0.append("update \(update.status)") } }
                        opened.withLock { $0.append((id, y)) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(finished)
            #expect(failures.get.isEmpty, "\(failures.get.prefix(3))")
            let sessions = opened.get
            #expect(sessions.count == 200)
            #expect(Set(sessions.map(\.0)).count == 200)
            for (id, y) in sessions {
                let state = try setup.state(id)
                #expect(state.int("seq") == 1)
                #expect(state.doubles("offset") == [0, y])
                #expect(state.ids("visible") == materialized(items, offset: [0, y], viewport: [375, 667], buffer: 20))
            }
            #expect(try setup.get("/v1/layouts/\(layout)").json.int("sessions") == 200)
        }
    }

    @Test func concurrentOpensRespectSessionsMax() throws {
        try withService({ c in
            c.sessions.max = 50
            c.http.threads = 4
        }) { service in
            let setup = try service.connect()
            let layout = try setup.postLayout(layoutJSON(listItems(10)))
            let port = service.port
            let statuses = Locked<[Int]>([])
            onThreads(8) { _ in
                guard let client = try? Client(HTTPTestClient.connect(port: port, timeout: 10), token: nil) else { return }
                for _ in 0..<15 {
                    if let reply = try? client.post("/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#) {
                        statuses.withLock { $0.append(reply.status) }
                    }
                }
            }
            #expect(statuses.get.count == 120)
            #expect(statuses.get.filter { $0 == 201 }.count == 50)
            #expect(statuses.get.filter { $0 == 429 }.count == 70)
            #expect(try setup.get("/v1/layouts/\(layout)").json.int("sessions") == 50)
        }
    }

    @Test func concurrentDeleteAndUpdatesNeverAnswer500() throws {
        try withService({ $0.http.threads = 4 }) { service in
            let setup = try service.connect()
            let layout = try setup.postLayout(layoutJSON(listItems(100)))
            let port = service.port
            for _ in 0..<10 {
                let session = try setup.openSession(#"{"layout":"\#(layout)","viewport":[375,667]}"#).id
                let statuses = Locked<[Int]>([])
                onThreads(4) { t in
                    guard let client = try? Client(HTTPTestClient.connect(port: port, timeout: 10), token: nil) else { return }
                    for i in 0..<20 {
                        let reply = t == 0 && i == 5 ? try? client.delete("/v1/sessions/\(session)") : try? client.update(session, #"{"offset":[0,\#(i * 30)]}"#)
                        if let reply { statuses.withLock { $0.append(reply.status) } }
                    }
                }
                #expect(Set(statuses.get).isSubset(of: [200, 204, 404]))
                #expect(statuses.get.filter { $0 == 204 }.count == 1)
                #expect(try setup.get("/v1/sessions/\(session)").status == 404)
            }
            #expect(try setup.get("/v1/layouts/\(layout)").json.int("sessions") == 0)
        }
    }
}

/// Races on one session's end.
@Suite(.serialized, .tags(.live)) struct DeleteRaceTests {
    @Test func concurrentDeletesOfOneSessionAnswerExactlyOne204() throws {
        try withService({ $0.http.threads = 4 }) { service in
            let setup = try service.connect()
            let layout = try setup.postLayout(layoutJSON(listItems(10)))
            let port = service.port
            for _ in 0..<40 {
                let session = try setup.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
                let statuses = Locked<[Int]>([])
                let clients = Locked((0..<6).compactMap { _ in try? HTTPTestClient.connect(port: port, timeout: 5) })
                let request = HTTPTestClient.request(method: "DELETE", path: "/v1/sessions/\(session)")
                onThreads(6) { t in
                    let client = clients.withLock { $0[t] }
                    if (try? client.write(request)) != nil, let response = try? client.readResponse() {
                        statuses.withLock { $0.append(response.status) }
                    }
                    client.close()
                }
                #expect(statuses.get.count == 6)
                #expect(statuses.get.filter { $0 == 204 }.count == 1, "\(statuses.get)")
                #expect(statuses.get.filter { $0 == 404 }.count == 5)
            }
            #expect(try setup.get("/v1/layouts/\(layout)").json.int("sessions") == 0)
        }
    }
}
