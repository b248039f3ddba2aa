import Testing

@testable import ViewportJSON

/// Parses `text` as one complete value, skipping it (validates everything).
private func validate(_ text: String) throws {
    try JSONReader.read(text) { r in
        try r.skipValue()
        try r.finish()
    }
}

private func validate(bytes: [UInt8]) throws {
    try JSONReader.read(bytes) { r in
        try r.skipValue()
        try r.finish()
    }
}

private func error(_ body: () throws -> Void) -> JSONError? {
    do {
        try body()
        return nil
    } catch let error as JSONError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

private func readDouble(_ text: String) throws -> Double {
    try JSONReader.read(text) { r in
        let value = try r.readDouble()
        try r.finish()
        return value
    }
}

private func readString(_ bytes: [UInt8]) throws -> String {
    try JSONReader.read(bytes) { r in
        let value = try r.readString()
        try r.finish()
        return value
    }
}

@Suite struct JSONReaderGrammarTests {
    @Test(arguments: [
        "{}", "[]", "0", "-0", "1.5e+10", "-1E-3", "\"\"", "true", "false", "null", " [1, 2 ,3 ] ",
        "{\"a\":{\"b\":[{}, [], null]}}", "\t\r\n 42 \n", "\"\\u00e9\\n\\/\"", "123456789012345678901234567890",
        "0.0000000000000000000000000000001", "[[[[[[[[[[]]]]]]]]]]", "{\"a\":1,\"b\":\"x\"}",
    ])
    func acceptsValidDocuments(_ text: String) throws {
        try validate(text)
    }

    @Test(arguments: [
        "", " ", "[1,]", "{\"a\":1,}", "[,1]", "01", "-01", "1.", ".5", "+1", "-", "1e", "1e+", "0x10",
        "NaN", "-NaN", "Infinity", "-Infinity", "nul", "tru", "truex", "[1 2]", "{\"a\" 1}", "{a:1}",
        "{'a':1}", "\"abc", "[\"abc]", "[1", "{\"a\":1", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "1 2",
        "[]]", "{}}", "\u{FEFF}{}", "{\"a\":1 \"b\":2}", "[1,,2]", "-.5", "1.e5", "01.5",
    ])
    func rejectsInvalidDocumentsAsSyntaxErrors(_ text: String) {
        let failure = error { try validate(text) }
        #expect(failure?.kind == .syntax, "\(text.debugDescription) → \(String(describing: failure))")
    }

    @Test func rejectsRawControlCharactersInStrings() {
        for byte in UInt8(0)..<0x20 {
            let failure = error { try validate(bytes: [0x22, 0x61, byte, 0x22]) }
            #expect(failure?.kind == .syntax, "byte \(byte)")
            #expect(failure?.message.contains("control character") == true)
        }
    }

    @Test(arguments: [
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xFF], [0xFE], [0x80], [0xC3], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0xE0, 0x80, 0x80], [0xF0, 0x80, 0x80, 0x80], [0xC1, 0xBF],
    ] as [[UInt8]])
    func rejectsInvalidUTF8InStrings(_ sequence: [UInt8]) {
        let failure = error { try validate(bytes: [0x22] + sequence + [0x22]) }
        #expect(failure?.kind == .invalidUTF8, "\(sequence) → \(String(describing: failure))")
        let asKey = error { try validate(bytes: [0x7B, 0x22] + sequence + [0x22, 0x3A, 0x31, 0x7D]) }
        #expect(asKey?.kind == .invalidUTF8)
    }

    @Test func rejectsBytesOutsideStrings() {
        #expect(error { try validate(bytes: [0x5B, 0xFF, 0x5D]) }?.kind == .syntax)
    }

    @Test func acceptsValidMultibyteUTF8() throws {
        let text = "é€𝄞😀中文"
        #expect(try readString(Array("\"\(text)\"".utf8)) == text)
    }

    @Test func rejectsDeepNestingWithoutOverflowingTheStack() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let failure = error { try validate(deep) }
        #expect(failure?.kind == .tooDeep)
        let deepObjects = String(repeating: "{\"a\":", count: 10_000)
        #expect(error { try validate(deepObjects) }?.kind == .tooDeep)
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let text = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        try validate(text)
        let over = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(error { try validate(over) }?.kind == .tooDeep)
    }

    @Test func rejectsDuplicateKeysEvenWhenSkipping() {
        let failure = error { try validate("{\"a\":1,\"b\":{\"x\":1,\"x\":2}}") }
        #expect(failure?.kind == .duplicateField)
        #expect(failure?.description == "b: duplicate field \"x\"")
        // The same key written with an escape is the same key.
        #expect(error { try validate("{\"ab\":1,\"a\\u0062\":2}") }?.kind == .duplicateField)
        // In either order, among other keys and after nested objects (raw keys are recorded by their
        // place in the input, escaped ones by their decoded bytes).
        #expect(error { try validate("{\"a\\u0062\":1,\"c\":{\"ab\":0},\"ab\":2}") }?.kind == .duplicateField)
        #expect(error { try validate("{\"x\":{\"y\":1,\"z\":2},\"y\":{\"q\\u0031\":1,\"q1\":2}}") }?.description == "y: duplicate field \"q1\"")
        #expect(error { try validate("{\"x\":{\"y\":1,\"z\":2},\"y\":3,\"z\":{\"x\":0},\"w\":4}") } == nil)
        // Keys of sibling and nested objects are independent.
        #expect(error { try validate("{\"a\":{\"a\":1},\"b\":{\"a\":2}}") } == nil)
    }

    /// `readObject(fields:)`: the key's number among the fields (-1 for others), a repeated field
    /// refused as the plain `readObject` refuses it (same error, same offset), others checked too.
    @Test func readsObjectsWithKnownFields() throws {
        let fields: [StaticString] = ["id", "rect", "reuse"]
        func read(_ text: String) throws -> [String] {
            var seen: [String] = []
            try JSONReader.read(text) { r in
                try r.readObject(fields: fields) { r, field, key in
                    seen.append("\(field):\(key.string)")
                    try r.skipValue()
                }
                try r.finish()
            }
            return seen
        }
        func plain(_ text: String) throws {
            try JSONReader.read(text) { r in
                try r.readObject { r, _ in try r.skipValue() }
                try r.finish()
            }
        }
        #expect(try read(#"{"reuse":1,"id":2,"x":3,"r\u0065use2":4,"rect":[]}"#) == ["2:reuse", "0:id", "-1:x", "-1:reuse2", "1:rect"])
        for text in [
            #"{"id":1,"rect":2,"id":3}"#, #"{"id":1,"i\u0064":3}"#, #"{"x":1,"id":2,"x":3}"#, #"{"x":1,"y":2,"\u0078":3}"#,
            #"{"rect":1,  "rect" :2}"#,
        ] {
            let known = error { _ = try read(text) }
            let generic = error { try plain(text) }
            #expect(known?.kind == .duplicateField, "\(text)")
            #expect(known?.description == generic?.description && known?.offset == generic?.offset, "\(text)")
        }
        #expect(error { _ = try read(#"{"id":1,"rect":2,"reuse":3,"x":4,"y":5}"#) } == nil)
    }

    @Test func rejectsDuplicateKeysInLargeObjects() {
        let keys = (0..<500).map { "\"k\($0)\":\($0)" }
        #expect(error { try validate("{" + keys.joined(separator: ",") + "}") } == nil)
        let duplicated = keys + ["\"k250\":0"]
        let failure = error { try validate("{" + duplicated.joined(separator: ",") + "}") }
        #expect(failure?.kind == .duplicateField)
        #expect(failure?.message == "duplicate field \"k250\"")
        // The same with an escaped key among the first 32 (kept as decoded bytes in the set).
        let escaped = ["\"k\\u0032\":0"] + keys.dropFirst(3) + ["\"k2\":1"]
        #expect(error { try validate("{" + escaped.joined(separator: ",") + "}") }?.message == "duplicate field \"k2\"")
    }
}

