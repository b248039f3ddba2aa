// swift-tools-version:6.2
import PackageDescription

/// Fuzz targets for viewportd (libFuzzer), apart from the service's package so that its normal
/// build and test never see them. Build and run with `scripts/fuzz-native.sh`: every target is
/// built with `-sanitize=fuzzer` (coverage instrumentation of the service's modules too) and
/// `-enable-testing` (the decoders and the handler are internal to ViewportService).
///
/// `viewportd` is a symlink to the repository root: a path dependency's identity is its
/// directory's name, so the link gives it the same name in every clone.
let targets = [
    "FuzzJSONReader", "FuzzNDJSONStream", "FuzzWebSocketFrames", "FuzzLayoutDecoder", "FuzzSectionsDecoder",
    "FuzzSessionApply", "FuzzStackEdits",
]

let package = Package(
    name: "viewportd-fuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [
        .package(path: "viewportd"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "ViewportCore", package: "viewportd"),
                .product(name: "ViewportJSON", package: "viewportd"),
                .product(name: "ViewportService", package: "viewportd"),
            ]
        ),
    ] + targets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "FuzzSupport",
                .product(name: "ViewportCore", package: "viewportd"),
                .product(name: "ViewportHTTP", package: "viewportd"),
                .product(name: "ViewportJSON", package: "viewportd"),
                .product(name: "ViewportService", package: "viewportd"),
                .product(name: "Logging", package: "swift-log"),
            ]
        )
    },
    swiftLanguageModes: [.v6]
)
