import ArgumentParser
import Resolvers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct PrepareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Add the gateway's indexes and change capture (all named cg_...) to a catalog file.",
        discussion: """
            Real Radiant catalogs carry no indexes. This adds the ones the gateway's queries use, \
            each named with a cg_ prefix, with CREATE INDEX IF NOT EXISTS: running it again changes \
            nothing. The catalog's own tables, their rows and their definitions are never changed, \
            and no statistics are written (no ANALYZE). Queries answer the same without the \
            indexes, only slower; `serve` runs this at start when the file is writable.

            It also installs change capture for catalogChanges: tables cg_changes, cg_versions and \
            cg_sync_state, an index and triggers on Product_Catalog, Product_Assets, hierarchy, \
            DetailsKeyValues, mfg and version that record every edit, by any program, in the \
            editor's own transaction. History starts at the version current when it is installed.

            And two derived tables kept exact by triggers on Product_Catalog: cg_search (a trigram \
            index for search) and cg_category_counts (products per category, for totalCount and \
            productCount without counting rows; not added when keyid is not the table's rowid or \
            Product_Catalog has a UNIQUE index, as then INSERT OR REPLACE could delete rows no \
            trigger sees).

            Objects a newer catalog-gateway made (it records the format of each family in \
            cg_formats, change capture in cg_sync_state) are left as they are, and printed: two \
            versions serving one file during a deploy would otherwise replace each other's. \
            --downgrade replaces them with this version's, after a rollback, once no newer \
            gateway serves the file (change history restarts: clients refetch).

            Prints the objects it created. Exit status: 0 on success, 2 when the file is missing, \
            read-only, not a Radiant catalog or cannot be written.
            """)

    @Option(name: .long, help: ArgumentHelp("Catalog file to prepare.", valueName: "path"))
    var db: String

    @Flag(name: .long, help: "Replace the objects a newer catalog-gateway made with this version's (after a rollback).")
    var downgrade = false

    func run() throws {
        if let reason = Database.missingFileReason(db) {
            writeStderr("catalog-gateway: \(db): \(reason)\n")
            throw ExitCode(2)
        }
        let created: [String]
        let newer: [GatewayFormat.Newer]
        do {
            let database = try Database(path: db, readOnly: false)
            created = try CatalogPreparation.prepare(database, replacingNewer: downgrade)
            newer = try CatalogPreparation.newerObjects(database)
        } catch let error as CatalogFileError {
            writeStderr("catalog-gateway: \(db): \(error.reason)\n")
            throw ExitCode(2)
        } catch let error as SQLiteError {
            writeStderr("catalog-gateway: \(db): \(error.message)\n")
            throw ExitCode(2)
        }
        if created.isEmpty && newer.isEmpty {
            print("\(db): all \(CatalogPreparation.indexes.count) cg_ indexes already present")
        } else {
            for name in created { print("created \(name)") }
            for family in newer { print("left \(family): made by a newer catalog-gateway; --downgrade replaces it") }
        }
    }
}

/// Writes to file descriptor 2 (the C `stderr` global is not concurrency-safe in Swift 6).
private func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
}
