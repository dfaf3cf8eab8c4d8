import Foundation
import Testing
@testable import Resolvers

/// A directory under the system temporary directory, removed by `remove()`.
private struct Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cg-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

private func int(_ db: Database, _ sql: String) throws -> Int64 {
    try #require(try db.scalarInt(sql), "no value for \(sql)")
}

private func strings(_ db: Database, _ sql: String) throws -> [String] {
    let s = try db.prepare(sql)
    var out: [String] = []
    while try s.step() { out.append(s.text(0) ?? "<NULL>") }
    return out
}

/// Every row of a table as values, in rowid order (or column order for rowid-less tables).
func catalogRows(_ db: Database, _ table: String) throws -> [[SQLValue]] {
    let s = try db.prepare("SELECT * FROM \"\(table)\"")
    var rows: [[SQLValue]] = []
    while try s.step() { rows.append((0..<s.columnCount).map { s.value($0) }) }
    return rows
}

@Suite struct DemoCatalogTests {
    /// Writes a demo catalog into `scratch` and opens it read-only.
    private func demo(_ scratch: Scratch, products: Int = 560, seed: UInt64 = 1, name: String = "demo.sqlite") throws -> Database {
        let path = scratch.path(name)
        try DemoCatalog(products: products, seed: seed).write(to: path)
        return try Database(path: path, readOnly: true)
    }

