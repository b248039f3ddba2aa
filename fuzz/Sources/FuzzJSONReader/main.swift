import FuzzServiceChecks
import FuzzSupport
import ViewportService

// The JSON reader on arbitrary bytes, against an independent strict recognizer (StrictJSON):
// - it never crashes;
// - what it accepts is one RFC 8259 JSON text in valid UTF-8, with the same strings, and each
//   number the correctly rounded double of its text (`Double(String)`);
// - what it refuses as a syntax error is not JSON (its other refusals are its own rules:
//   duplicate keys, nesting over 64, numbers beyond Double, lone surrogates, invalid UTF-8);
// - what it accepts, the JSONWriter writes back to bytes it reads as the same value.

extension JSONValue {
    /// Numbers and strings (keys included) in document order, like StrictJSON collects them.
    func collect(numbers: inout [Double], strings: inout [String]) {
        switch self {
        case .object(let members):
            for (k, v) in members {
                strings.append(k)
                v.collect(numbers: &numbers, strings: &strings)
            }
        case .array(let elements): for v in elements { v.collect(numbers: &numbers, strings: &strings) }
        case .string(let s): strings.append(s)
        case .number(let d): numbers.append(d)
        case .bool, .null: break
        }
    }
}

runFuzzer { bytes in
    let input = Array(bytes)
    let ours: Result<JSONValue, JSONError> = Result { try JSONValue.parse(bytes) }.mapError { $0 as! JSONError }
    let strict = StrictJSON.parse(input)
    switch ours {
    case .success(let value):
        guard let strict else { fatalError("fuzz check failed: JSONReader accepted what is not JSON: \(escaped(input))") }
        require(String(validating: input, as: UTF8.self) != nil, "JSONReader accepted invalid UTF-8: \(escaped(input))")
        var numbers: [Double] = []
        var strings: [String] = []
        value.collect(numbers: &numbers, strings: &strings)
        require(strings == strict.strings, "strings \(strings) vs \(strict.strings): \(escaped(input))")
        require(numbers.count == strict.numbers.count, "numbers \(numbers) vs \(strict.numbers)")
        for (d, text) in zip(numbers, strict.numbers) {
            require(Double(text) == d, "JSONReader read \(text) as \(d), Double(String) as \(String(describing: Double(text)))")
        }
        var w = JSONWriter()
        value.write(into: &w)
        let written = w.bytes
        let again = written.withUnsafeBytes { try? JSONValue.parse($0) }
        require(again == value, "JSONWriter wrote \(escaped(written)) for \(value)")
    case .failure(let error):
        if error.kind == .syntax, strict != nil {
            fatalError("fuzz check failed: JSONReader refused JSON (\(error)): \(escaped(input))")
        }
        if error.kind == .nonFinite, let strict {
            require(strict.numbers.contains { !(Double($0)?.isFinite ?? false) }, "refused as beyond Double, but every number is finite: \(escaped(input))")
        }
    }
}
