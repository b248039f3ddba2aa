import Foundation
import Testing
import ViewportService

/// `GET /openapi.json`: the document SwiftPM embeds in the binary (the ViewportOpenAPI target,
/// `.embedInCode`) is openapi/viewportd.openapi.json byte for byte, the one file humans and
/// client generators read; nothing regenerates or copies it.
@Suite struct OpenAPIDocumentTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("openapi/viewportd.openapi.json")

    @Test func theServedDocumentIsTheRepositoryFileByteForByte() throws {
        let file = Array(try Data(contentsOf: Self.file))
        #expect(file.count > 100_000, "openapi/viewportd.openapi.json looks truncated: \(file.count) bytes")
        try withService { service in
            let reply = try service.connect().get("/openapi.json")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(reply.body.count == file.count)
            #expect(reply.body == file)
        }
    }

    @Test func theServedDocumentIsOpenAPI31ForAPIVersion1() throws {
        try withService { service in
            let json = try service.connect().get("/openapi.json").json
            #expect(json["openapi"] as? String == "3.1.0")
            #expect((json["info"] as? [String: Any])?["version"] as? String == "1")
            #expect((json["paths"] as? [String: Any])?["/v1/sessions/{id}/viewport"] != nil)
        }
    }

    @Test func theDocumentAnswersOnlyGetAndNeedsTheTokenWhenAuthIsOn() throws {
        try withService({ $0.authToken = "secret" }) { service in
            let client = try service.connect()
            #expect(try client.send("GET", "/openapi.json", auth: false).status == 401)
            let post = try client.post("/openapi.json", "{}")
            #expect(post.problem(405)["status"] as? Int == 405)
            #expect(post.header("Allow") == "GET")
            #expect(try client.get("/openapi.json").status == 200)
        }
    }
}
