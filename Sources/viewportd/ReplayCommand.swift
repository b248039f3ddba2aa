#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import ViewportCore
import ViewportService

/// `viewportd replay`: a recorded trace through the core, in process (no server). Exits 0 done, 1
/// for a layout or trace that cannot be replayed, 64 for bad arguments (ArgumentParser's usage
/// error).
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recorded scroll trace through the planner, in process, and size the reuse pools.",
        discussion: """
            The trace is NDJSON: one viewport update per line, exactly the body of \
            POST /v1/sessions/{id}/viewport (offset or scrollTo, size, velocity, phase, seq, select), \
            or {"patch": {...}}, an edit of the session's layout (the body of \
            PATCH /v1/sessions/{id}/layout: resize, insert, remove, anchor, seq), as in a stream of \
            updates. A session opens on the layout at offset [0, 0] (its opening plan counts), then \
            each line is applied as the server would (seq included). Printed per reuse identifier: \
            peak views, creates, reuses, rebind-free reuses, discards, and the smallest pool cap \
            that keeps creates within 1% of uncapped (found by replaying the trace again, a \
            binary search per identifier).
            """,
        helpNames: [.short, .long])

    @Option(name: .long, help: ArgumentHelp("A layout object, as posted to /v1/layouts (items or sections).", valueName: "file"))
    var layout: String

    @Option(name: .long, help: ArgumentHelp("The trace: NDJSON viewport updates and {\"patch\": …} edits (- reads standard input).", valueName: "file"))
    var trace: String

    // `.unconditional`: a value that starts with a dash (`--buffer -5`) is the value, refused by
    // its own check, not a missing one.
    @Option(name: .customLong("pool-max"), parsing: .unconditional, help: ArgumentHelp("pool.max of the reported run (default uncapped).", valueName: "n"))
    var poolMax: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The session's viewport size.", valueName: "w,h"))
    var viewport: String = "375,667"

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Points materialized beyond the viewport on every side.", valueName: "points"))
    var buffer: Double = 20

    @Flag(name: .long, help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        if let poolMax, poolMax < 0 { throw ValidationError("--pool-max must not be negative") }
        guard buffer.isFinite, buffer >= 0 else { throw ValidationError("--buffer must be finite and not negative") }
        _ = try viewportSize()
    }

    func viewportSize() throws -> Size {
        let parts = viewport.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let w = parts[0], let h = parts[1], w.isFinite, h.isFinite, w >= 0, h >= 0 else {
            throw ValidationError("--viewport must be W,H (two finite numbers, not negative), not \"\(viewport)\"")
        }
        return Size(width: w, height: h)
    }

    func run() throws {
        let options = TraceReplay.Options(viewport: try viewportSize(), buffer: buffer, poolMax: poolMax)
        let replay: TraceReplay
        let report: ReplayReport
        let bar = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
        do {
            replay = try TraceReplay(layoutJSON: try Self.read(layout, what: "layout"), trace: try Self.read(trace, what: "trace"), options: options)
            report = try replay.report { bar.show($0) }
        } catch let failure as TraceReplay.Failure {
            bar.clear()
            FileHandle.standardError.write(Data("viewportd replay: \(failure)\n".utf8))
            throw ExitCode(1)
        }
        bar.clear()
        print(json ? report.json : report.text, terminator: json ? "\n" : "")
    }

    /// The file's bytes (`-`: standard input), or exit 1 saying why not.
    static func read(_ path: String, what: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        var isDirectory: ObjCBool = false
        let reason: String
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            reason = "it is a directory"
        } else if let data = FileManager.default.contents(atPath: path) {
            return Array(data)
        } else {
            // FileManager says nil, not why: open(2) does.
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                close(fd)
                reason = "it could not be read"
            } else {
                reason = String(cString: strerror(errno))
            }
        }
        FileHandle.standardError.write(Data("viewportd replay: cannot read the \(what) file \(path): \(reason)\n".utf8))
        throw ExitCode(1)
    }
}

/// A one-line progress bar on stderr, redrawn at most every 100 ms; only when stderr is a
/// terminal (a script reading stderr gets nothing).
final class ProgressBar {
    private let enabled: Bool
    private var lastDraw = 0.0
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ progress: TraceReplay.Progress) {
        guard enabled else { return }
        let now = Date().timeIntervalSinceReferenceDate
        guard now - lastDraw >= 0.1 || progress.fraction >= 1 else { return }
        lastDraw = now
        let width = 30
        let runs = progress.runs.map(String.init) ?? "?"
        // Until the first run has found how many runs the search needs, the bar is that run's.
        let share = progress.runs == nil ? progress.fraction : progress.overall
        let filled = Int((share * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "replay [\(bar)] \(Int(share * 100))%  run \(progress.run)/\(runs): \(progress.stage)"
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
        drawn = true
    }

    func clear() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
