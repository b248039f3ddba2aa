/// One instance's part in the liveness of the store's cells (``StoreScripts/heartbeat``), as a
/// pure state machine: which cells its writer beats in a round, how, and what it learnt from the
/// replies.
///
/// An instance beats (every eighth of a lease) only the cells where it may hold a lease: those
/// are the cells whose sessions an outage could take from it, and their `pulse` is what shows an
/// outage there. A beat is the heartbeat script when the cell's pulse may be gone (the first beat
/// of a cell, one after a beat that got no answer or found the pulse gone, every beat of a forced
/// heartbeat), else a plain `PEXPIRE` of the pulse, which can only prolong a pulse that exists:
/// after a silence longer than the gap the pulse stays gone until a script notes the silence.
///
/// Every other cell gets a coarse check every ``coarseLeases`` leases: a plain `EXISTS` of its
/// `beat`, and the check script (``StoreScripts/cellCheck``) in the next round for a cell whose
/// `beat` was missing (or for every cell, in a forced heartbeat). The script makes sure `beat`
/// exists (a missing `beat` means the store lost the cell's keys) and never moves it, so it
/// cannot hide an outage from an owner.
///
/// `floor`, per cell, is what this instance's next beat of the cell expects:
/// - nil: it does not beat the cell;
/// - ``beginning``: it begins to beat it in the same round trip as the first write of a session
///   of the cell (the beat goes first): a missing pulse is then an idle cell, not an outage;
/// - a store time T (ms): it took a session of the cell at T; a missing pulse is an idle cell when
///   T is less than the gap ago, an outage since T otherwise;
/// - ``continuing``: its beats reached the cell before: a missing pulse is an outage of the cell
///   for every instance (its own beats included).
struct CellLiveness: Sendable, Equatable {
    static let beginning: Int64 = -1
    static let continuing: Int64 = 0
    /// Every other cell is checked every this many leases.
    static let coarseLeases: Int64 = 8

    struct Cell: Sendable, Equatable {
        /// A beat or a check of this instance reached the cell (and found `beat`): a missing
        /// `beat` after that means the store lost the cell's keys.
        var heard = false
        /// Until when (monotonic ns) this instance may hold a lease in the cell.
        var leasedUntil: Int64 = .min
        var floor: Int64?
        /// This instance's last beat of the cell got an answer and found (or set) the pulse: the
        /// next one may be the plain `PEXPIRE`.
        var pulsing = false
        /// The last coarse check found no `beat`: the next round checks the cell with the script.
        var suspect = false
    }

    /// A beat of a cell in a round: with the script (`full`), or the plain `PEXPIRE`.
    struct Beat: Sendable, Equatable {
        var cell: Int
        var floor: Int64
        var full: Bool
    }

    /// A check of a cell in a round: with the script (`full`), or the plain `EXISTS`.
    struct Check: Sendable, Equatable {
        var cell: Int
        var full: Bool
    }

    /// What a beat's or a check's reply said.
    enum Answer: Sendable, Equatable {
        /// No answer (or an error reply).
        case failed
        /// The pulse (a beat) or `beat` (a check) exists (again).
        case present
        /// A plain beat or check found it missing.
        case absent
    }

    private(set) var cells: [Cell]
    /// When the last round that beat every beaten cell and got every answer was sent (ns;
    /// `.min`: none yet), and the same for the coarse check of every cell.
    private(set) var beatAt: Int64 = .min
    private(set) var checkedAt: Int64 = .min
    let lease: Int64

    init(cellCount: Int, leaseNanoseconds: Int64) {
        cells = Array(repeating: Cell(), count: cellCount)
        lease = leaseNanoseconds
    }

