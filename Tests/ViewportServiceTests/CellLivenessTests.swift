import Testing

@testable import ViewportService

/// Which cells an instance beats (``CellLiveness``) and how: only those it may hold leases in,
/// the first beat of a cell in the round of its first write there, with the script whenever the
/// cell's pulse may be gone and a plain `PEXPIRE` otherwise; the coarse check every few leases, a
/// plain `EXISTS` with the script for the cells it found without `beat`.
struct CellLivenessTests {
    let lease: Int64 = 2_000_000_000

    func answers(_ cells: [Int], _ answer: CellLiveness.Answer) -> [(cell: Int, answer: CellLiveness.Answer)] {
        cells.map { ($0, answer) }
    }

    @Test func anInstanceWithoutLeasesBeatsNoCellAndChecksEveryCellEveryFewLeases() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        var plan = cells.plan(now: 0, heartbeat: true, writing: [])
        #expect(plan.beats.isEmpty && plan.coarse && plan.checks.count == 8 && plan.checks.allSatisfy { !$0.full })
        cells.record(sentAt: 0, beats: [], due: true, checks: answers(Array(0..<8), .present), coarse: true)
        #expect(cells.cells.allSatisfy { $0.heard })
        plan = cells.plan(now: lease, heartbeat: true, writing: [])
        #expect(plan.beats.isEmpty && plan.checks.isEmpty && !plan.coarse)
        plan = cells.plan(now: CellLiveness.coarseLeases * lease, heartbeat: true, writing: [])
        #expect(plan.coarse && plan.checks.count == 8)
        // A check that did not reach every cell is sent again next round.
        cells.record(
            sentAt: CellLiveness.coarseLeases * lease, beats: [], due: true,
            checks: answers([0], .present) + answers([1], .failed) + answers(Array(2..<8), .present), coarse: true)
        #expect(cells.plan(now: CellLiveness.coarseLeases * lease + 1, heartbeat: true, writing: []).coarse)
    }

    @Test func aCellFoundWithoutBeatIsCheckedWithTheScriptNextRound() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.record(sentAt: 0, beats: [], due: true, checks: answers(Array(0..<8), .present), coarse: true)
        let now = CellLiveness.coarseLeases * lease
        _ = cells.plan(now: now, heartbeat: true, writing: [])
        cells.record(sentAt: now, beats: [], due: true, checks: answers([2], .absent) + answers([0, 1] + Array(3..<8), .present), coarse: true)
        // The coarse check is done; cell 2 gets the script, still known as heard (the store lost
        // its keys: the script starts a grace there).
        var plan = cells.plan(now: now + 1, heartbeat: true, writing: [])
        #expect(!plan.coarse && plan.checks == [CellLiveness.Check(cell: 2, full: true)] && cells.cells[2].heard)
        cells.record(sentAt: now + 1, beats: [], due: false, checks: answers([2], .present), coarse: false)
        plan = cells.plan(now: now + 2, heartbeat: true, writing: [])
        #expect(plan.checks.isEmpty)
        // A forced heartbeat checks every cell with the script.
        plan = cells.plan(now: now + 3, heartbeat: true, force: true, writing: [])
        #expect(plan.coarse && plan.checks.count == 8 && plan.checks.allSatisfy { $0.full })
    }

    @Test func aCellIsBeatenFromTheFirstWriteThereUntilItsLastLeaseEnds() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.record(sentAt: 0, beats: [], due: false, checks: answers(Array(0..<8), .present), coarse: true)
        // A write (not a heartbeat round): the cell's first beat goes with it, expecting nothing.
        var plan = cells.plan(now: 10, heartbeat: false, writing: [3])
        #expect(plan.beats == [CellLiveness.Beat(cell: 3, floor: CellLiveness.beginning, full: true)])
        cells.record(sentAt: 10, beats: answers([3], .present), due: false, checks: [], coarse: false)
        cells.leased(3, sentAt: 10)
        // Then every eighth of a lease, continuing, as a plain PEXPIRE of the pulse.
        plan = cells.plan(now: 20, heartbeat: true, writing: [])
        #expect(plan.beats == [CellLiveness.Beat(cell: 3, floor: CellLiveness.continuing, full: false)])
        cells.record(sentAt: 20, beats: answers([3], .present), due: true, checks: [], coarse: false)
        #expect(cells.plan(now: 30, heartbeat: true, writing: []).beats.isEmpty, "not due yet")
        // A beat that did not get through keeps the cell continuing; the next beat, in the next
        // round, is the script.
        plan = cells.plan(now: 20 + lease / 8, heartbeat: true, writing: [])
        cells.record(sentAt: 20 + lease / 8, beats: answers([3], .failed), due: true, checks: [], coarse: false)
        #expect(cells.cells[3].floor == CellLiveness.continuing)
        #expect(cells.plan(now: 21 + lease / 8, heartbeat: true, writing: []).beats == [CellLiveness.Beat(cell: 3, floor: 0, full: true)])
        // Its lease over, the cell is no longer beaten.
        #expect(cells.plan(now: 10 + 2 * lease, heartbeat: true, writing: []).beats.isEmpty)
        #expect(cells.cells[3].floor == nil)
    }

    @Test func aPlainBeatThatFindsThePulseGoneIsFollowedByTheScriptNextRound() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.leased(4, sentAt: 0)
        _ = cells.plan(now: 0, heartbeat: false, writing: [4])
        cells.record(sentAt: 0, beats: answers([4], .present), due: false, checks: [], coarse: false)
        var plan = cells.plan(now: lease / 8, heartbeat: true, writing: [4])
        #expect(plan.beats == [CellLiveness.Beat(cell: 4, floor: CellLiveness.continuing, full: false)])
        // No beat reached the cell for the gap (the instance's writer was held up, say): the
        // PEXPIRE finds no pulse and changes nothing; the script follows, whether due or not.
        cells.record(sentAt: lease / 8, beats: answers([4], .absent), due: true, checks: [], coarse: false)
        plan = cells.plan(now: lease / 8 + 1, heartbeat: false, writing: [4])
        #expect(plan.beats == [CellLiveness.Beat(cell: 4, floor: CellLiveness.continuing, full: true)])
        cells.record(sentAt: lease / 8 + 1, beats: answers([4], .present), due: false, checks: [], coarse: false)
        #expect(cells.plan(now: lease / 8 + 2, heartbeat: false, writing: [4]).beats.isEmpty)
        // A forced heartbeat beats with the script.
        #expect(cells.plan(now: lease / 8 + 3, heartbeat: true, force: true, writing: []).beats.allSatisfy { $0.full })
    }

    @Test func anAttemptToldToWaitOutAnOutageBeatsTheCellForALease() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.record(sentAt: 0, beats: [], due: true, checks: answers(Array(0..<8), .present), coarse: true)
        // Another instance's cell (its only beating instance died): nothing beats it here.
        #expect(cells.plan(now: 10, heartbeat: true, writing: []).beats.isEmpty)
        cells.waiting(5, sentAt: 10)
        // The next round beats it, expecting nothing of `beat` (the attempt's call started the
        // grace if one was due), so later attempts find the cell beaten, not a new grace.
        var plan = cells.plan(now: 20, heartbeat: false, writing: [])
        #expect(plan.beats == [CellLiveness.Beat(cell: 5, floor: CellLiveness.beginning, full: true)])
        cells.record(sentAt: 20, beats: answers([5], .present), due: false, checks: [], coarse: false)
        plan = cells.plan(now: 20 + lease / 8, heartbeat: true, writing: [])
        #expect(plan.beats == [CellLiveness.Beat(cell: 5, floor: CellLiveness.continuing, full: false)])
        cells.record(sentAt: 20 + lease / 8, beats: answers([5], .present), due: true, checks: [], coarse: false)
        // A lease after the attempt, with no lease taken there, it stops.
        #expect(cells.plan(now: 10 + lease + lease / 8, heartbeat: true, writing: []).beats.isEmpty)
    }

    @Test func aCellWhereASessionWasTakenCountsFromTheTake() {
        var cells = CellLiveness(cellCount: 8, leaseNanoseconds: lease)
        cells.acquired(5, storeTime: 123_456, sentAt: 0)
        // Beaten in the next round, whether due or not, with the take's store time as floor.
        let plan = cells.plan(now: 1, heartbeat: false, writing: [])
        #expect(plan.beats == [CellLiveness.Beat(cell: 5, floor: 123_456, full: true)])
        cells.record(sentAt: 1, beats: answers([5], .present), due: false, checks: [], coarse: false)
        #expect(cells.cells[5].floor == CellLiveness.continuing && cells.cells[5].heard)
        // A later take in a cell it beats already keeps counting from its own beats.
        cells.acquired(5, storeTime: 999_999, sentAt: 2)
        #expect(cells.cells[5].floor == CellLiveness.continuing)
    }
}
