// swift-tools-version:6.0
import PackageDescription

var fuzzTargets: [Target] = []
// libFuzzer targets (Fuzz/<Name>/), only when CG_FUZZ is set, so that plain `swift build` and
// `swift test` never build them. `make fuzz` builds them with -sanitize=fuzzer,address.
if Context.environment["CG_FUZZ"] != nil {
    fuzzTargets = [
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer", "Schema", "Resolvers", "Gateway"], path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzParser", dependencies: ["FuzzSupport", "Schema", "Resolvers"], path: "Fuzz/FuzzParser"),
        .executableTarget(name: "FuzzVariables", dependencies: ["FuzzSupport", "Schema", "Resolvers"], path: "Fuzz/FuzzVariables"),
        .executableTarget(name: "FuzzExecute", dependencies: ["FuzzSupport", "Schema", "Resolvers"], path: "Fuzz/FuzzExecute"),
        .executableTarget(name: "FuzzTransportWS", dependencies: ["FuzzSupport", "Gateway", "Resolvers", "Schema"], path: "Fuzz/FuzzTransportWS"),
        .executableTarget(name: "FuzzLegacyWS", dependencies: ["FuzzSupport", "Gateway", "Resolvers", "Schema"], path: "Fuzz/FuzzLegacyWS"),
        .executableTarget(name: "FuzzPlainJSON", dependencies: ["FuzzSupport", "Resolvers", "Schema"], path: "Fuzz/FuzzPlainJSON"),
        .executableTarget(name: "FuzzHTTP", dependencies: ["FuzzSupport", "Gateway", "Resolvers", "Schema"], path: "Fuzz/FuzzHTTP"),
    ]
}

let package = Package(
    name: "catalog-gateway",
    products: [
        .executable(name: "catalog-gateway", targets: ["catalog-gateway"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Latency histograms of the load generator (cg-load) only.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // One system-library target per C library: module.modulemap + shim.h only.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CJansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CWebSockets", providers: [.apt(["libwebsockets-dev"])]),

        // The service lock around lws's poll() (Sources/CServiceLock/include/cg_service_lock.h).
        .target(name: "CServiceLock"),
        // Search's SSE2 substring test (Sources/CFoldedSearch/include/cg_contains_folded.h).
        .target(name: "CFoldedSearch"),

        // The query language: lexer, parser, AST, schema model, validation, input coercion.
        .target(name: "Schema"),
        // SQLite access and execution against a Radiant catalog.
        .target(name: "Resolvers", dependencies: ["Schema", "CSQLite", "CJansson", "CFoldedSearch"]),
        // libwebsockets transport: graphql-transport-ws, graphql-ws, GraphQL over HTTP.
        .target(name: "Gateway", dependencies: ["Schema", "Resolvers", "CWebSockets", "CJansson", "CSQLite", "CServiceLock"]),
        .executableTarget(
            name: "catalog-gateway",
            dependencies: [
                "Schema", "Resolvers", "Gateway", "CSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Load generator for the benchmarks: libwebsockets client connections on one service thread.
        .executableTarget(
            name: "cg-load",
            dependencies: [
                "CWebSockets", "Resolvers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]),

        .testTarget(name: "SchemaTests", dependencies: ["Schema"]),
        // What more than one test target uses: where tests put their files.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "ResolversTests", dependencies: ["Resolvers", "Schema", "CSQLite", "TestSupport"]),
        .testTarget(name: "CGLoadTests", dependencies: ["cg-load"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "Resolvers", "Schema", "TestSupport"]),
    ] + fuzzTargets
)
