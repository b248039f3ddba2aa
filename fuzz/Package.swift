// swift-tools-version:6.2
import PackageDescription

/// Fuzz targets for viewportd (libFuzzer), apart from the service's package so that its normal
/// build and test never see them. Build and run with `scripts/fuzz-native.sh`: every target is
/// built with `-sanitize=fuzzer` (coverage instrumentation of the service's modules too) and
/// `-enable-testing` (the decoders and the handler are internal to ViewportService).
///
/// Each target links only the modules it fuzzes (plus the support it uses), so a change to
/// another module rebuilds nothing of it and its coverage counters are its own code's.
///
/// `viewportd` is a symlink to the repository root: a path dependency's identity is its
/// directory's name, so the link gives it the same name in every clone.
let core = Target.Dependency.product(name: "ViewportCore", package: "viewportd")
let http = Target.Dependency.product(name: "ViewportHTTP", package: "viewportd")
let service = Target.Dependency.product(name: "ViewportService", package: "viewportd")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")

/// Each fuzz target and what it links besides FuzzSupport (the libFuzzer driver and input reader).
let targets: [(name: String, dependencies: [Target.Dependency])] = [
    ("FuzzJSONReader", ["FuzzServiceChecks", service]),
    ("FuzzNDJSONStream", ["FuzzServiceChecks", http, service, logging]),
    ("FuzzWebSocketFrames", [http]),
    ("FuzzLayoutDecoder", ["FuzzServiceChecks", core, service]),
    ("FuzzSectionsDecoder", ["FuzzServiceChecks", core, service]),
    ("FuzzSessionApply", ["FuzzClientModel", "FuzzServiceChecks", core, service]),
    ("FuzzStackEdits", ["FuzzClientModel", "FuzzServiceChecks", core, service]),
]

let package = Package(
    name: "viewportd-fuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: $0.name, targets: [$0.name]) },
    dependencies: [
        .package(path: "viewportd"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The libFuzzer entry point, `require`, and the reader of structured input: no viewportd module.
        .target(name: "FuzzSupport"),
        // A client's model of a session's views, checked against the core's plans.
        .target(name: "FuzzClientModel", dependencies: ["FuzzSupport", core]),
        // Checks on the service's decoders and JSON: sound layouts, client problems, finite JSON.
        .target(name: "FuzzServiceChecks", dependencies: ["FuzzSupport", core, service]),
    ] + targets.map { target in
        .executableTarget(name: target.name, dependencies: ["FuzzSupport"] + target.dependencies)
    },
    swiftLanguageModes: [.v6]
)
