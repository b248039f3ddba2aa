/// One instance's part in the liveness of the store's cells (``StoreScripts/heartbeat``), as a
/// pure state machine: which cells its writer beats in a round, and what it learnt from the
/// replies.
///
/// An instance beats (every eighth of a lease) only the cells where it may hold a lease: those
/// are the cells whose sessions an outage could take from it, and their `beat` is what shows an
/// outage there. Every other cell gets a coarse check every ``coarseLeases`` leases
/// (``StoreScripts/cellCheck``), which only makes sure `beat` exists (a missing `beat` means the
/// store lost the cell's keys) and never moves it, so it cannot hide an outage from an owner.
///
/// `floor`, per cell, is what this instance's next beat of the cell expects of `beat`:
/// - nil: it does not beat the cell;
/// - ``beginning``: it begins to beat it in the same round trip as the first write of a session
///   of the cell (the beat goes first): a stale `beat` is then an idle cell, not an outage;
/// - a store time T (ms): it took a session of the cell at T; `beat` older than T is an idle
///   cell, a silence since T longer than the gap an outage;
/// - ``continuing``: its beats reached the cell before: a silence of `beat` longer than the gap
///   is an outage of the cell for every instance (its own beats included).
struct CellLiveness: Sendable, Equatable {
    static let beginning: Int64 = -1
    static let continuing: Int64 = 0
    /// Every other cell is checked every this many leases.
    static let coarseLeases: Int64 = 8

    struct Cell: Sendable, Equatable {
        /// A beat or a check of this instance reached the cell: a missing `beat` after that
        /// means the store lost the cell's keys.
        var heard = false
        /// Until when (monotonic ns) this instance may hold a lease in the cell.
        var leasedUntil: Int64 = .min
        var floor: Int64?
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

    /// What a round sent at `now` sends: the cells to beat (index, floor) and whether every cell
    /// gets its coarse check. `heartbeat`: the writer's round (beats fall due every eighth of a
    /// lease, checks every ``coarseLeases`` leases; `force`: now); `writing`: the cells of the
    /// round's writes and renewals that keep or take a lease (a cell not beaten yet is beaten
    /// in this round, before the write).
    /// - Complexity: O(cells + writing).
    mutating func plan(now: Int64, heartbeat: Bool, force: Bool = false, writing: [Int]) -> (beats: [(cell: Int, floor: Int64)], check: Bool) {
        for index in writing where cells[index].floor == nil { cells[index].floor = Self.beginning }
        let writing = Set(writing)
        let due = heartbeat && (force || beatAt == .min || now - beatAt >= lease / 8)
        var beats: [(cell: Int, floor: Int64)] = []
        for index in cells.indices {
            guard let floor = cells[index].floor else { continue }
            if due && cells[index].leasedUntil <= now && !writing.contains(index) && floor == Self.continuing {
                // No lease of this instance in the cell any more: it stops beating it.
                cells[index].floor = nil
                continue
            }
            if due || floor != Self.continuing { beats.append((index, floor)) }
        }
        let check = heartbeat && (force || checkedAt == .min || now - checkedAt >= Self.coarseLeases * lease)
        return (beats, check)
    }

    /// The replies of a round sent at `sentAt`: whether each beat and (with `checked`) each
    /// cell's check reached the store.
    mutating func record(sentAt: Int64, beats: [(cell: Int, reached: Bool)], due: Bool, checked: [Bool]?) {
        var all = true
        for (index, reached) in beats {
            if reached {
                cells[index].heard = true
                cells[index].floor = Self.continuing
            } else {
                all = false
            }
        }
        if due && all { beatAt = sentAt }
        if let checked {
            for (index, reached) in checked.enumerated() where reached { cells[index].heard = true }
            if checked.allSatisfy({ $0 }) { checkedAt = sentAt }
        }
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
