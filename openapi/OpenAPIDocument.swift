/// The OpenAPI 3.1 document of API v1, served at `GET /openapi.json`.
///
/// `viewportd.openapi.json`, beside this file, is the document's only copy: SwiftPM embeds it in
/// the binary at build time (`.embedInCode`, the `ViewportOpenAPI` target in Package.swift), so
/// editing the JSON is all there is to do. The served bytes are the file's bytes; the test
/// `OpenAPIDocumentTests` and scripts/openapi-conformance.py both hold that.
public enum OpenAPIDocument {
    /// The document's bytes, exactly as in openapi/viewportd.openapi.json.
    public static var bytes: [UInt8] { PackageResources.viewportd_openapi_json }
}
