import Testing
@testable import ViewportHTTP
import ViewportTestSupport

/// The pure parts of the WebSocket layer: frame parsing and writing, the handshake's accept key
/// and validation.
@Suite struct WebSocketFrameTests {
    typealias Client = WebSocketTestClient

    static func parse(_ bytes: [UInt8], limit: Int = 1 << 20) -> [WebSocketFrameParser.Event] {
        var parser = WebSocketFrameParser(maxMessageBytes: limit)
        parser.append(bytes)
        var events: [WebSocketFrameParser.Event] = []
        while let event = parser.next() { events.append(event) }
        return events
    }

    static func failureCode(_ events: [WebSocketFrameParser.Event]) -> UInt16? {
        if case .failure(let code, _) = events.last { return code }
        return nil
    }

    /// RFC 6455 §1.3's sample (also what Python's hashlib/base64 give for key + GUID).
    @Test func rfcSampleKeyGivesTheRFCAcceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// Accept values of other keys, as Python's hashlib and base64 give them for key + GUID.
    @Test func acceptValuesMatchKnownAnswers() {
        for (key, accept) in [
            ("AAAAAAAAAAAAAAAAAAAAAA==", "ICX+Yqv66kxgM0FcWaLWlFLwTAI="),
            ("/////////////////////w==", "XXpj4jYzLM2yUE0C7TIgMwTQh2g="),
            ("x3JJHMbDL1EzLkh9GBhXDw==", "HSmrc0sMlYUkAGmm5OPpG2HaGWk="),
        ] {
            #expect(WebSocketHandshake.acceptValue(forKey: key) == accept, "\(key)")
        }
    }

    @Test func aKeyMustBeCanonicalBase64OfSixteenBytes() {
        #expect(WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(WebSocketHandshake.isValidKey("/////////////////////w=="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZR=="))  // non-zero padding bits
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZQ"))  // padding missing
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25j"))  // 15 bytes
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZXNz"))  // 18 bytes
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub25jZ!=="))
        #expect(!WebSocketHandshake.isValidKey("dGhlIHNhbXBsZSBub2=jZQ=="))
        #expect(!WebSocketHandshake.isValidKey(""))
    }