    /// What a round sent at `now` sends: the cells to beat and to check, whether the beats are
    /// due (every beaten cell's, not only first beats) and whether the coarse check of every cell
    /// is among the checks. `heartbeat`: the writer's round (beats fall due
    /// every eighth of a lease, checks every ``coarseLeases`` leases; `force`: now, every one
    /// with its script); `writing`: the cells of the round's writes and renewals that keep or take
    /// a lease (a cell not beaten yet is beaten in this round, before the write).
    /// - Complexity: O(cells + writing).
    mutating func plan(now: Int64, heartbeat: Bool, force: Bool = false, writing: [Int]) -> (beats: [Beat], checks: [Check], due: Bool, coarse: Bool) {
        for index in writing where cells[index].floor == nil { cells[index].floor = Self.beginning }
        let writing = Set(writing)
        let due = heartbeat && (force || beatAt == .min || now - beatAt >= lease / 8)
        var beats: [Beat] = []
        for index in cells.indices {
            guard let floor = cells[index].floor else { continue }
            if due && cells[index].leasedUntil <= now && !writing.contains(index) && floor == Self.continuing {
                // No lease of this instance in the cell any more: it stops beating it.
                cells[index].floor = nil
                cells[index].pulsing = false
                continue
            }
            let plain = !force && floor == Self.continuing && cells[index].pulsing
            if due || !plain { beats.append(Beat(cell: index, floor: floor, full: !plain)) }
        }
        let coarse = heartbeat && (force || checkedAt == .min || now - checkedAt >= Self.coarseLeases * lease)
        var checks: [Check] = []
        if coarse {
            checks = cells.indices.map { Check(cell: $0, full: force || cells[$0].suspect) }
        } else if heartbeat {
            checks = cells.indices.filter { cells[$0].suspect }.map { Check(cell: $0, full: true) }
        }
        return (beats, checks, due, coarse)
    }

    /// The replies of a round sent at `sentAt`: what each beat and each check found; `due`: the
    /// beats were due (not only the first ones of cells), `coarse`: the checks were every cell's.
    mutating func record(sentAt: Int64, beats: [(cell: Int, answer: Answer)], due: Bool, checks: [(cell: Int, answer: Answer)], coarse: Bool) {
        var all = true
        for (index, answer) in beats {
            if answer == .present {
                cells[index].heard = true
                cells[index].floor = Self.continuing
                cells[index].pulsing = true
            } else {
                // The next beat of the cell is the script, in the next round.
                cells[index].pulsing = false
                all = false
            }
        }
        if due && all { beatAt = sentAt }
        var answered = true
        for (index, answer) in checks {
            switch answer {
            case .present:
                cells[index].heard = true
                cells[index].suspect = false
            case .absent: cells[index].suspect = true
            case .failed: answered = false
            }
        }
        if coarse && answered { checkedAt = sentAt }
    }

    /// A write or renewal sent at `sentAt` kept (or took) a lease in cell `index`.
    mutating func leased(_ index: Int, sentAt: Int64) {
        cells[index].leasedUntil = max(cells[index].leasedUntil, sentAt + lease)
    }

    /// An attempt sent at `sentAt` to take a session of cell `index` was told to wait out an
    /// outage of the cell (``StoreScripts/acquire``): this instance beats the cell for a lease, as
    /// if it held one there. The attempt's own call started the cell's grace if one was due; a
    /// cell whose only beating instance died would otherwise stay stale, and every later attempt
    /// would start a new grace as the last one ends: a client that retries when told (at the
    /// grace's end) would never get in.
    mutating func waiting(_ index: Int, sentAt: Int64) {
        leased(index, sentAt: sentAt)
        if cells[index].floor == nil { cells[index].floor = Self.beginning }
    }

    /// A session of cell `index` was taken at store time `storeTime` (ms), sent at `sentAt`.
    mutating func acquired(_ index: Int, storeTime: Int64, sentAt: Int64) {
        leased(index, sentAt: sentAt)
        if cells[index].floor == nil || cells[index].floor == Self.beginning { cells[index].floor = max(1, storeTime) }
    }
}
