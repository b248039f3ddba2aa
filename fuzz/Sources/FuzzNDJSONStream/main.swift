#if canImport(Glibc)
import Glibc
#endif
import FuzzServiceChecks
import FuzzSupport
import Logging
import ViewportHTTP
@testable import ViewportService

// The NDJSON update stream (POST /v1/sessions/{id}/viewport, application/x-ndjson) through the
// real APIHandler and UpdateStreamSink, without sockets. The first bytes choose the session and
// how the body arrives (cut points, where the HTTP layer takes the live answer, whether the body
// was truncated at http.maxBodyBytes); the rest is the body. Two variants are sessions on a layout
// of stacks, where `{"patch": …}` lines (docs/api.md "Stacks and edits") edit the session's layout.
// - the answer does not depend on how the body arrives (one piece vs. cut anywhere, with the
//   live answer taken in between);
// - every answer line is a JSON object without null: a plan, or a problem naming its line that
//   ends the stream;
// - there is at most one answer line per body line (plus one for a truncation).

var configuration = ServiceConfiguration()
configuration.http.maxBodyBytes = 4096
configuration.sessions.maxViews = 500
let handler = APIHandler(
    configuration: configuration, metrics: ServiceMetrics(),
    logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))

/// One request through the handler, as the HTTP layer drives it; a streamed body is fed by `feed`.
func send(
    _ method: String, _ path: String, contentType: String? = "application/json", body: [UInt8] = [],
    feed: ((any HTTPBodySink) -> [UInt8])? = nil, truncated: Bool = false
) -> (status: Int, body: [UInt8]) {
    let head = HTTPRequestHead(
        method: method, path: path, headers: contentType.map { [("Content-Type", $0)] } ?? [], contentLength: nil)
    let response: HTTPResponse
    var taken: [UInt8] = []
    var action = handler.begin(head)
    // A prelude (a session taken from a shared store) runs on the calling thread here; without a
    // store there is none, but the HTTP layer's contract allows one.
    if case .prepare(let work) = action { action = work() }
    switch action {
    case .prepare: fatalError("a prelude that prepares again")
    case .respond(let r): response = r
    case .collect(_, let onBody): response = onBody(body)
    case .deferrable(_, let onBody): response = onBody(body).responseRunningWorkHere()
    case .stream(_, let sink):
        taken = feed?(sink) ?? []
        response = sink.finish(truncated: truncated)
    case .webSocket: fatalError("no WebSocket here")
    }
    switch response.body {
    case .bytes(let bytes): return (response.status, taken + bytes)
    case .buffer(let buffer): return (response.status, taken + buffer.bytes)
    case .stream(let stream):
        while let chunk = stream.nextChunk() { taken += chunk }
        return (response.status, taken)
    }
}

/// A string field of a JSON object answer.
func field(_ name: String, of bytes: [UInt8]) -> String? {
    guard case .object(let members)? = bytes.withUnsafeBytes({ try? JSONValue.parse($0) }) else { return nil }
    for (key, value) in members where key == name { if case .string(let s) = value { return s } }
    return nil
}

let layoutBody = Array(
    (#"{"items":["# + (0..<80).map { i in
        #"{"id":"r\#(i)","rect":[0,\#(i * 50),375,\#(i % 3 == 0 ? 50 : 44)],"reuse":"\#(i % 4 == 0 ? "header" : "row")","sticky":\#(i % 20 == 0)}"#
    }.joined(separator: ",") + "]}").utf8)
let posted = send("POST", "/v1/layouts", body: layoutBody)
require(posted.status == 201, "layout not stored: \(posted.status) \(escaped(posted.body))")
guard let layoutID = field("layout", of: posted.body) else { fatalError("no layout id") }

// A layout of stacks (docs/api.md "Stacks and edits"), for `{"patch": …}` lines: a chat (one lane, estimated
// sizes) and a masonry of two lanes, with a list between them.
let stackBody = Array(
    (#"{"sections":[{"id":"chat","reuse":"msg","stack":{"items":["# + (0..<40).map { i in
        #"{"id":"m\#(i)"\#(i % 3 == 0 ? #","size":[375,\#(40 + i)]"# : "")}"#
    }.joined(separator: ",") + #"],"estimate":[375,80],"spacing":4}},{"id":"list","list":{"count":5,"size":[375,44]}},"#
        + #"{"id":"grid","reuse":"tile","stack":{"items":["# + (0..<30).map { i in
            #"{"id":"g\#(i)"\#(i % 2 == 0 ? #","size":[180,\#(60 + 7 * i)]"# : "")}"#
        }.joined(separator: ",") + #"],"estimate":[180,120],"lanes":2,"laneSize":180,"spacing":8}}]}"#).utf8)
