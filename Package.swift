// swift-tools-version:6.2
import PackageDescription

/// Settings shared by every target: Swift 6 strictness plus the upcoming features the
/// swift-server ecosystem (hummingbird, swift-configuration) builds with.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "viewportd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "viewportd", targets: ["viewportd"]),
        .executable(name: "viewport-bench", targets: ["viewport-bench"]),
        // Libraries for the fuzz targets (fuzz/Package.swift), which build apart from this package.
        .library(name: "ViewportCore", targets: ["ViewportCore"]),
        .library(name: "ViewportHTTP", targets: ["ViewportHTTP"]),
        .library(name: "ViewportService", targets: ["ViewportService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // SHA-256 for content-addressed layout ids, SHA-1 for the WebSocket handshake and Redis script ids.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.4.0",
            traits: ["JSON", "CommandLineArguments"]
        ),
        // The process's services (HTTP server, sweeper, store) under one ServiceGroup: signals, graceful shutdown in order.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // hiredis (Debian's libhiredis-dev, pkg-config name `hiredis`). Not found through
        // pkg-config: its cflags carry -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a
        // warning on every build; the header is <hiredis/hiredis.h> on the default include path
        // and the module map links the library.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // The lock ThreadSanitizer builds use in place of `Synchronization.Mutex` (empty otherwise);
        // each module that locks shadows `Mutex` with it in its Mutex+TSan.swift.
        .target(name: "ViewportLock", swiftSettings: swiftSettings),
        .target(
            name: "ViewportRedis",
            dependencies: ["CHiredis", "ViewportLock", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // A cache prefetch hint for the index's queries (Swift has none): one inline C function.
        .target(name: "CPrefetch"),
        .target(
            name: "ViewportCore",
            dependencies: ["CPrefetch", "ViewportLock", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings,
            linkerSettings: [.linkedLibrary("m")]
        ),
        .target(
            name: "ViewportHTTP",
            dependencies: [
                "CMicroHTTPD",
                "ViewportLock",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
            ],
            swiftSettings: swiftSettings
        ),
        // The OpenAPI document, served at GET /openapi.json: openapi/viewportd.openapi.json is its
        // only copy, embedded in the binary by SwiftPM (`.embedInCode`; nothing to regenerate).
        // A module of its own, in openapi/ where the document lives (resources must be inside
        // their target's directory): SwiftPM embeds a file as a Swift array literal of one element
        // per byte, which for this 300 KB document costs about 20 s of CPU to compile in debug and
        // about a minute in release; here that is paid only when the document changes, not on
        // every whole-module (release) build of ViewportService.
        .target(
            name: "ViewportOpenAPI",
            path: "openapi",
            resources: [.embedInCode("viewportd.openapi.json")],
            swiftSettings: swiftSettings
        ),
        // The browser client and its demo page, served at GET /client/viewportd.js and GET /demo
        // from the binary itself (no files at run time): clients/js holds their only copies, next
        // to the other clients, embedded like the OpenAPI document.
        .target(
            name: "ViewportBrowserClient",
            path: "clients/js",
            resources: [.embedInCode("viewportd.js"), .embedInCode("demo.html")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ViewportService",
            dependencies: [
                "ViewportOpenAPI",
                "ViewportBrowserClient",
                "ViewportLock",
                "ViewportCore",
                "ViewportHTTP",
                "ViewportRedis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ViewportTestSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "viewportd",
            dependencies: [
                "ViewportService",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CHeapStats"),
        .executableTarget(
            name: "viewport-bench",
            dependencies: [
                "ViewportCore", "ViewportService", "ViewportHTTP", "CHeapStats", "ViewportTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ViewportCoreTests",
            dependencies: ["ViewportCore", "ViewportTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ViewportHTTPTests",
            dependencies: ["ViewportHTTP", "ViewportLock", "ViewportTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ViewportRedisTests",
            dependencies: ["ViewportRedis", "ViewportTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ViewportServiceTests",
            dependencies: [
                "ViewportService", "ViewportCore", "ViewportHTTP", "ViewportRedis", "ViewportTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
