import Testing

@testable import ViewportService

/// Which cells an instance beats (``CellLiveness``): only those it may hold leases in, the first
/// beat of a cell in the round of its first write there, the coarse check every few leases.
struct CellLivenessTests {
    let lease: Int64 = 2_000_000_000

    @Test func anInstanceWithoutLeasesBeatsNoCellAndChecksEveryCellEveryFewLeases() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        var plan = cells.plan(now: 0, heartbeat: true, writing: [])
        #expect(plan.beats.isEmpty && plan.check)
        cells.record(sentAt: 0, beats: [], due: true, checked: Array(repeating: true, count: 8))
        #expect(cells.cells.allSatisfy { $0.heard })
        plan = cells.plan(now: lease, heartbeat: true, writing: [])
        #expect(plan.beats.isEmpty && !plan.check)
        plan = cells.plan(now: CellLiveness.coarseLeases * lease, heartbeat: true, writing: [])
        #expect(plan.check)
        // A check that did not reach every cell is sent again next round.
        cells.record(sentAt: CellLiveness.coarseLeases * lease, beats: [], due: true, checked: [true, false] + Array(repeating: true, count: 6))
        #expect(cells.plan(now: CellLiveness.coarseLeases * lease + 1, heartbeat: true, writing: []).check)
    }

    @Test func aCellIsBeatenFromTheFirstWriteThereUntilItsLastLeaseEnds() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.record(sentAt: 0, beats: [], due: false, checked: Array(repeating: true, count: 8))
        // A write (not a heartbeat round): the cell's first beat goes with it, expecting nothing.
        var plan = cells.plan(now: 10, heartbeat: false, writing: [3])
        #expect(plan.beats.map(\.cell) == [3] && plan.beats[0].floor == CellLiveness.beginning)
        cells.record(sentAt: 10, beats: [(3, true)], due: false, checked: nil)
        cells.leased(3, sentAt: 10)
        // Then every eighth of a lease, continuing.
        plan = cells.plan(now: 20, heartbeat: true, writing: [])
        #expect(plan.beats.map(\.cell) == [3] && plan.beats[0].floor == CellLiveness.continuing)
        cells.record(sentAt: 20, beats: [(3, true)], due: true, checked: nil)
        #expect(cells.plan(now: 30, heartbeat: true, writing: []).beats.isEmpty, "not due yet")
        // A beat that did not get through keeps the cell continuing, and is due every round.
        plan = cells.plan(now: 20 + lease / 8, heartbeat: true, writing: [])
        cells.record(sentAt: 20 + lease / 8, beats: [(3, false)], due: true, checked: nil)
        #expect(cells.cells[3].floor == CellLiveness.continuing)
        #expect(cells.plan(now: 21 + lease / 8, heartbeat: true, writing: []).beats.map(\.cell) == [3])
        // Its lease over, the cell is no longer beaten.
        #expect(cells.plan(now: 10 + 2 * lease, heartbeat: true, writing: []).beats.isEmpty)
        #expect(cells.cells[3].floor == nil)
    }

    @Test func anAttemptToldToWaitOutAnOutageBeatsTheCellForALease() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.record(sentAt: 0, beats: [], due: true, checked: Array(repeating: true, count: 8))
        // Another instance's cell (its only beating instance died): nothing beats it here.
        #expect(cells.plan(now: 10, heartbeat: true, writing: []).beats.isEmpty)
        cells.waiting(5, sentAt: 10)
        // The next round beats it, expecting nothing of `beat` (the attempt's call started the
        // grace if one was due), so later attempts find the cell beaten, not a new grace.
        var plan = cells.plan(now: 20, heartbeat: false, writing: [])
        #expect(plan.beats.map(\.cell) == [5] && plan.beats[0].floor == CellLiveness.beginning)
        cells.record(sentAt: 20, beats: [(5, true)], due: false, checked: nil)
        plan = cells.plan(now: 20 + lease / 8, heartbeat: true, writing: [])
        #expect(plan.beats.map(\.cell) == [5] && plan.beats[0].floor == CellLiveness.continuing)
        cells.record(sentAt: 20 + lease / 8, beats: [(5, true)], due: true, checked: nil)
        // A lease after the attempt, with no lease taken there, it stops.
        #expect(cells.plan(now: 10 + lease + lease / 8, heartbeat: true, writing: []).beats.isEmpty)
    }

    @Test func aCellWhereASessionWasTakenCountsFromTheTake() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.acquired(5, storeTime: 123_456, sentAt: 0)
        // Beaten in the next round, whether due or not, with the take's store time as floor.
        let plan = cells.plan(now: 1, heartbeat: false, writing: [])
        #expect(plan.beats.map(\.cell) == [5] && plan.beats[0].floor == 123_456)
        cells.record(sentAt: 1, beats: [(5, true)], due: false, checked: nil)
        #expect(cells.cells[5].floor == CellLiveness.continuing && cells.cells[5].heard)
        // A later take in a cell it beats already keeps counting from its own beats.
        cells.acquired(5, storeTime: 999_999, sentAt: 2)
        #expect(cells.cells[5].floor == CellLiveness.continuing)
    }
}
