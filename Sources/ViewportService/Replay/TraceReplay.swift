import ViewportCore
import ViewportJSON

/// `viewportd replay`: runs the core in process over a recorded trace (NDJSON viewport updates,
/// the body format of `POST /v1/sessions/{id}/viewport`, and `{"patch": {…}}` lines, edits of the
/// session's layout as in a stream of updates) and counts, per reuse identifier, what the plans
/// asked of a client; then finds, per identifier, the smallest pool cap that keeps creates within
/// 1% of uncapped (what RecyclerView's `setMaxRecycledViews` should be).
///
/// The layout and lines are read with the service's own decoders and applied as the server
/// applies them, so a trace the server takes replays the same way, `seq` included (a retry is
/// answered, not applied; a gap is an error): an update's ids (`scrollTo`, `select`) are looked up
/// in the session's layout as it is when the update comes, after the edits before it.
public struct TraceReplay: Sendable {
    /// Session options of the replay (the trace's updates may still change the viewport's size).
    public struct Options: Sendable {
        public var viewport: Size
        public var buffer: Double
        /// `pool.max` of the reported run; nil for uncapped. The cap search always compares with
        /// uncapped.
        public var poolMax: Int?

        public init(viewport: Size = Size(width: 375, height: 667), buffer: Double = 20, poolMax: Int? = nil) {
            self.viewport = viewport
            self.buffer = buffer
            self.poolMax = poolMax
        }
    }

    /// A trace or layout that cannot be replayed: the message names the file's line and field.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Progress of `report`: the run under way (1-based), how many runs there are (nil until the
    /// first run has found how many the search needs), and the share of this run done.
    public struct Progress: Sendable {
        public var run: Int
        public var runs: Int?
        public var fraction: Double
        public var stage: String

        /// The share of all the work done, from 0 to 1 (runs are equally long).
        public var overall: Double {
            guard let runs, runs > 0 else { return 0 }
            return min(1, (Double(run - 1) + fraction) / Double(runs))
        }
    }

    /// One line of the trace.
    enum Message: Sendable {
        /// An update whose ids were looked up in the layout as posted (no edit came before it).
        case resolved(ViewportUpdate)
        /// An update after an edit: its ids are looked up when it is applied.
        case update(UpdateRequest)
        /// `{"patch": {…}}`: an edit of the session's layout.
        case patch(LayoutEditRequest)
    }

    public let layout: Layout
    public let options: Options
    /// The decoded lines and the line (from 1) each came from.
    let messages: [Message]
    let lines: [Int]

    /// Slack of the cap search: creates at the cap ≤ uncapped × (100 + slack) / 100.
    public static let slackPercent = 1

    /// Decodes a layout object (as posted to `/v1/layouts`) and a trace (one update or patch per
    /// line; blank lines are skipped).
    public init(layoutJSON: [UInt8], trace: [UInt8], options: Options) throws(Failure) {
        do {
            layout = try JSONReader.read(layoutJSON) { r in
                let layout = try LayoutDecoder(maxItems: Int(Int32.max)).decodeDeferringInvalid(&r)
                try r.finish()
                return try layout.get()
            }
        } catch {
            throw Failure(description: "layout: \(error.problem.detail)")
        }
        self.options = options
        var messages: [Message] = []
        var lines: [Int] = []
        var edited = false
        var line = 0
        var start = 0
        let layout = self.layout
        let failure: Failure? = trace.withUnsafeBytes { bytes in
            while start < bytes.count {
                line += 1
                var end = start
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                start = end + 1
                guard text.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
                do {
                    switch try StreamMessage.decode(text) {
                    case .update(let request):
                        messages.append(edited ? .update(request) : .resolved(try request.resolve(in: layout)))
                    case .patch(let request):
                        messages.append(.patch(request))
                        edited = true
                    }
                    lines.append(line)
                } catch {
                    return Failure(description: "trace line \(line): \(error.problem.detail)")
                }
            }
            return nil
        }
        if let failure { throw failure }
        self.messages = messages
        self.lines = lines
    }

    /// The number of lines with an update or a patch in the trace.
    public var updateCount: Int { messages.count }

    /// Applies one line to the session as the server would, and answers its plan.
    static func apply(_ message: Message, to session: inout ViewportSession) throws -> Plan {
        switch message {
        case .resolved(let update):
            return try session.apply(update)
        case .update(let request):
            return try session.apply(try request.resolve(in: session.layout))
        case .patch(let request):
            return try session.apply(request.edit, anchor: request.anchor, seq: request.seq, maxItems: Int(Int32.max))
        }
    }

