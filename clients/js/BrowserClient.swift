/// The browser client, served at `GET /client/viewportd.js`, and its demo page, served at
/// `GET /demo`.
///
/// `viewportd.js` and `demo.html`, beside this file, are their only copies: SwiftPM embeds them in
/// the binary at build time (`.embedInCode`, the `ViewportBrowserClient` target in Package.swift),
/// so editing them is all there is to do.
public enum BrowserClient {
    /// The ES module's bytes, exactly as in clients/js/viewportd.js.
    public static var module: [UInt8] { PackageResources.viewportd_js }
    /// The demo page's bytes, exactly as in clients/js/demo.html.
    public static var demo: [UInt8] { PackageResources.demo_html }
}
