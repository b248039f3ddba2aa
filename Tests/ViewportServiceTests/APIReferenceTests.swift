import Foundation
import Testing

/// docs/api.md (the API reference, written for client authors) and openapi/viewportd.openapi.json
/// (the same API for machines, served at GET /openapi.json) must not drift apart: every operation
/// of the document is named in the reference and every endpoint the reference names is in the
/// document; every field, enumeration value and status of the document is mentioned in the
/// reference. Mentioned is not proof of a correct description, but a field or endpoint added to
/// one and not the other fails here.
@Suite struct APIReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let reference: String = (try? String(contentsOf: root.appendingPathComponent("docs/api.md"), encoding: .utf8)) ?? ""
    nonisolated(unsafe) static let document: [String: Any] = {
        guard let data = try? Data(contentsOf: root.appendingPathComponent("openapi/viewportd.openapi.json")),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }()
    static let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
    /// Paths the service serves that are files, not API, and so not in the document.
    static let files: Set<String> = ["/client/viewportd.js", "/demo"]

    static var paths: [String: [String: Any]] { document["paths"] as? [String: [String: Any]] ?? [:] }

    /// `METHOD /path` of every operation of the document.
    static var operations: Set<String> {
        Set(paths.flatMap { entry in methods.filter { entry.value[$0] != nil }.map { "\($0.uppercased()) \(entry.key)" } })
    }

    /// The text of the reference's code: fenced blocks and inline spans.
    static var code: String {
        var pieces: [Substring] = []
        for (i, block) in reference.components(separatedBy: "```").enumerated() {
            if i % 2 == 1 {
                pieces.append(Substring(block))
            } else {
                let spans = block.split(separator: "`", omittingEmptySubsequences: false)
                pieces += spans.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            }
        }
        return pieces.joined(separator: "\n")
    }

    static func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == "-" }

    /// Whether `word` occurs in `text` with no letter, digit, `_` or `-` on either side.
    static func contains(_ text: String, word: String) -> Bool {
        var start = text.startIndex
        while let range = text.range(of: word, range: start..<text.endIndex) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            if !(before.map(isWordCharacter) ?? false) && !(after.map(isWordCharacter) ?? false) { return true }
            start = range.upperBound
        }
        return false
    }

    /// Property names and string enumeration values of every schema in the document (examples
    /// left out).
    static func vocabulary() -> (fields: Set<String>, values: Set<String>) {
        var fields: Set<String> = []
        var values: Set<String> = []
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, child) in object where !["examples", "example", "x-invalid-examples"].contains(key) {
                    if key == "properties", let properties = child as? [String: Any] { fields.formUnion(properties.keys) }
                    if key == "enum", let cases = child as? [Any] { values.formUnion(cases.compactMap { $0 as? String }) }
                    walk(child)
                }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(document["components"] ?? [:])
        walk(document["paths"] ?? [:])
        return (fields, values)
    }

    @Test func bothFilesAreThere() {
        #expect(Self.reference.count > 10_000, "docs/api.md is missing or truncated")
        #expect(Self.operations.count >= 15, "openapi/viewportd.openapi.json is missing or has lost operations")
    }

    @Test func everyOperationOfTheDocumentIsNamedInTheReference() {
        for operation in Self.operations.sorted() {
            let named = Self.reference.contains("`\(operation)`")
            #expect(named, "docs/api.md does not name `\(operation)`")
        }
    }

    @Test func everyEndpointTheReferenceNamesIsInTheDocument() {
        let pathCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./{}-")
        var named: Set<String> = []
        for method in Self.methods.map({ $0.uppercased() }) {
            var start = Self.reference.startIndex
            while let range = Self.reference.range(of: "\(method) /", range: start..<Self.reference.endIndex) {
                start = range.upperBound
                if range.lowerBound > Self.reference.startIndex,
                   Self.isWordCharacter(Self.reference[Self.reference.index(before: range.lowerBound)]) { continue }
                var path = "/" + String(Self.reference[range.upperBound...].prefix(while: { pathCharacters.contains($0) }))
                while path.count > 1 && path.hasSuffix(".") { path.removeLast() }
                named.insert("\(method) \(path)")
            }
        }
        #expect(named.count >= Self.operations.count)
        let operations = Self.operations
        for endpoint in named.sorted() where !Self.files.contains(String(endpoint.split(separator: " ")[1])) {
            let documented = operations.contains(endpoint)
            #expect(documented, "docs/api.md names \(endpoint), which is not in the OpenAPI document")
        }
    }

    @Test func everyFieldAndValueOfTheDocumentIsMentionedInTheReference() {
        let code = Self.code
        let (fields, values) = Self.vocabulary()
        #expect(fields.count > 100 && values.count > 20)
        for field in fields.sorted() {
            let mentioned = Self.contains(code, word: field)
            #expect(mentioned, "docs/api.md never mentions the field `\(field)`")
        }
        for value in values.sorted() {
            let mentioned = Self.contains(code, word: value)
            #expect(mentioned, "docs/api.md never mentions the value `\(value)`")
        }
    }

    @Test func everyStatusTheDocumentAnswersIsInTheReferenceTable() {
        var statuses: Set<String> = []
        for item in Self.paths.values {
            for method in Self.methods {
                guard let operation = item[method] as? [String: Any], let responses = operation["responses"] as? [String: Any] else { continue }
                statuses.formUnion(responses.keys)
            }
        }
        #expect(statuses.count >= 12)
        for status in statuses.sorted() {
            let listed = Self.reference.contains("| \(status) |")
            #expect(listed, "docs/api.md's status table has no row for \(status)")
        }
    }
}
