import ArgumentParser
import Resolvers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `catalog-gateway import`: upserts records from a JSON or CSV file as one new catalog version.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Upsert products, categories, spec templates and manufacturers from a JSON or CSV file.",
        discussion: """
            The whole file is read and checked first; when any record is bad, every problem is \
            printed as FILE:LINE: record: field: message, nothing is written (the catalog file stays \
            byte for byte the same) and the exit status is 2. Otherwise every record is written in \
            one transaction, followed by a new version row (versionid = greatest + 1, \
            updatecatalogrow / updateassetrow = the first keyid / assetID the original apps must \
            download again), so every subscriber is notified. An import that changes nothing (every \
            record as stored already) writes no version row.

            JSON: an array of objects keyed by the API's field names (schema.graphql), each with an \
            optional "type": "product" (the default), "category", "template" or "manufacturer"; or \
            an object {"products": [...], "categories": [...], "templates": [...], \
            "manufacturers": [...]}.
              [{"id": 12, "sku": "K1478", "name": "ALEXA Mini LF", "category": 12,
                "manufacturer": "ARRI", "displayOrder": 2, "thumbnail": "mini.jpg",
                "images": ["a.jpg"], "videos": [{"kind": "PROMO", "url": "p.mp4"}],
                "panoramaUrl": null, "description": "Large format", "template": 26,
                "specs": [{"key": "a", "value": "LF 36x25"}],
                "kit": [{"name": "Top handle", "quantity": 1}]},
               {"type": "category", "id": 12, "title": "ARRI", "parent": 10},
               {"type": "template", "id": 26, "specs": [{"key": "a", "label": "Sensor"}]},
               {"type": "manufacturer", "name": "ARRI", "logo": "arri.png"}]
            id is required (the keyid, hierarchy id or DetailsKey); other fields left out keep their \
            stored values (a new product gets '' in every column not given, its integer ones \
            included, as the original apps expect; a new category's level is NULL; template is the \
            product's info_DetailsKey); a field given twice in a record is an error. images, videos and specs replace all of the product's \
            image, video and spec columns; kit replaces the Product_Assets rows keyed by the sku \
            (which the record must give); template specs replace all spec_ labels. A manufacturer \
            updates the logo of the mfg row with that (trimmed) name, or adds a row.

            CSV (UTF-8): a header of Product_Catalog column names (keyid required), then one \
            product per line; each field is stored as given (cat and displayorder: an integer or \
            empty).

            Exit status: 0 on success; 2 for a bad file, a missing or read-only catalog; 1 when \
            writing failed (rolled back).
            """)

    @Option(name: .long, help: ArgumentHelp("Catalog file to write.", valueName: "path"))
    var db: String

    @Option(help: ArgumentHelp("json or csv (default: JSON when the file starts with [ or {).", valueName: "format"))
    var format: String?

    @Flag(help: "Check the file and report its problems without writing anything.")
    var dryRun = false

    @Flag(help: "No progress and no summary.")
    var quiet = false

    @ArgumentParser.Argument(help: ArgumentHelp("The JSON or CSV file; - reads standard input.", valueName: "file"))
    var file: String

    func validate() throws {
        if let format, format != "json" && format != "csv" {
            throw ValidationError("--format must be json or csv (got \(format))")
        }
    }

    func run() throws {
        let name = file == "-" ? "<stdin>" : file
        guard let bytes = readFile(file) else { fail("\(name): cannot read: \(String(cString: strerror(errno)))") }
        if let reason = Database.missingFileReason(db) { fail("\(db): \(reason)") }
        let database: Database
        do {
            database = try Database(path: db, readOnly: dryRun)
        } catch {
            fail("\(db): \(error.message)")
        }
        let showProgress = !quiet && isatty(2) == 1
        let report: ImportProgress = { phase, done, total in
            writeAll(2, Array("\rimport: \(phase) \(done)\(total > 0 ? "/\(total)" : "") records ".utf8))
        }
        let progress: ImportProgress? = showProgress ? report : nil
        let start = ContinuousClock.now
        let summary: ImportSummary
        do {
            if dryRun {
                let count = try CatalogImporter.check(database, bytes: bytes, file: name, format: parsedFormat)
                if !quiet { print("\(name): \(count) record\(count == 1 ? "" : "s"), no problems (nothing written: --dry-run)") }
                return
            }
            summary = try CatalogImporter.run(database, bytes: bytes, file: name, format: parsedFormat, progress: progress)
        } catch {
            if showProgress { writeAll(2, Array("\n".utf8)) }
            switch error {
            case .invalid(_, let problems):
                writeAll(2, Array((error.description + "\n").utf8))
                fail("\(name): \(problems.count) problem\(problems.count == 1 ? "" : "s"); nothing was written")
            case .unreadable, .catalog, .writeFailed:
                writeAll(2, Array("catalog-gateway: \(error.description)\n".utf8))
                throw ExitCode(error.isWriteFailure ? 1 : 2)
            }
        }
        if showProgress { writeAll(2, Array("\n".utf8)) }
        if quiet { return }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let s = summary
        print("""
            imported \(name) in \(String(format1: seconds)) s
              products: \(s.productsInserted) new, \(s.productsUpdated) updated, \(s.productsUnchanged) unchanged; \
            kit rows written: \(s.kitRowsWritten)
              categories: \(s.categoriesInserted) new, \(s.categoriesUpdated) updated; \
            templates: \(s.templatesInserted) new, \(s.templatesUpdated) updated; \
            manufacturers: \(s.manufacturersInserted) new, \(s.manufacturersUpdated) updated
            \(s.versionWritten ? "  version \(s.version) (updatecatalogrow \(s.catalogRow), updateassetrow \(s.assetRow))"
                                : "  nothing changed: no new version row (the catalog stays at version \(s.version))")
            """)
    }

    private var parsedFormat: CatalogImporter.Format? {
        switch format {
        case "json": return .json
        case "csv": return .csv
        default: return nil
        }
    }
}