    @Test func sameSeedGivesTheSameBytesAndRows() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let a = try demo(scratch, name: "a.sqlite")
        let b = try demo(scratch, name: "b.sqlite")
        let c = try demo(scratch, seed: 2, name: "c.sqlite")
        for table in ["hierarchy", "Product_Catalog", "Product_Assets", "mfg", "DetailsKeyValues", "version"] {
            #expect(try catalogRows(a, table) == catalogRows(b, table), "table \(table)")
        }
        #expect(try catalogRows(a, "Product_Catalog") != catalogRows(c, "Product_Catalog"))
        let bytesA = try Data(contentsOf: URL(fileURLWithPath: scratch.path("a.sqlite")))
        let bytesB = try Data(contentsOf: URL(fileURLWithPath: scratch.path("b.sqlite")))
        #expect(bytesA == bytesB)
    }

    @Test func schemaIsTheRadiantSchema() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        // sqlite_master keeps each CREATE TABLE as written, minus the IF NOT EXISTS that the
        // sqlite3 shell adds when it prints the schema.
        let expected = CatalogSQL.radiantSchema
            .split(separator: ";").map { String($0).trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
            .map { $0.replacingOccurrences(of: "CREATE TABLE IF NOT EXISTS ", with: "CREATE TABLE ") }
        let stored = try strings(db, "SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
        #expect(expected.count == 10)
        #expect(Set(stored) == Set(expected))
        #expect(try strings(db, "SELECT name FROM sqlite_master WHERE type = 'table'").sorted()
                == CatalogSQL.radiantTables.sorted())
        // No indexes of its own: only the automatic ones of the two non-rowid primary keys.
        #expect(try strings(db, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
                == ["sqlite_autoindex_DetailsKeyValues_1", "sqlite_autoindex_rfq_1"])
        #expect(CatalogSQL.radiantSchemaStatements.count == 9)
        #expect(!CatalogSQL.radiantSchemaStatements.contains { $0.contains("sqlite_sequence") })
    }

    @Test func embeddedSchemaIsTheContractFileVerbatim() throws {
        // The contract lives beside the repository in the development setup; skip elsewhere.
        let contract = "/work/shared/contract/radiant-schema.sql"
        guard let text = try? String(contentsOfFile: contract, encoding: .utf8) else { return }
        #expect(CatalogSQL.radiantSchema == text)
    }

    @Test func countsHaveTheShapeOfARealCatalog() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE parent = 0") == 9)
        #expect(try int(db, "SELECT count(*) FROM hierarchy") == 126)
        #expect(try int(db, "SELECT min(level) FROM hierarchy") == 1)
        #expect(try int(db, "SELECT max(level) FROM hierarchy") == 4)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog") == 560)
        #expect(try (4_000...5_200).contains(int(db, "SELECT count(*) FROM Product_Assets")))
        #expect(try int(db, "SELECT count(*) FROM mfg") == 134)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues") == 42)
        #expect(try int(db, "SELECT count(DISTINCT trim(Product)) FROM Product_Catalog") >= 540)
        for table in ["cart", "rfq", "dictionary"] {
            #expect(try int(db, "SELECT count(*) FROM \(table)") == 0, "table \(table)")
        }
        let titles = try strings(db, "SELECT menu_title FROM hierarchy WHERE parent = 0 ORDER BY id")
        #expect(titles == ["Cameras", "Lenses", "Filters", "Lighting", "Grip", "Monitors", "Power", "Audio", "Support"])
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE Product = 'Cooke S4/i 32mm' OR Product LIKE 'ARRI Alexa Mini LF%'") >= 1)
    }

    @Test func versionRowIsSixWithEmptyStrings() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        let rows = try catalogRows(db, "version")
        #expect(rows == [[.integer(6), .text(""), .text("")]])
    }

    @Test func noNullsInAnyCatalogTable() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        for table in ["hierarchy", "Product_Catalog", "Product_Assets", "mfg", "DetailsKeyValues", "version"] {
            for column in try db.columns(of: table) {
                #expect(try int(db, "SELECT count(*) FROM \"\(table)\" WHERE \"\(column)\" IS NULL") == 0,
                        "\(table).\(column)")
            }
        }
    }

    @Test func hierarchyHasOrphansACycleAndASelfParent() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        #expect(try int(db, """
            SELECT count(*) FROM hierarchy h WHERE parent <> 0
            AND NOT EXISTS (SELECT 1 FROM hierarchy p WHERE p.id = h.parent)
            """) == 7)
        // Two distinct nodes whose parents point at each other.
        #expect(try int(db, """
            SELECT count(*) FROM hierarchy a JOIN hierarchy b ON a.parent = b.id AND b.parent = a.id
            WHERE a.id <> b.id
            """) == 2)
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE parent = id") == 1)
        // A child of an orphan.
        #expect(try int(db, """
            SELECT count(*) FROM hierarchy c JOIN hierarchy o ON c.parent = o.id
            WHERE NOT EXISTS (SELECT 1 FROM hierarchy p WHERE p.id = o.parent) AND o.parent <> 0
            """) == 1)
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE menu_icon = ''") > 0)
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE menu_icon LIKE 'icon_%.png'") >= 9)
        // Ids are not contiguous.
        #expect(try int(db, "SELECT max(id) FROM hierarchy") > int(db, "SELECT count(*) FROM hierarchy"))
    }

    @Test func productsFiledUnderInnerOrphanAndMissingNodes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE cat IN (SELECT parent FROM hierarchy)") > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE cat NOT IN (SELECT id FROM hierarchy)") > 0)
        #expect(try int(db, """
            SELECT count(*) FROM Product_Catalog WHERE cat IN (SELECT id FROM hierarchy h WHERE parent <> 0
            AND NOT EXISTS (SELECT 1 FROM hierarchy p WHERE p.id = h.parent))
            """) > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE cat IN (SELECT id FROM hierarchy WHERE parent = id)") > 0)
        #expect(try int(db, """
            SELECT count(*) FROM Product_Catalog WHERE cat IN
            (SELECT a.id FROM hierarchy a JOIN hierarchy b ON a.parent = b.id AND b.parent = a.id WHERE a.id <> b.id)
            """) > 0)
    }

    @Test func productIDsMixIntegersTextLowercaseAndTwoDuplicates() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE typeof(product_ID) = 'integer'") > 450)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE product_ID GLOB 'K[0-9]*'") > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE product_ID GLOB 'k[0-9]*'") > 0)
        let duplicated = try strings(db, """
            SELECT typeof(product_ID) FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1 ORDER BY 1
            """)
        #expect(duplicated == ["integer", "text"])
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1 LIMIT 1") == 2)
        // keyid is not contiguous either.
        #expect(try int(db, "SELECT max(keyid) FROM Product_Catalog") > 560)
    }

    @Test func textColumnsCarryTheRealFilesQuirks() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        let checks: [(String, String)] = [
            ("empty manufacturer", "Manufacturer = ''"),
            ("manufacturer with trailing space", "Manufacturer GLOB '* '"),
            ("manufacturer case variant", "Manufacturer IN ('Arri', 'COOKE', 'TIFFEN', 'MATTHEWS', 'SMALLHD')"),
            ("name with trailing space", "Product GLOB '* '"),
            ("name starting with a digit", "Product GLOB '[0-9]*'"),
            ("name starting lowercase", "Product GLOB '[a-z]*'"),
            ("empty description", "description = ''"),
            ("description with spaces around", "description GLOB ' *' AND description GLOB '* '"),
            ("description with TAB/LF at the ends", "description GLOB '\t*' AND description GLOB '*\n'"),
            ("mis-decoded UTF-8", "description LIKE '%Ã©%' OR description LIKE '%â€%'"),
            ("no-break space", "instr(description, char(160)) > 0"),
            ("no-break space at the end", "description GLOB '*' || char(160)"),
            ("empty thumbnail", "display_Thumbnail = ''"),
            ("thumbnail with trailing space", "display_Thumbnail GLOB '* '"),
            ("image with trailing space", "display_Image01 GLOB '* ' OR display_Image02 GLOB '* '"),
            ("empty image", "display_Image05 = ''"),
            ("video", "bracketvid <> '' OR promovid <> ''"),
            ("panorama", "panorama <> ''"),
            ("template key as text", "typeof(info_DetailsKey) = 'text' AND info_DetailsKey GLOB '[0-9]*'"),
            ("template key with spaces", "info_DetailsKey GLOB ' [0-9]* '"),
            ("empty template key", "info_DetailsKey = ''"),
            ("template key naming no template", """
                info_DetailsKey GLOB '[0-9]*' AND CAST(info_DetailsKey AS INTEGER) NOT IN (SELECT DetailsKey FROM DetailsKeyValues)
                """),
            ("empty spec value", "info_spec_a = '' AND info_DetailsKey <> ''"),
            ("spec value with trailing space", "info_spec_a GLOB '* '"),
            ("displayorder ties within a category", "displayorder IN (SELECT displayorder FROM Product_Catalog GROUP BY cat, displayorder HAVING count(*) > 1)"),
        ]
        for (what, condition) in checks {
            #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE \(condition)") > 0, "\(what)")
        }
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE typeof(info_DetailsKey) <> 'text'") == 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE typeof(displayorder) <> 'integer'") == 0)
    }

    @Test func kitsHaveMissingProductsCommasAndTextQuantities() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        #expect(try int(db, """
            SELECT count(*) FROM Product_Assets a
            WHERE NOT EXISTS (SELECT 1 FROM Product_Catalog p WHERE CAST(p.product_ID AS TEXT) = a.kitID)
            """) > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Assets WHERE typeof(kitID) <> 'text' OR typeof(kitQTY) <> 'text'") == 0)
        #expect(try Set(strings(db, "SELECT DISTINCT kitQTY FROM Product_Assets")).isSuperset(of: ["1", "2", "", "x"]))
        #expect(try int(db, "SELECT count(*) FROM Product_Assets WHERE asset LIKE '%,%'") > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Assets WHERE asset GLOB '* '") > 0)
        // Every product's kit uses its product_ID as text; a duplicated id's kit serves both.
        #expect(try int(db, "SELECT count(*) FROM Product_Assets WHERE kitID IN (SELECT CAST(product_ID AS TEXT) FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1)") > 0)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog p WHERE NOT EXISTS (SELECT 1 FROM Product_Assets a WHERE a.kitID = CAST(p.product_ID AS TEXT))") > 0)
        #expect(try int(db, "SELECT seq FROM sqlite_sequence WHERE name = 'Product_Assets'")
                == int(db, "SELECT max(assetID) FROM Product_Assets"))
    }

    @Test func manufacturersAndTemplatesHaveTheirQuirks() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch)
        let ws = CatalogSQL.ws
        // Names duplicated (after trimming) with different logos.
        #expect(try int(db, """
            SELECT count(*) FROM (SELECT trim(manufacturer, \(ws)) m FROM mfg GROUP BY m HAVING count(DISTINCT logo) > 1)
            """) >= 3)
        #expect(try int(db, "SELECT count(*) FROM mfg WHERE manufacturer GLOB '* '") > 0)
        #expect(try int(db, "SELECT count(*) FROM mfg WHERE logo = ''") > 0)
        #expect(try int(db, "SELECT count(*) FROM mfg WHERE manufacturer = ''") == 1)
        #expect(try int(db, "SELECT max(mfgid) FROM mfg") > 134)
        // The lowest mfgid of Zeiss has no logo, a later one has.
        #expect(try strings(db, "SELECT logo FROM mfg WHERE trim(manufacturer, \(ws)) = 'Zeiss' ORDER BY mfgid") == ["", "logo_zeiss.png"])
        // A product manufacturer without any mfg row.
        #expect(try int(db, """
            SELECT count(*) FROM Product_Catalog p WHERE trim(Manufacturer, \(ws)) <> ''
            AND NOT EXISTS (SELECT 1 FROM mfg m WHERE trim(m.manufacturer, \(ws)) = trim(p.Manufacturer, \(ws)))
            """) > 0)

        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE spec_a GLOB 'a?*'") == 42)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE spec_b GLOB 'b* '") > 0)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE 'e' IN (spec_d, spec_e)") > 0)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE '06)' IN (spec_d, spec_e, spec_f)") > 0)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE spec_c = 'c06)'") > 0)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE spec_r <> '' OR spec_t <> ''") > 0)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues WHERE ReferenceCategory = ''") > 0)
        #expect(try int(db, "SELECT max(DetailsKey) FROM DetailsKeyValues") > 42)
        // Most products name an existing template.
        #expect(try int(db, """
            SELECT count(*) FROM Product_Catalog WHERE CAST(trim(info_DetailsKey, \(ws)) AS INTEGER)
            IN (SELECT DetailsKey FROM DetailsKeyValues)
            """) > 400)
    }

    @Test func everythingButTheFixedQuirksScalesWithProducts() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch, products: 5_600)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog") == 5_600)
        #expect(try int(db, "SELECT count(*) FROM hierarchy") == 1_260)
        #expect(try int(db, "SELECT count(*) FROM mfg") == 1_340)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues") == 420)
        #expect(try (40_000...52_000).contains(int(db, "SELECT count(*) FROM Product_Assets")))
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE parent = 0") == 9)
        #expect(try int(db, "SELECT max(level) FROM hierarchy") == 4)
        #expect(try int(db, """
            SELECT count(*) FROM hierarchy h WHERE parent <> 0
            AND NOT EXISTS (SELECT 1 FROM hierarchy p WHERE p.id = h.parent)
            """) == 7)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1 LIMIT 1") == 2)
        #expect(try int(db, "SELECT count(*) FROM (SELECT product_ID FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1)") == 2)
        // The new categories hold products.
        #expect(try int(db, "SELECT count(*) FROM hierarchy WHERE menu_title LIKE '% (Bay %)' AND id IN (SELECT cat FROM Product_Catalog)") > 1_000)
        // So do the new templates and manufacturers.
        #expect(try int(db, "SELECT count(DISTINCT CAST(info_DetailsKey AS INTEGER)) FROM Product_Catalog WHERE CAST(info_DetailsKey AS INTEGER) > 100") > 100)
    }

    @Test(arguments: [0, 1, 10, 99, 100])
    func smallCatalogsAreValid(products: Int) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let db = try demo(scratch, products: products)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog") == Int64(products))
        #expect(try int(db, "SELECT count(*) FROM hierarchy") == 126)
        #expect(try int(db, "SELECT count(*) FROM DetailsKeyValues") == 42)
        if products >= 100 {
            #expect(try int(db, "SELECT count(*) FROM (SELECT product_ID FROM Product_Catalog GROUP BY product_ID HAVING count(*) > 1)") == 2)
            #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE product_ID GLOB 'k[0-9]*'") > 0)
            #expect(try int(db, "SELECT count(*) FROM Product_Catalog WHERE instr(description, char(160)) > 0") > 0)
        }
    }

    @Test func progressRunsFromZeroToOne() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var seen: [Double] = []
        try DemoCatalog(products: 3_000).write(to: scratch.path("p.sqlite")) { seen.append($0) }
        #expect(seen.first == 0)
        #expect(seen.last == 1)
        #expect(seen.count > 100)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func replacesAFileAndLeavesNoTemporary() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("x.sqlite")
        try Data("not a catalog".utf8).write(to: URL(fileURLWithPath: path))
        try Data("stale".utf8).write(to: URL(fileURLWithPath: path + ".tmp"))
        try DemoCatalog(products: 20).write(to: path)
        // The old fixed temporary name is nobody's business now (it could be another user's
        // symlink): left as it was; the writer's own directory is gone.
        #expect(try String(contentsOfFile: path + ".tmp", encoding: .utf8) == "stale")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("")).sorted() == ["x.sqlite", "x.sqlite.tmp"])
        let db = try Database(path: path, readOnly: true)
        #expect(try int(db, "SELECT count(*) FROM Product_Catalog") == 20)
        // A normal rollback journal, not the generator's journal_mode=OFF.
        #expect(try strings(db, "PRAGMA journal_mode") == ["delete"])
    }

    @Test func unwritableDestinationThrowsNamingTheFile() throws {
        let path = "/nonexistent-cg-dir/demo.sqlite"
        do {
            try DemoCatalog(products: 5).write(to: path)
            Issue.record("expected an error")
        } catch let error as CatalogFileError {
            #expect(error.path == path)
            #expect(error.description.hasPrefix(path + ": "))
        }
    }
}