    @Test func lengthsOf125_126_65535And65536UseTheRightEncodingBothWays() {
        for size in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
            // Writer: 7-bit, 16-bit, 64-bit length forms, unmasked.
            let frame = WebSocketFrame.encode(.binary, payload: payload)
            let headerLength = size <= 125 ? 2 : size <= 65_535 ? 4 : 10
            #expect(frame.count == headerLength + size, "size \(size)")
            #expect(frame[0] == 0x82)
            #expect(frame[1] & 0x80 == 0, "server frames are not masked")
            #expect(frame[1] & 0x7F == (size <= 125 ? UInt8(size) : size <= 65_535 ? 126 : 127))
            // Parser: the client's masked frame of that size.
            let events = Self.parse(Client.frame(opcode: Client.binary, payload: payload))
            #expect(events == [.message(binary: true, payload: payload)], "size \(size)")
        }
    }

    @Test func bytesArrivingOneAtATimeParseTheSame() {
        let bytes = Client.frame(opcode: Client.text, payload: Array("hello".utf8), fin: false)
            + Client.frame(opcode: Client.ping, payload: [1, 2])
            + Client.frame(opcode: 0, payload: Array(String(repeating: "w", count: 300).utf8))
        var parser = WebSocketFrameParser(maxMessageBytes: 1000)
        var events: [WebSocketFrameParser.Event] = []
        for byte in bytes {
            parser.append([byte])
            while let event = parser.next() { events.append(event) }
        }
        #expect(events == [.ping([1, 2]), .message(binary: false, payload: Array(("hello" + String(repeating: "w", count: 300)).utf8))])
    }

    /// The text check's ASCII pass and the standard library's strict validation agree on every
    /// payload: ASCII, ASCII with one byte of any value spliced in, valid multi-byte text, and
    /// random bytes; a text frame carrying each (masked by the client) parses to the payload or
    /// fails with 1007.
    @Test func textValidationAgreesWithTheStandardLibrary() {
        var rng = TestRandom(seed: 0x00F8_7E57)
        for round in 0..<3_000 {
            let length = Int.random(in: 0...80, using: &rng)
            var payload: [UInt8]
            switch round % 4 {
            case 0: payload = (0..<length).map { _ in UInt8.random(in: 0...0x7F, using: &rng) }
            case 1:
                payload = (0..<max(1, length)).map { _ in UInt8.random(in: 0x20...0x7E, using: &rng) }
                payload[Int.random(in: 0..<payload.count, using: &rng)] = UInt8.random(in: 0...0xFF, using: &rng)
            case 2: payload = Array(String((0..<length).map { _ in ["a", "é", "€", "𝄞", "\u{7F}"].randomElement(using: &rng) ?? "a" }.joined()).utf8)
            default: payload = (0..<length).map { _ in UInt8.random(in: 0...0xFF, using: &rng) }
            }
            let valid = payload.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
            #expect(WebSocketFrameParser.isValidUTF8(payload) == valid, "\(payload)")
            let events = Self.parse(Client.frame(opcode: Client.text, payload: payload))
            if valid {
                #expect(events == [.message(binary: false, payload: payload)], "\(payload)")
            } else {
                #expect(Self.failureCode(events) == 1007, "\(payload)")
            }
        }
    }

    @Test func fragmentsAreReassembledWithControlFramesInterleaved() {
        let bytes = Client.frame(opcode: Client.text, payload: Array("frag".utf8), fin: false)
            + Client.frame(opcode: Client.ping, payload: Array("p1".utf8))
            + Client.frame(opcode: 0, payload: Array("men".utf8), fin: false)
            + Client.frame(opcode: Client.pong, payload: [])
            + Client.frame(opcode: 0, payload: Array("ted".utf8), fin: true)
            + Client.frame(opcode: Client.text, payload: Array("next".utf8))
        #expect(Self.parse(bytes) == [
            .ping(Array("p1".utf8)), .pong([]), .message(binary: false, payload: Array("fragmented".utf8)),
            .message(binary: false, payload: Array("next".utf8)),
        ])
    }

    @Test func unmaskedClientFramesFailWith1002() {
        #expect(Self.failureCode(Self.parse(Client.frame(opcode: Client.text, payload: [65], masked: false))) == 1002)
    }

    @Test func everyProtocolErrorClosesWithItsCode() {
        let cases: [(String, [UInt8], UInt16)] = [
            ("RSV1", Client.frame(opcode: Client.text, payload: [65], rsv: 4), 1002),
            ("RSV3", Client.frame(opcode: Client.text, payload: [65], rsv: 1), 1002),
            ("opcode 3", Client.frame(opcode: 3, payload: []), 1002),
            ("opcode 0xB", Client.frame(opcode: 0xB, payload: []), 1002),
            ("fragmented ping", Client.frame(opcode: Client.ping, payload: [], fin: false), 1002),
            ("ping of 126 bytes", Client.frame(opcode: Client.ping, payload: [UInt8](repeating: 0, count: 126)), 1002),
            ("continuation first", Client.frame(opcode: 0, payload: [65]), 1002),
            ("text inside a fragmented message",
             Client.frame(opcode: Client.text, payload: [65], fin: false) + Client.frame(opcode: Client.text, payload: [66]), 1002),
            ("64-bit length with top bit", Client.frame(opcode: Client.binary, payload: [], declaredLength: 1 << 63), 1002),
            ("close with 1 byte", Client.frame(opcode: Client.close, payload: [3]), 1002),
            ("close code 1005", Client.frame(opcode: Client.close, payload: [0x03, 0xED]), 1002),
            ("close code 999", Client.frame(opcode: Client.close, payload: [0x03, 0xE7]), 1002),
            ("close code 2000", Client.frame(opcode: Client.close, payload: [0x07, 0xD0]), 1002),
            ("close code 5000", Client.frame(opcode: Client.close, payload: [0x13, 0x88]), 1002),
            ("invalid UTF-8", Client.frame(opcode: Client.text, payload: [0xC3, 0x28]), 1007),
            ("surrogate", Client.frame(opcode: Client.text, payload: [0xED, 0xA0, 0x80]), 1007),
            ("overlong", Client.frame(opcode: Client.text, payload: [0xC0, 0xAF]), 1007),
            ("UTF-8 split across fragments then cut",
             Client.frame(opcode: Client.text, payload: [0xE2, 0x82], fin: false) + Client.frame(opcode: 0, payload: [0x41]), 1007),
            ("close reason not UTF-8", Client.frame(opcode: Client.close, payload: [0x03, 0xE8, 0xFF]), 1007),
        ]
        for (name, bytes, code) in cases {
            #expect(Self.failureCode(Self.parse(bytes)) == code, "\(name)")
        }
    }

    @Test func aMessageOverTheLimitFailsWith1009FromTheHeaderAlone() {
        // Only the header of a 1 GiB frame: the parser must not wait for (or buffer) its payload.
        let header = Array(Client.frame(opcode: Client.binary, payload: [], declaredLength: 1 << 30).prefix(14))
        #expect(Self.failureCode(Self.parse(header, limit: 1000)) == 1009)
        // The limit counts the whole message across fragments.
        let fragments = Client.frame(opcode: Client.text, payload: [UInt8](repeating: 65, count: 600), fin: false)
            + Array(Client.frame(opcode: 0, payload: [UInt8](repeating: 65, count: 401)).prefix(8))
        #expect(Self.failureCode(Self.parse(fragments, limit: 1000)) == 1009)
        // Exactly at the limit is fine.
        let exact = [UInt8](repeating: 65, count: 1000)
        #expect(Self.parse(Client.frame(opcode: Client.text, payload: exact), limit: 1000) == [.message(binary: false, payload: exact)])
    }

    @Test func closeFramesCarryTheirCodeAndEndTheParser() {
        var bytes = Client.frame(opcode: Client.close, payload: [0x03, 0xE8] + Array("bye".utf8))
        bytes += Client.frame(opcode: Client.text, payload: [65])
        #expect(Self.parse(bytes) == [.close(code: 1000, reason: "bye")])
        #expect(Self.parse(Client.frame(opcode: Client.close, payload: [])) == [.close(code: nil, reason: "")])
        #expect(Self.parse(Client.frame(opcode: Client.close, payload: [0x0F, 0xA0])) == [.close(code: 4000, reason: "")])
    }

    @Test func closeFramesWeWriteFitTheControlFrameLimit() {
        let frame = WebSocketFrame.close(code: 1001, reason: String(repeating: "é", count: 100))
        #expect(frame.count <= 127)
        #expect(frame[0] == 0x88)
        #expect(Array(frame[2...3]) == [0x03, 0xE9])
        #expect(String(validating: frame[4...], as: UTF8.self) != nil, "cut at a character boundary")
        #expect(WebSocketFrame.close(code: nil) == [0x88, 0x00])
    }

    @Test func handshakeValidationNamesWhatIsWrong() throws {
        func head(_ headers: [(String, String)], method: String = "GET", contentLength: Int? = nil) -> HTTPRequestHead {
            HTTPRequestHead(method: method, path: "/ws", headers: headers.map { (name: $0.0, value: $0.1) }, contentLength: contentLength)
        }
        let good: [(String, String)] = [
            ("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade"), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Protocol", "a, b"), ("sec-websocket-protocol", "c"),
        ]
        let handshake = try WebSocketHandshake.validate(head(good)).get()
        #expect(handshake.offeredProtocols == ["a", "b", "c"])
        #expect(handshake.acceptValue == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

        func status(_ headers: [(String, String)], method: String = "GET", contentLength: Int? = nil) -> (Int, [String])? {
            guard case .failure(let error) = WebSocketHandshake.validate(head(headers, method: method, contentLength: contentLength)) else { return nil }
            return (error.status, error.headers.map { "\($0.name): \($0.value)" })
        }
        func without(_ name: String) -> [(String, String)] { good.filter { $0.0 != name } }
        func replacing(_ name: String, _ value: String) -> [(String, String)] { without(name) + [(name, value)] }
        #expect(status(good, method: "POST")?.0 == 405)
        #expect(status(without("Upgrade"))?.0 == 426)
        #expect(status(without("Upgrade"))?.1.contains("Upgrade: websocket") == true)
        #expect(status(replacing("Connection", "keep-alive"))?.0 == 426)
        #expect(status(replacing("Upgrade", "h2c"))?.0 == 426)
        #expect(status(without("Sec-WebSocket-Version"))?.0 == 426)
        #expect(status(replacing("Sec-WebSocket-Version", "8"))?.1 == ["Sec-WebSocket-Version: 13"])
        #expect(status(without("Sec-WebSocket-Key"))?.0 == 400)
        #expect(status(replacing("Sec-WebSocket-Key", "c2hvcnQ="))?.0 == 400)  // 5 bytes
        #expect(status(replacing("Sec-WebSocket-Key", "not base64 at all!!!!!=="))?.0 == 400)
        #expect(status(good + [("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")])?.0 == 400)  // two keys
        #expect(status(good, contentLength: 5)?.0 == 400)
        #expect(status(good, contentLength: 0) == nil)
    }
}