/// `catalog-gateway bump-version`: a new version row for edits made by other tools.
struct BumpVersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bump-version",
        abstract: "Add a version row so that edits made with other tools reach every subscriber.",
        discussion: """
            Inserts versionid = greatest + 1. Changes made since the previous version row (by any \
            program: the sqlite3 shell, another app) become part of this version for catalogChanges; \
            subscribers of catalogVersion and catalogChanges are notified.

            updatecatalogrow / updateassetrow (where the original apps start downloading rows again) \
            default to the smallest keyid / assetID inserted or updated since the previous version, \
            as recorded by change capture (installed by `prepare`), or one past the greatest when \
            nothing was; --catalog-row / --asset-row lower them further.

            Exit status: 0 on success, 2 when the file is missing, read-only or not a catalog.
            """)

    @Option(name: .long, help: ArgumentHelp("Catalog file.", valueName: "path"))
    var db: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Lowest keyid the original apps must download again.", valueName: "keyid"))
    var catalogRow: Int64?

    @Option(parsing: .unconditional, help: ArgumentHelp("Lowest assetID the original apps must download again.", valueName: "assetID"))
    var assetRow: Int64?

    func validate() throws {
        // Row ids: never negative, and within the API's Int (catalogVersion serves them as such).
        for (name, v) in [("--catalog-row", catalogRow), ("--asset-row", assetRow)] {
            if let v, !(0...Int64(Int32.max)).contains(v) {
                throw ValidationError("\(name) must be between 0 and \(Int32.max) (got \(v))")
            }
        }
    }

    func run() throws {
        if let reason = Database.missingFileReason(db) { fail("\(db): \(reason)") }
        do {
            let database = try Database(path: db, readOnly: false)
            guard try database.tableExists("version") else { fail("\(db): not a Radiant catalog: table version is missing") }
            let r = try VersionBump.insert(database, catalogRow: catalogRow, assetRow: assetRow)
            print("version \(r.version) (updatecatalogrow \(r.catalogRow), updateassetrow \(r.assetRow))")
        } catch let error as SQLiteError {
            fail("\(db): \(error.message)")
        } catch let error as VersionBump.Exhausted {
            fail("\(db): \(error)")
        }
    }
}

/// The whole content of a file, or of standard input for "-"; nil when it cannot be read.
private func readFile(_ path: String) -> [UInt8]? {
    let fd = path == "-" ? 0 : open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { if fd != 0 { close(fd) } }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { break }
        out.append(contentsOf: buffer[0..<n])
    }
    return out
}

private extension String {
    /// One decimal: 12.3.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