@Suite struct JSONReaderStringTests {
    @Test func decodesAllEscapes() throws {
        let text = #""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\uD83D\uDE00\u0000""#
        #expect(try readString(Array(text.utf8)) == "\"\\/\u{8}\u{C}\n\r\tAé€😀\u{0}")
    }

    @Test(arguments: [#""\uD83D""#, #""\uDE00""#, #""\uD83Dx""#, #""\uD83D\u0041""#, #""\uD83D\n""#])
    func rejectsLoneSurrogates(_ text: String) {
        let failure = error { _ = try readString(Array(text.utf8)) }
        #expect(failure?.kind == .invalidUTF8, "\(text) → \(String(describing: failure))")
    }

    @Test func readsStringBytesWithoutCreatingAString() throws {
        var bytes: [UInt8] = [0x21]
        let appended = try JSONReader.read(#"["a\"b", "é"]"#) { r -> Int in
            var total = 0
            try r.readArray { r, _ in total += try r.readStringBytes(into: &bytes) }
            return total
        }
        #expect(appended == 5)
        #expect(bytes == [0x21] + Array("a\"bé".utf8))
    }

    @Test func comparesKeysWithoutAllocating() throws {
        var seen: [String] = []
        try JSONReader.read(#"{"offset":1,"se\u0071":2,"other":3}"#) { r in
            try r.readObject { r, key in
                switch key {
                case "offset": seen.append("offset")
                case "seq": seen.append("seq")
                default: #expect(key.equals("other")); #expect(key != "offset")
                }
            }
        }
        #expect(seen == ["offset", "seq"])
    }

    @Test func readsAStringWithEscapesAfterPlainText() throws {
        let long = String(repeating: "x", count: 100)
        #expect(try readString(Array("\"\(long)\\n\(long)\"".utf8)) == long + "\n" + long)
    }
}

@Suite struct JSONReaderNumberTests {
    @Test(arguments: [
        "0.1", "1e-7", "123456789.123", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
        "0.30000000000000004", "9007199254740993", "3.141592653589793", "1e22", "1e23", "123e-20",
        "4.9406564584124654e-324", "8.98846567431158e307", "0.000001", "1234567890123456789012",
        "2.5e-310", "-42.5", "100", "1E+2",
    ])
    func readsDoublesExactly(_ text: String) throws {
        let expected = try #require(Double(text))
        let value = try readDouble(text)
        #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) vs \(expected)")
    }

    @Test func readsNegativeZero() throws {
        let value = try readDouble("-0")
        #expect(value == 0 && value.sign == .minus)
        #expect(try readDouble("-0.0e5").sign == .minus)
    }

    @Test(arguments: ["1e309", "-1e400", "1.8e308", "123456789e999999999999"])
    func rejectsNumbersOutOfRangeAsNonFinite(_ text: String) {
        let failure = error { _ = try readDouble(text) }
        #expect(failure?.kind == .nonFinite)
        #expect(failure?.message.contains(text) == true)
    }

    @Test func underflowsTinyNumbersToZero() throws {
        #expect(try readDouble("1e-400") == 0)
    }

    @Test func readsIntegers() throws {
        func int(_ text: String) throws -> Int {
            try JSONReader.read(text) { try $0.readInt() }
        }
        #expect(try int("0") == 0)
        #expect(try int("-0") == 0)
        #expect(try int("1200") == 1200)
        #expect(try int("-5") == -5)
        #expect(try int("9223372036854775807") == Int.max)
        #expect(try int("-9223372036854775808") == Int.min)
        #expect(try int("8.0") == 8)
        #expect(try int("1e3") == 1000)
        #expect(error { _ = try int("9223372036854775808") }?.kind == .type)
        #expect(error { _ = try int("1.5") }?.message == "expected an integer, got 1.5")
        #expect(error { _ = try int("1e30") }?.kind == .type)
        // Integral values past 2^53 written with a fraction or an exponent are read exactly (a
        // double would round 9007199254740993.0); a fraction that is not zero is no integer.
        #expect(try int("9007199254740992.0") == 9_007_199_254_740_992)
        #expect(try int("9007199254740993.0") == 9_007_199_254_740_993)
        #expect(try int("-922337203685477580.8e1") == Int.min)
        #expect(try int("9223372036854775807e0") == Int.max)
        #expect(try int("0.5e1") == 5)
        #expect(error { _ = try int("9223372036854775808.0") }?.message == "integer 9223372036854775808.0 is out of range")
        #expect(error { _ = try int("9007199254740993.5") }?.message == "expected an integer, got 9007199254740993.5")
        #expect(error { _ = try int("1e-400") }?.message == "expected an integer, got 1e-400")
        #expect(error { _ = try int("\"1\"") }?.message == "expected a number, got a string")
    }

    @Test func readsFixedLengthNumberArrays() throws {
        let quad = try JSONReader.read("[1, 2.5, -3, 4e2]") { try $0.readDoubleQuad() }
        #expect(quad == (1, 2.5, -3, 400))
        let pair = try JSONReader.read("[0,1200]") { try $0.readDoublePair() }
        #expect(pair == (0, 1200))
        #expect(try JSONReader.read("[1,2,3]") { try $0.readDoubles(count: 3) } == [1, 2, 3])
        let short = error { _ = try JSONReader.read("[1,2,3]") { try $0.readDoubleQuad() } }
        #expect(short?.message == "expected an array of 4 numbers, got 3")
        let long = error { _ = try JSONReader.read("[1,2,3,4,5]") { try $0.readDoubleQuad() } }
        #expect(long?.message == "expected an array of 4 numbers, got 5")
        let notArray = error { _ = try JSONReader.read("{}") { try $0.readDoublePair() } }
        #expect(notArray?.message == "expected an array of 2 numbers, got an object")
    }
}

@Suite struct JSONReaderErrorTests {
    private static let layout = #"""
        {"items":[{"id":"a","rect":[0,0,1,1]},{"id":"b","rect":[0,0,1,1]},
        {"id":"c","rect":[0,0,1,1]},{"id":"d","rect":[0,0,"x",1]}]}
        """#

    private func decodeLayout(_ text: String) throws {
        try JSONReader.read(text) { r in
            try r.readObject { r, key in
                guard key == "items" else { throw r.unknownField(key, in: "layout") }
                try r.readArray { r, _ in
                    var id: String?
                    try r.readObject { r, key in
                        switch key {
                        case "id": id = try r.readString()
                        case "rect": _ = try r.readDoubleQuad()
                        case "reuse": if !r.readNullIfPresent() { _ = try r.readString() }
                        default: throw r.unknownField(key)
                        }
                    }
                    guard id != nil else { throw r.missingField("id") }
                }
            }
            try r.finish()
        }
    }

    @Test func namesThePathOfAWrongElement() {
        let failure = error { try decodeLayout(Self.layout) }
        #expect(failure?.kind == .type)
        #expect(failure?.path == "items[3].rect[2]")
        #expect(failure?.description == "items[3].rect[2]: expected a number, got a string")
        #expect(failure?.httpStatus == 400)
    }

    @Test func namesAWrongLengthArray() {
        let failure = error { try decodeLayout(#"{"items":[{"id":"a","rect":[0,0,1]}]}"#) }
        #expect(failure?.description == "items[0].rect: expected an array of 4 numbers, got 3")
    }

    @Test func namesUnknownFieldsAtTheirObject() {
        let nested = error { try decodeLayout(#"{"items":[{"id":"a","rect":[0,0,1,1],"reus":"x"}]}"#) }
        #expect(nested?.kind == .unknownField)
        #expect(nested?.description == "items[0]: unknown field \"reus\"")
        let root = error { try decodeLayout(#"{"ofset":[0,0]}"#) }
        #expect(root?.description == "unknown field \"ofset\" at layout")
    }

    @Test func namesMissingFields() {
        let failure = error { try decodeLayout(#"{"items":[{"id":"a"},{"rect":[0,0,1,1]}]}"#) }
        #expect(failure?.kind == .missingField)
        #expect(failure?.description == "items[1]: missing field \"id\"")
    }

    @Test func reportsValueErrorsAs422() {
        let failure = error {
            try JSONReader.read(#"{"buffer":-1}"#) { r in
                try r.readObject { r, _ in
                    if try r.readDouble() < 0 { throw r.valueError("must be ≥ 0") }
                }
            }
        }
        #expect(failure?.kind == .value)
        #expect(failure?.httpStatus == 422)
        #expect(failure?.description == "buffer: must be ≥ 0")
    }

    @Test func quotesKeysThatAreNotNames() {
        let failure = error {
            try JSONReader.read(#"{"pool":{"perReuse":{"a.b":"x"}}}"#) { r in
                try r.readObject { r, _ in try r.readObject { r, _ in try r.readObject { r, _ in _ = try r.readInt() } } }
            }
        }
        #expect(failure?.path == "pool.perReuse[\"a.b\"]")
    }

    @Test func syntaxErrorsCarryTheOffset() {
        let failure = error { try validate("[1,\n 2,]") }
        #expect(failure?.kind == .syntax)
        #expect(failure?.message == "trailing comma in array (at byte 7)")
        #expect(failure?.offset == 7)
    }

    @Test func skipsMembersTheDecoderDoesNotRead() throws {
        var seq = 0
        try JSONReader.read(#"{"ignored":{"deep":[1,{"x":null}]},"seq":8}"#) { r in
            try r.readObject { r, key in
                if key == "seq" { seq = try r.readInt() }
            }
            try r.finish()
        }
        #expect(seq == 8)
    }

    @Test func peeksTheKindOfTheNextValue() throws {
        try JSONReader.read(#" ["id", {}, [], 1, -2, true, null]"#) { r in
            var kinds: [JSONValueKind?] = []
            try r.readArray { r, _ in kinds.append(r.peekKind()) }
            #expect(kinds == [.string, .object, .array, .number, .number, .bool, .null])
        }
    }
}
