import ArgumentParser
import Resolvers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct DemoDBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-db",
        abstract: "Write a deterministic demo Radiant catalog (SQLite file).",
        discussion: """
            The catalog has the exact Radiant schema (all ten tables) and the shape of a real one: \
            9 top-level categories and about 126 hierarchy nodes down to level 4, products with \
            film-equipment names, manufacturers, images, specs and kits, manufacturer logos, spec \
            templates and the version row, with a sprinkling of every quirk of the real files \
            (text product ids, orphan and looping categories, kits for missing products, mis-decoded \
            text, '' for missing values). The same --products and --seed always give the same file.

            Categories, kit rows (about 8 per product), manufacturers and spec templates grow with \
            --products. The file is written in a new private directory beside PATH (PATH.tmp-XXXXXX) and renamed into place when complete. \
            Progress is shown on stderr when it is a terminal.

            Exit status: 0 on success, 2 when the file exists (without --force) or cannot be written.
            """)

    @Option(name: .long, help: ArgumentHelp("Catalog file to create.", valueName: "path"))
    var out: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Number of products; the rest of the catalog scales along.", valueName: "n"))
    var products: Int = 560

    @Option(parsing: .unconditional, help: ArgumentHelp("Seed of the generator, 0 to 2^64-1.", valueName: "s"))
    var seed: UInt64 = 1

    @Flag(help: "Replace the file at --out if it exists.")
    var force = false

    func validate() throws {
        guard (0...100_000_000).contains(products) else {
            throw ValidationError("--products must be between 0 and 100000000 (got \(products))")
        }
        guard !out.isEmpty else { throw ValidationError("--out must name a file") }
    }

    func run() throws {
        if !force && access(out, F_OK) == 0 {
            writeStderr("catalog-gateway: \(out): already exists; pass --force to replace it\n")
            throw ExitCode(2)
        }
        let showProgress = isatty(2) == 1
        var lastPercent = -1
        let progress: ((Double) -> Void)? = showProgress ? { fraction in
            let percent = Int(fraction * 100)
            if percent != lastPercent {
                lastPercent = percent
                writeStderr("\rdemo-db: writing \(out) \(percent)%")
            }
        } : nil
        do {
            try DemoCatalog(products: products, seed: seed).write(to: out, progress: progress)
        } catch {
            if showProgress { writeStderr("\n") }
            writeStderr("catalog-gateway: \(error)\n")
            throw ExitCode(2)
        }
        if showProgress { writeStderr("\n") }
        print("wrote \(out): \(products) products, seed \(seed)")
    }
}

/// Writes to file descriptor 2 (the C `stderr` global is not concurrency-safe in Swift 6).
private func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
