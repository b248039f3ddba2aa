import Foundation
import Testing
import ViewportService

/// `GET /client/viewportd.js` and `GET /demo`: served from the binary, with their media types,
/// GET only, behind auth like every path but /healthz. (The browser itself is exercised by
/// scripts/browser-test.py.)
@Suite struct ClientAssetTests {
    @Test func theClientModuleIsServedAsJavaScriptWithItsExports() throws {
        try withService { service in
            let reply = try service.connect().get("/client/viewportd.js")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(reply.text.contains("export async function openSession("))
            #expect(reply.text.contains("export async function attachSession("))
            #expect(reply.text.contains("export function domViews("))
        }
    }

    @Test func theServedModuleIsTheRepositoryFileByteForByte() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("clients/js/viewportd.js")
        let file = try Data(contentsOf: source)
        try withService { service in
            let reply = try service.connect().get("/client/viewportd.js")
            #expect(reply.body == Array(file))
        }
    }

    @Test func theDemoPageIsHTMLThatImportsTheModuleAndHasTheTestHooks() throws {
        try withService { service in
            let reply = try service.connect().get("/demo")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "text/html; charset=utf-8")
            #expect(reply.text.contains(#"from "./client/viewportd.js""#))
            #expect(reply.text.contains(#"id="viewport""#))
            #expect(reply.text.contains("window.viewportd"))
        }
    }

    @Test func theAssetsAnswerOnlyGet() throws {
        try withService { service in
            let client = try service.connect()
            for path in ["/client/viewportd.js", "/demo"] {
                let reply = try client.post(path, "{}")
                #expect(reply.problem(405)["status"] as? Int == 405)
                #expect(reply.header("Allow") == "GET")
            }
            #expect(try client.get("/client/other.js").status == 404)
            #expect(try client.get("/demo/").status == 404)
        }
    }

    @Test func theAssetsNeedTheTokenWhenAuthIsOn() throws {
        try withService({ $0.authToken = "secret" }) { service in
            let client = try service.connect()
            #expect(try client.send("GET", "/demo", auth: false).status == 401)
            #expect(try client.send("GET", "/client/viewportd.js", auth: false).status == 401)
            #expect(try client.get("/demo").status == 200)
        }
    }
}
