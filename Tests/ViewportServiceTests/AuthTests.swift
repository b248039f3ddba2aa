import Foundation
import Testing
import ViewportService
import ViewportTestSupport

/// `auth.token`: 401 on every path but `/healthz`, first in the order of precedence.
@Suite struct AuthTests {
    static func configure(_ c: inout ServiceConfiguration) { c.authToken = "s3cret-token" }

    @Test func everyPathButHealthzNeedsTheBearerToken() throws {
        try withService(Self.configure) { service in
            let client = try service.connect()
            let layout = try client.postLayout(layoutJSON(listItems(3)))
            let session = try client.openSession(#"{"layout":"\#(layout)","viewport":[1,1]}"#).id
            let requests: [(String, String, String?)] = [
                ("GET", "/metrics", nil), ("POST", "/v1/layouts", layoutJSON(listItems(4))), ("GET", "/v1/layouts/\(layout)", nil),
                ("POST", "/v1/sessions", #"{"layout":"\#(layout)","viewport":[1,1]}"#), ("GET", "/v1/sessions/\(session)", nil),
                ("POST", "/v1/sessions/\(session)/viewport", #"{"offset":[0,5]}"#), ("DELETE", "/v1/sessions/\(session)", nil),
            ]
            for header in [nil, "Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token2", "bearer", "Basic czNjcmV0LXRva2Vu", "s3cret-token", "Bearers3cret-token", "Bearer s3cret token"] as [String?] {
                for (method, path, body) in requests {
                    let reply = try client.send(method, path, body: body.map { Array($0.utf8) }, headers: header.map { [("Authorization", $0)] } ?? [], auth: false)
                    _ = reply.problem(401)
                    #expect(reply.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(method) \(path)")
                }
            }
            // Nothing was done by the refused requests.
            #expect(try client.state(session).int("seq") == 0)
            #expect(try client.get("/v1/layouts/\(layout)").json.int("sessions") == 1)
            #expect(try client.send("GET", "/healthz", auth: false).status == 200)
            #expect(try client.send("GET", "/healthz", headers: [("Authorization", "Bearer wrong")], auth: false).status == 200)
            #expect(try client.get("/metrics").status == 200)
        }
    }

    @Test func authComesBeforeEveryOtherStatus() throws {
        try withService({ c in
            Self.configure(&c)
            c.http.maxBodyBytes = 100
        }) { service in
            let client = try service.connect()
            // 404, 405, 415, 400 and 413 situations all answer 401 without the token.
            _ = try client.send("GET", "/nope", auth: false).problem(401)
            _ = try client.send("GET", "/v1/sessions/unknown", auth: false).problem(401)
            _ = try client.send("PUT", "/v1/layouts", auth: false).problem(401)
            _ = try client.send("POST", "/v1/layouts", json: "{}", contentType: "text/plain", auth: false).problem(401)
            _ = try client.send("POST", "/v1/layouts", json: "not json", auth: false).problem(401)
            _ = try client.send("POST", "/v1/layouts", body: Array(repeating: UInt8(ascii: " "), count: 1000), auth: false).problem(401)
            // With the token they answer their own status.
            let authed = try service.connect()
            _ = try authed.get("/nope").problem(404)
            _ = try authed.send("PUT", "/v1/layouts").problem(405)
        }
    }

    @Test func theAuthSchemeIsCaseInsensitive() throws {
        // RFC 9110 §11.1: the scheme is a case-insensitive token; the token itself is not.
        try withService(Self.configure) { service in
            let client = try service.connect()
            for header in ["Bearer s3cret-token", "bearer s3cret-token", "BEARER s3cret-token"] {
                #expect(try client.send("GET", "/metrics", headers: [("Authorization", header)], auth: false).status == 200, "\(header)")
            }
            #expect(try client.send("GET", "/metrics", headers: [("Authorization", "Bearer S3CRET-TOKEN")], auth: false).status == 401)
        }
    }

    @Test func spacesAroundTheTokenAreNotPartOfIt() throws {
        // RFC 7235 §2.1: one or more spaces after the scheme; RFC 9110 §5.5: whitespace around a
        // field value is not part of it. A token has no spaces (RFC 6750's b64token).
        try withService(Self.configure) { service in
            let client = try service.connect()
            for header in ["Bearer  s3cret-token", "bearer \ts3cret-token", "Bearer s3cret-token ", "Bearer   s3cret-token\t"] {
                #expect(try client.send("GET", "/metrics", headers: [("Authorization", header)], auth: false).status == 200, "\(header)")
            }
            for header in ["Bearers3cret-token", "Bearer s3cret -token", "Bearer  s3cret-token x"] {
                _ = try client.send("GET", "/metrics", headers: [("Authorization", header)], auth: false).problem(401)
            }
        }
    }

    @Test func withoutATokenConfiguredNoAuthorizationIsNeeded() throws {
        try withService { service in
            let client = try service.connect()
            #expect(try client.send("POST", "/v1/layouts", json: layoutJSON(listItems(2)), headers: [("Authorization", "Bearer anything")]).status == 201)
            #expect(try client.get("/metrics").status == 200)
        }
    }
}
