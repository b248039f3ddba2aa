import ViewportBrowserClient
import ViewportHTTP

/// The browser client (`GET /client/viewportd.js`) and its demo page (`GET /demo`), embedded in
/// the binary by the `ViewportBrowserClient` target (clients/js/viewportd.js and demo.html).
/// Built once, shared by every answer.
enum ClientAssets {
    static let module = HTTPResponse(
        status: 200,
        headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache")],
        body: .bytes(BrowserClient.module))

    static let demo = HTTPResponse(
        status: 200,
        headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")],
        body: .bytes(BrowserClient.demo))
}
