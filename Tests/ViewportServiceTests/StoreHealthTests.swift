import Foundation
import Logging
import Synchronization
import Testing

@testable import ViewportService

/// Keeps what is logged, for the tests.
final class CollectingLogHandler: LogHandler, @unchecked Sendable {
    let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level): \(event.message)") }
    }
}

/// The store's health: down from a failure until `hold` passes without one; the log follows the
/// state, at most a line per `logInterval`, and always comes to the current state.
struct StoreHealthTests {
    @Test func aFailureHoldsTheStoreDownAndTheLogComesToTheCurrentState() throws {
        let handler = CollectingLogHandler()
        let health = StoreHealth(logger: Logger(label: "test", factory: { _ in handler }), hold: 0.2, logInterval: 1)
        #expect(health.isUp)
        health.logIfChanged()
        #expect(handler.lines.withLock { $0.isEmpty }, "up, as last logged (the start)")
        // Renewals through, writes refused: the successes between failures are not recorded,
        // so the state stays down until `hold` passes without a failure.
        health.recordFailure("write: server error: NOPERM")
        #expect(!health.isUp)
        health.logIfChanged()
        // Flapping within the log interval: no more lines… (up again after `hold`, and well
        // inside the interval however late the sleep ends)
        Thread.sleep(forTimeInterval: 0.25)
        #expect(health.isUp)
        health.logIfChanged()
        health.recordFailure("heartbeat: connection lost")
        health.logIfChanged()
        #expect(handler.lines.withLock { $0 } == ["warning: the shared store is unavailable: write: server error: NOPERM; requests that need it answer 503 until it answers"])
        // …and once it is up for good, the log says so within an interval (one since the first
        // line has passed after these two sleeps).
        Thread.sleep(forTimeInterval: 0.8)
        #expect(health.isUp)
        health.logIfChanged()
        #expect(handler.lines.withLock { $0.last } == "notice: the shared store answers again")
        #expect(handler.lines.withLock { $0.count } == 2)
    }
}
