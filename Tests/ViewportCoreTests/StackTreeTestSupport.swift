import Testing

@testable import ViewportCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a stack tree must answer, from plain arrays: starts are recomputed per lane from scratch
/// (sequential sums of the same fixed-point lengths, so they must match exactly).
struct StackModel {
    var entries: [StackEntry] = []
    let laneCount: Int
    let spacing: Double
    var gap: StackLength { StackLength(spacing) }

    /// Every entry's start.
    func starts() -> [StackLength] {
        var running = Array(repeating: StackLength.zero, count: laneCount)
        return entries.map { e in
            let s = running[Int(e.lane)]
            running[Int(e.lane)] += StackLength(e.main) + gap
            return s
        }
    }

    func laneLengths() -> [StackLength] {
        var ends = Array(repeating: StackLength.zero, count: laneCount)
        for (e, s) in zip(entries, starts()) { ends[Int(e.lane)] = s + StackLength(e.main) }
        return ends
    }

    /// Ranks whose span touches `[low, high]`, in the lanes of `lanes`.
    func touching(_ low: StackLength, _ high: StackLength, lanes: UInt64 = .max, starts given: [StackLength]? = nil) -> [Int] {
        let starts = given ?? starts()
        return entries.indices.filter { k in
            let e = entries[k]
            return lanes & (1 << UInt64(e.lane)) != 0 && starts[k] <= high && starts[k] + StackLength(e.main) >= low
        }
    }

    /// The nearest start to `x`: by distance, then start, then rank.
    func nearestStart(to x: StackLength, starts given: [StackLength]? = nil) -> (rank: Int, start: StackLength)? {
        let starts = given ?? starts()
        var best: (d: StackLength, s: StackLength, r: Int)? = nil
        for (r, s) in starts.enumerated() {
            let d = s < x ? x - s : s - x
            if let b = best, (b.d, b.s, b.r) <= (d, s, r) { continue }
            best = (d, s, r)
        }
        return best.map { ($0.r, $0.s) }
    }
}

/// Random sizes that make exactness matter: integers, thirds (not binary fractions), zeros, and
/// now and then a tiny or a large one.
func randomStackSize(using rng: inout SeededRandom) -> Double {
    switch Int.random(in: 0..<20, using: &rng) {
    case 0..<3: return 0
    case 3..<10: return Double(Int.random(in: 1...200, using: &rng))
    case 10..<17: return Double(Int.random(in: 1...600, using: &rng)) / 3
    case 17: return Double(Int.random(in: 1...1000, using: &rng)) * 1e-9
    case 18: return Double(Int.random(in: 1...100, using: &rng)) * 1e5
    default: return Double.random(in: 0..<300, using: &rng)
    }
}

func randomStackEntry(uid: Int32, laneCount: Int, using rng: inout SeededRandom) -> StackEntry {
    StackEntry(
        uid: uid, main: randomStackSize(using: &rng), cross: Double(Int.random(in: 0...400, using: &rng)),
        lane: UInt16(Int.random(in: 0..<laneCount, using: &rng)), isMeasured: Bool.random(using: &rng),
        reuseClass: Int32(Int.random(in: -1...3, using: &rng)))
}

/// The seed to run: `STACK_SEED` from the environment replays one, else the test's own.
func stackSeed(_ own: UInt64) -> UInt64 {
    if let text = StackTestEnvironment.value("STACK_SEED"), let seed = UInt64(text) { return seed }
    return own
}

enum StackTestEnvironment {
    static func value(_ name: String) -> String? {
        guard let pointer = getenv(name) else { return nil }
        return String(cString: pointer)
    }
}

/// Checks everything the tree answers against the model; `context` names the seed and step.
func expectStackTreeMatches(_ tree: StackTree, _ model: StackModel, _ context: String, removed: [Int32] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = tree.structuralProblems()
    #expect(problems.isEmpty, "\(context): \(problems.prefix(5))", sourceLocation: sourceLocation)
    #expect(tree.count == model.entries.count, "\(context): count", sourceLocation: sourceLocation)
    guard tree.count == model.entries.count else { return }
    var treeEntries = tree.entries
    for k in treeEntries.indices { treeEntries[k].orderKey = 0 }
    var modelEntries = model.entries
    for k in modelEntries.indices { modelEntries[k].orderKey = 0 }
    #expect(treeEntries == modelEntries, "\(context): entries", sourceLocation: sourceLocation)
    let starts = model.starts()
    var mismatches = 0
    for r in 0..<tree.count where tree.start(at: r) != starts[r] { mismatches += 1 }
    #expect(mismatches == 0, "\(context): \(mismatches) starts differ", sourceLocation: sourceLocation)
    var walked: [StackLength] = []
    tree.forEach { _, _, s in walked.append(s) }
    #expect(walked == starts, "\(context): forEach starts", sourceLocation: sourceLocation)
    #expect(tree.laneLengths == model.laneLengths(), "\(context): lane lengths", sourceLocation: sourceLocation)
    for (r, e) in model.entries.enumerated() where tree.rank(ofUID: e.uid) != r {
        Issue.record("\(context): uid \(e.uid) at rank \(r), found at \(String(describing: tree.rank(ofUID: e.uid)))", sourceLocation: sourceLocation)
        break
    }
    for uid in removed where tree.rank(ofUID: uid) != nil {
        Issue.record("\(context): removed uid \(uid) found", sourceLocation: sourceLocation)
        break
    }
}
