import ArgumentParser
import Gateway
#if canImport(Glibc)
import Glibc
#endif

struct CatalogGatewayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog-gateway",
        abstract: "Serve a Radiant equipment-rental catalog (SQLite) as a live GraphQL API.",
        version: BuildInfo.description,
        subcommands: [
            QueryCommand.self,
            BenchQueryCommand.self,
            BenchRowsCommand.self,
            DemoDBCommand.self,
            PrepareCommand.self,
            ServeCommand.self,
            ImportCommand.self,
            BumpVersionCommand.self,
        ])
}

// What the commands print (answers, summaries, --help) must reach standard output, or the
// command exits 2 saying so; `serve` opts out once it runs (see ServeCommand.run).
nonisolated(unsafe) var checksStandardOutput = true
atexit { if checksStandardOutput { checkStandardOutputAtExit() } }

// A closed pipe on standard output (`query … | head -c 100`) is an I/O error like a full disk:
// write(2) fails with EPIPE and the command says so and exits 2, instead of dying silently by
// SIGPIPE (status 141) with the answer cut short.
signal(SIGPIPE, SIG_IGN)

// Usage errors exit with status 2 (ArgumentParser's default is 64), as documented in README.md.
do {
    var command = try CatalogGatewayCommand.parseAsRoot()
    if command is ServeCommand { checksStandardOutput = false }
    try command.run()
} catch {
    let code = CatalogGatewayCommand.exitCode(for: error)
    if code == .validationFailure {
        writeAll(2, Array((CatalogGatewayCommand.fullMessage(for: error) + "\n").utf8))
        exit(2)
    }
    CatalogGatewayCommand.exit(withError: error)
}
