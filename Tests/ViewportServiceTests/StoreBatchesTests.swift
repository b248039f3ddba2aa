import Testing

@testable import ViewportService

/// How a round's writes and renewals are cut into pipelines.
struct StoreBatchesTests {
    @Test func writesComeFirstAndRenewalsFillWhatTheyLeave() {
        let batches = Array(StoreBatches(writes: 5, renewals: 4, limit: 4))
        #expect(batches == [
            .init(writes: 0..<4, renewals: 0..<0, first: true),
            .init(writes: 4..<5, renewals: 0..<3, first: false),
            .init(writes: 5..<5, renewals: 3..<4, first: false),
        ])
    }

    @Test func aRoundWithNothingToSendStillHasOneBatchForItsHeartbeat() {
        #expect(Array(StoreBatches(writes: 0, renewals: 0, limit: 512, atLeastOne: true)) == [.init(writes: 0..<0, renewals: 0..<0, first: true)])
        #expect(Array(StoreBatches(writes: 0, limit: 512)).isEmpty, "a shutdown with nothing to release sends nothing")
    }

    @Test func everyItemIsInExactlyOneBatchAndNoBatchIsOverTheLimit() {
        for (writes, renewals) in [(0, 1), (1, 0), (512, 0), (513, 1), (1000, 1000), (3, 2000)] {
            let batches = Array(StoreBatches(writes: writes, renewals: renewals, limit: 512, atLeastOne: true))
            #expect(batches.map { $0.writes.count }.reduce(0, +) == writes)
            #expect(batches.map { $0.renewals.count }.reduce(0, +) == renewals)
            #expect(batches.allSatisfy { $0.writes.count + $0.renewals.count <= 512 && $0.writes.count + $0.renewals.count > 0 })
            #expect(batches.enumerated().allSatisfy { $0.element.first == ($0.offset == 0) })
        }
    }
}