    /// Replays with `caps` and counts per reuse class. `progress(fraction)` is called every
    /// few thousand updates.
    /// - Complexity: O(updates × the work of one plan).
    func run(caps: PoolCaps, progress: (Double) -> Void = { _ in }) throws(Failure) -> ReplayCounts {
        var configuration = SessionConfiguration(viewport: options.viewport, buffer: options.buffer, pool: caps)
        configuration.maxViews = nil
        var session: ViewportSession
        do {
            try configuration.validate()
            session = try ViewportSession(layout: layout, configuration: configuration)
        } catch {
            throw Failure(description: "opening the session: \(error)")
        }
        var counts = ReplayCounts(names: layout.reuseNames)
        counts.account(session.lastPlan, layout: layout)
        let every = max(1, messages.count / 200)
        for (k, message) in messages.enumerated() {
            let before = session.seq
            do {
                let plan = try Self.apply(message, to: &session)
                if session.seq != before {
                    counts.account(plan, layout: session.layout)
                    if case .patch = message { counts.edits += 1 }
                }
            } catch {
                throw Failure(description: "trace line \(lines[k]): \(error.problem.detail)")
            }
            if k % every == 0 { progress(Double(k) / Double(messages.count)) }
        }
        counts.applied = Int(session.stats.updates)
        return counts
    }

    /// The whole report: the run with `options.poolMax`, the uncapped run, and the cap search
    /// (a binary search per identifier, all identifiers in the same runs: each identifier's pool
    /// serves only its own items, so their caps do not interact, and creates only fall as a cap
    /// grows).
    public func report(progress: (Progress) -> Void = { _ in }) throws(Failure) -> ReplayReport {
        var runs: Int?
        var run = 0
        func next(_ stage: String, caps: PoolCaps) throws(Failure) -> ReplayCounts {
            run += 1
            let current = run
            let counts = try self.run(caps: caps) { fraction in
                progress(Progress(run: current, runs: runs, fraction: fraction, stage: stage))
            }
            progress(Progress(run: current, runs: runs, fraction: 1, stage: stage))
            return counts
        }
        let uncapped = try next("uncapped", caps: PoolCaps())
        // Caps above an identifier's largest uncapped pool change nothing: search 0 … that.
        var low = [Int](repeating: 0, count: uncapped.classes.count)
        var high = uncapped.classes.map(\.peakPooled)
        let rounds = high.map { Self.bisections($0) }.max() ?? 0
        runs = 1 + (options.poolMax == nil ? 0 : 1) + rounds
        let reported = try options.poolMax.map { cap throws(Failure) in try next("pool.max \(cap)", caps: PoolCaps(max: cap)) } ?? uncapped
        var atCap = uncapped.classes.map(\.created)
        while zip(low, high).contains(where: { $0 < $1 }) {
            var perReuse: [String: Int] = [:]
            var middle = high
            for c in low.indices where low[c] < high[c] {
                middle[c] = (low[c] + high[c]) / 2
                perReuse[uncapped.names[c]] = middle[c]
            }
            let counts = try next("searching caps", caps: PoolCaps(max: nil, perReuse: perReuse))
            for c in low.indices where low[c] < high[c] {
                if Self.withinSlack(counts.classes[c].created, uncapped: uncapped.classes[c].created) {
                    high[c] = middle[c]
                    atCap[c] = counts.classes[c].created
                } else {
                    low[c] = middle[c] + 1
                }
            }
        }
        var identifiers: [ReplayReport.Identifier] = []
        for c in uncapped.classes.indices {
            identifiers.append(
                ReplayReport.Identifier(
                    reuse: uncapped.names[c], counts: reported.classes[c], uncappedCreates: uncapped.classes[c].created,
                    peakPooledUncapped: uncapped.classes[c].peakPooled, smallestCap: high[c], createsAtSmallestCap: atCap[c]))
        }
        if reported.none.created > 0 {
            identifiers.append(
                ReplayReport.Identifier(
                    reuse: nil, counts: reported.none, uncappedCreates: uncapped.none.created, peakPooledUncapped: 0,
                    smallestCap: nil, createsAtSmallestCap: nil))
        }
        return ReplayReport(
            updates: messages.count, applied: reported.applied, edits: reported.edits, items: layout.count, viewport: options.viewport,
            buffer: options.buffer, poolMax: options.poolMax, identifiers: identifiers, peakViews: reported.peakViews,
            runs: run)
    }

    /// Whether `created` is within the slack of `uncapped` (integers: no rounding).
    static func withinSlack(_ created: Int, uncapped: Int) -> Bool {
        created * 100 <= uncapped * (100 + slackPercent)
    }

    /// Runs a binary search over 0 … n needs at most.
    static func bisections(_ n: Int) -> Int {
        var count = 0
        var width = n
        while width > 0 {
            width /= 2
            count += 1
        }
        return count
    }
}