let postedStacks = send("POST", "/v1/layouts", body: stackBody)
require(postedStacks.status == 201, "stack layout not stored: \(postedStacks.status) \(escaped(postedStacks.body))")
guard let stackLayoutID = field("layout", of: postedStacks.body) else { fatalError("no layout id") }

let sessionVariants = [
    (layoutID, #""viewport":[375,667]"#),
    (layoutID, #""viewport":[375,667],"buffer":0,"pool":{"max":1,"perReuse":{"header":0}}"#),
    (layoutID, #""viewport":[375,667],"paging":{"mode":"page","size":[375,300]},"prefetch":0.5,"lazyLoad":true,"exposure":true,"links":{"a":{"viewport":[100,100],"contentSize":[100,5000]}}"#),
    (layoutID, #""viewport":[375,667],"loop":true"#),
    (layoutID, #""viewport":[375,667],"paging":{"mode":"snap","decelerationRate":0.99}"#),
    (stackLayoutID, #""viewport":[375,667]"#),
    (stackLayoutID, #""viewport":[375,667],"buffer":{"ahead":300,"behind":50},"exposure":true,"pool":{"max":2}"#),
]

func openSession(_ variant: (layout: String, body: String)) -> String {
    let reply = send("POST", "/v1/sessions", body: Array(#"{"layout":"\#(variant.layout)",\#(variant.body)}"#.utf8))
    require(reply.status == 201, "session not opened: \(reply.status) \(escaped(reply.body))")
    guard let id = field("session", of: reply.body) else { fatalError("no session id") }
    return id
}

/// Streams `body` to a new session: cut at `cuts`, the live answer taken at the cuts in `takes`.
func stream(_ body: [UInt8], variant: (layout: String, body: String), cuts: [Int], takes: Set<Int>, truncated: Bool) -> [UInt8] {
    let id = openSession(variant)
    defer { require(send("DELETE", "/v1/sessions/\(id)").status == 204, "session \(id) not deleted") }
    let reply = send("POST", "/v1/sessions/\(id)/viewport", contentType: "application/x-ndjson", feed: { sink in
        var taken: [UInt8] = []
        var start = 0
        for (k, end) in (cuts + [body.count]).enumerated() where end >= start {
            body[start..<end].withUnsafeBytes { sink.consume($0) }
            start = end
            if takes.contains(k), let live = sink as? any HTTPLiveBodySink {
                let ready = live.readyBytes
                let piece = live.takeReady()
                require(piece.count <= ready, "takeReady gave \(piece.count) bytes of \(ready) ready")
                taken += piece
            }
        }
        return taken
    }, truncated: truncated)
    require(reply.status == 200, "stream answered \(reply.status)")
    return reply.body
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let variant = input.pick(sessionVariants)
    let truncated = input.byte() % 8 == 0
    let cutCount = input.int(in: 0...8)
    var cuts = (0..<cutCount).map { _ in input.int(in: 0...4096) }
    let takes = Set((0...cutCount).filter { _ in input.bool() })
    var body = input.rest()
    if truncated { body = Array(body.prefix(configuration.http.maxBodyBytes)) }
    cuts = cuts.map { min($0, body.count) }.sorted()

    let whole = stream(body, variant: variant, cuts: [], takes: [], truncated: truncated)
    if getenv("FUZZ_TRACE") != nil { log("session \(variant.1) on \(variant.0 == stackLayoutID ? "the stack layout" : "the items layout"):\n\(escaped(body))\n->\n\(escaped(whole))") }
    let pieces = stream(body, variant: variant, cuts: cuts, takes: takes, truncated: truncated)
    require(whole == pieces, "the answer depends on how the body arrives:\n\(escaped(whole))\nvs\n\(escaped(pieces))")

    let bodyLines = body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
    let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    require(lines.last?.isEmpty ?? true, "the answer does not end with a newline: \(escaped(whole))")
    let answers = lines.dropLast()
    require(answers.count <= bodyLines + (truncated ? 1 : 0), "\(answers.count) answer lines for \(bodyLines) body lines")
    for (k, line) in answers.enumerated() {
        requireFiniteJSON(Array(line), "answer line \(k + 1)")
        if field("type", of: Array(line)) != nil || line.starts(with: Array(#"{"type""#.utf8)) {
            require(k == answers.count - 1, "a problem line that does not end the stream: \(escaped(whole))")
        }
    }
}
