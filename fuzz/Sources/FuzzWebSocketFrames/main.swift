import FuzzSupport
import ViewportHTTP

// The WebSocket frame parser on arbitrary client bytes: the first byte picks the message limit,
// the next ones where the stream is cut into pieces, the rest are the bytes on the wire.
// - it never crashes and never buffers more than it was given;
// - the events do not depend on how the bytes arrive (one piece, or cut anywhere);
// - a message is within the limit, a text message is valid UTF-8;
// - after a close or a failure, it answers nothing more.

func events(_ wire: [UInt8], cuts: [Int], limit: Int) -> [WebSocketFrameParser.Event] {
    var parser = WebSocketFrameParser(maxMessageBytes: limit)
    var out: [WebSocketFrameParser.Event] = []
    var start = 0
    var given = 0
    for end in cuts + [wire.count] where end >= start {
        parser.append(Array(wire[start..<end]))
        given += end - start
        start = end
        while let event = parser.next() {
            out.append(event)
            if case .message(_, let payload) = event {
                require(payload.count <= limit, "message of \(payload.count) bytes past the limit \(limit)")
            }
        }
        require(parser.bufferedBytes <= given, "parser holds \(parser.bufferedBytes) bytes of \(given) given")
    }
    if let last = out.last {
        switch last {
        case .close, .failure:
            parser.append([0x81, 0x80, 0, 0, 0, 0])
            require(parser.next() == nil, "an event after \(last)")
        default: break
        }
    }
    for (k, event) in out.enumerated() {
        switch event {
        case .close, .failure: require(k == out.count - 1, "events after \(event): \(out)")
        case .message(false, let payload): require(String(validating: payload, as: UTF8.self) != nil, "text message not UTF-8")
        default: break
        }
    }
    return out
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let limit = input.pick([0, 1, 125, 126, 1000, 65_536])
    let cutCount = input.int(in: 0...6)
    var cuts = (0..<cutCount).map { _ in input.int(in: 0...512) }
    let wire = input.rest()
    cuts = cuts.map { min($0, wire.count) }.sorted()
    let whole = events(wire, cuts: [], limit: limit)
    let pieces = events(wire, cuts: cuts, limit: limit)
    let bytewise = events(wire, cuts: Array(0..<wire.count), limit: limit)
    require(whole == pieces && whole == bytewise, "events depend on how the bytes arrive: \(whole) vs \(pieces) vs \(bytewise)")
}
