import ViewportCore
import ViewportJSON

/// The outcome of `viewportd replay`: per reuse identifier, what the trace's plans asked of a
/// client and the smallest pool cap that keeps creates within 1% of uncapped.
public struct ReplayReport: Sendable {
    /// One reuse identifier (nil: the items without one).
    public struct Identifier: Sendable {
        public var reuse: String?
        var counts: ReplayCounts.Class
        /// Creates of the uncapped run.
        public var uncappedCreates: Int
        /// The largest pool of the uncapped run: caps from there on change nothing.
        public var peakPooledUncapped: Int
        /// The smallest cap with creates within 1% of uncapped; nil for items without an
        /// identifier (they are never pooled).
        public var smallestCap: Int?
        public var createsAtSmallestCap: Int?

        public var peakViews: Int { counts.peakViews }
        public var created: Int { counts.created }
        public var reused: Int { counts.reused }
        public var rebindFree: Int { counts.rebindFree }
        public var recycled: Int { counts.recycled }
        public var discarded: Int { counts.discarded }
    }

    /// Lines of the trace: updates and patches.
    public var updates: Int
    /// Lines applied (retries are not).
    public var applied: Int
    /// Patch lines applied (edits of the session's layout).
    public var edits: Int
    public var items: Int
    public var viewport: Size
    public var buffer: Double
    public var poolMax: Int?
    /// In the layout's order of first appearance, then the items without an identifier.
    public var identifiers: [Identifier]
    /// The most views alive at once, over all identifiers.
    public var peakViews: Int
    /// How many times the trace was replayed (the report's run, uncapped, the cap search).
    public var runs: Int

    /// A table for people.
    public var text: String {
        let edited = edits > 0 ? ", \(edits) of them edits" : ""
        var out = "\(updates) updates (\(applied) applied\(edited)) over \(items) items, viewport \(Self.number(viewport.width))x"
            + "\(Self.number(viewport.height)), buffer \(Self.number(buffer)), pool \(poolMax.map { "max \($0)" } ?? "uncapped")\n\n"
        let header = ["reuse", "peak views", "creates", "reuses", "rebind-free", "discards", "smallest cap (creates within 1%)"]
        var rows: [[String]] = [header]
        for identifier in identifiers {
            let cap: String
            if let smallest = identifier.smallestCap, let creates = identifier.createsAtSmallestCap {
                cap = "\(smallest) (\(creates) creates, uncapped \(identifier.uncappedCreates))"
            } else {
                cap = "- (never pooled)"
            }
            rows.append([
                identifier.reuse ?? "(none)", "\(identifier.peakViews)", "\(identifier.created)", "\(identifier.reused)",
                "\(identifier.rebindFree)", "\(identifier.discarded)", cap,
            ])
        }
        rows.append([
            "all", "\(peakViews)", "\(identifiers.map(\.created).reduce(0, +))", "\(identifiers.map(\.reused).reduce(0, +))",
            "\(identifiers.map(\.rebindFree).reduce(0, +))", "\(identifiers.map(\.discarded).reduce(0, +))", "",
        ])
        let widths = header.indices.map { k in rows.map { $0[k].count }.max() ?? 0 }
        for row in rows {
            var line = ""
            for (k, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[k] - cell.count)
                // The first column left-aligned, numbers right-aligned, the last as it is.
                if k == 0 { line += cell + pad } else if k == row.count - 1 { line += "  " + cell } else { line += "  " + pad + cell }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }

    /// The report as one JSON object (for scripts).
    public var json: String {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("updates")
        w.int(updates)
        w.key("applied")
        w.int(applied)
        w.key("edits")
        w.int(edits)
        w.key("items")
        w.int(items)
        w.key("viewport")
        PlanEncoder.size(viewport, into: &w)
        w.key("buffer")
        w.number(buffer)
        w.key("poolMax")
        if let poolMax { w.int(poolMax) } else { w.null() }
        w.key("peakViews")
        w.int(peakViews)
        w.key("runs")
        w.int(runs)
        w.key("slackPercent")
        w.int(TraceReplay.slackPercent)
        // The text table's "all" row: the totals over every identifier.
        w.key("all")
        w.beginObject()
        func total(_ count: (Identifier) -> Int) -> Int { identifiers.reduce(0) { $0 + count($1) } }
        let totals: [(String, Int)] = [
            ("peakViews", peakViews), ("created", total(\.created)), ("reused", total(\.reused)),
            ("rebindFree", total(\.rebindFree)), ("recycled", total(\.recycled)), ("discarded", total(\.discarded)),
        ]
        for (name, value) in totals {
            w.key(escaping: name)
            w.int(value)
        }
        w.endObject()
        w.key("reuse")
        w.beginArray()
        for identifier in identifiers {
            w.beginObject()
            w.key("reuse")
            if let reuse = identifier.reuse { w.string(reuse) } else { w.null() }
            for (name, value) in [
                ("peakViews", identifier.peakViews), ("created", identifier.created), ("reused", identifier.reused),
                ("rebindFree", identifier.rebindFree), ("recycled", identifier.recycled), ("discarded", identifier.discarded),
                ("uncappedCreated", identifier.uncappedCreates), ("peakPooledUncapped", identifier.peakPooledUncapped),
            ] {
                w.key(escaping: name)
                w.int(value)
            }
            w.key("smallestCap")
            if let cap = identifier.smallestCap { w.int(cap) } else { w.null() }
            w.key("createdAtSmallestCap")
            if let created = identifier.createsAtSmallestCap { w.int(created) } else { w.null() }
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// 375 for 375.0, 12.5 as it is.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
