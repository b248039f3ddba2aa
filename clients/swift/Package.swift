// swift-tools-version:6.0
import PackageDescription

// The Swift client of viewportd's API v1, generated from openapi/viewportd.openapi.json by Apple's
// swift-openapi-generator 1.14 and committed (scripts/swift-client.sh regenerates it and checks
// it is current; building the generator takes minutes, so it is not a dependency here). A
// separate package: the service's own Package.swift does not depend on it.
let package = Package(
    name: "viewportd-client",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ViewportdClient", targets: ["ViewportdClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "ViewportdClient",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")]
        ),
        .executableTarget(
            name: "viewportd-client-roundtrip",
            dependencies: [
                "ViewportdClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)
