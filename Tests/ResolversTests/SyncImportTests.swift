import Foundation
import Testing
@testable import Resolvers

/// `catalog-gateway import` and `bump-version` over the contract fixture (capture installed at
/// version 6).
@Suite struct SyncImportTests {
    let path: String
    let db: Database

    init() throws {
        path = try SyncFixture.make()
        db = try Database(path: path, readOnly: false)
    }

    func run(_ text: String, file: String = "in.json") throws(ImportFailure) -> ImportSummary {
        try CatalogImporter.run(db, bytes: Array(text.utf8), file: file)
    }

    /// The problems an import reports, as printed (without the file name), checking that the
    /// catalog file did not change by a byte.
    func problems(_ text: String, file: String = "in.json") throws -> [String] {
        let before = try SyncFixture.bytes(path)
        defer { #expect((try? SyncFixture.bytes(path)) == before) }
        do {
            _ = try run(text, file: file)
            Issue.record("expected problems")
            return []
        } catch {
            guard case .invalid(let f, let problems) = error else { Issue.record("\(error)"); return [] }
            #expect(f == file)
            return problems.map(\.description)
        }
    }

    func row(_ sql: String) throws -> [String] {
        let s = try db.prepare(sql)
        guard try s.step() else { return [] }
        return (0..<s.columnCount).map { "\(s.value($0))" }
    }

    func rows(_ sql: String) throws -> [[String]] {
        let s = try db.prepare(sql)
        var out: [[String]] = []
        while try s.step() { out.append((0..<s.columnCount).map { "\(s.value($0))" }) }
        return out
    }

    @Test func jsonUpsertsEveryKindOfRecord() throws {
        let summary = try run("""
            [
              {"id": 1, "name": "ALEXA Mini LF v2", "kit": [{"name": "Handle", "quantity": 3}], "sku": "K1478"},
              {"id": "200", "sku": "N200", "name": "New camera", "manufacturer": {"name": "RED"}, "category": {"id": "12"},
               "displayOrder": 4, "images": ["x.jpg", "y.jpg"], "videos": [{"kind": "PROMO", "url": "p.mp4"}],
               "template": "26", "specs": [{"key": "b", "value": "1 kg", "label": "ignored"}],
               "kit": [{"name": "Cable", "quantity": 2}, {"name": "Case", "quantity": 1}]},
              {"type": "category", "id": 13, "title": "Sony", "parent": {"id": 10}, "level": 3},
              {"type": "category", "id": 2, "icon": null},
              {"type": "template", "id": 7, "specs": [{"key": "a", "label": "Focal length (mm)"}], "referenceCategory": "Lenses"},
              {"type": "manufacturer", "name": " ARRI ", "logo": "arri-2.png"},
              {"type": "manufacturer", "name": "Sony", "logo": "sony.png"}
            ]
            """)
        var expected = ImportSummary()
        expected.productsInserted = 1; expected.productsUpdated = 1; expected.kitRowsWritten = 3
        expected.categoriesInserted = 1; expected.categoriesUpdated = 1
        expected.templatesUpdated = 1; expected.manufacturersInserted = 1; expected.manufacturersUpdated = 1
        expected.version = 7; expected.catalogRow = 1; expected.assetRow = 7
        #expect(summary == expected)
        #expect(try row("SELECT Product, product_ID FROM Product_Catalog WHERE keyid = 1") == [#"text("ALEXA Mini LF v2")"#, #"text("K1478")"#])
        #expect(try row("""
            SELECT product_ID, Product, Manufacturer, cat, displayorder, display_Image01, display_Image02, display_Image03,
                   promovid, bracketvid, info_DetailsKey, info_spec_a, info_spec_b, description FROM Product_Catalog WHERE keyid = 200
            """) == [#"text("N200")"#, #"text("New camera")"#, #"text("RED")"#, "integer(12)", "integer(4)", #"text("x.jpg")"#,
                     #"text("y.jpg")"#, #"text("")"#, #"text("p.mp4")"#, #"text("")"#, #"text("26")"#, #"text("")"#,
                     #"text("1 kg")"#, #"text("")"#])
        // Kit K1478 replaced (rows 1, 2 and the 'K1478 ' row untouched); N200's added.
        #expect(try rows("SELECT assetID, kitID, asset, kitQTY FROM Product_Assets WHERE assetID > 5 ORDER BY assetID") == [
            ["integer(6)", #"text("K1478 ")"#, #"text("Not matching (trailing space)")"#, #"text("1")"#],
            ["integer(7)", #"text("K1478")"#, #"text("Handle")"#, #"text("3")"#],
            ["integer(8)", #"text("N200")"#, #"text("Cable")"#, #"text("2")"#],
            ["integer(9)", #"text("N200")"#, #"text("Case")"#, #"text("1")"#],
        ])
        #expect(try row("SELECT * FROM hierarchy WHERE id = 13") == ["integer(13)", #"text("Sony")"#, #"text("")"#, "integer(3)", "integer(10)"])
        #expect(try row("SELECT menu_title, menu_icon FROM hierarchy WHERE id = 2") == [#"text("Lenses")"#, #"text("")"#])
        #expect(try row("SELECT spec_a, spec_b, ReferenceCategory FROM DetailsKeyValues WHERE DetailsKey = 7")
                == [#"text("aFocal length (mm)")"#, "null", #"text("Lenses")"#])
        #expect(try rows("SELECT * FROM mfg WHERE mfgid IN (3, 5, 10) ORDER BY mfgid") == [
            ["integer(3)", #"text("ARRI")"#, #"text("arri-2.png")"#],   // the lowest mfgid named ARRI
            ["integer(5)", #"text("ARRI ")"#, #"text("arri.png")"#],
            ["integer(10)", #"text("Sony")"#, #"text("sony.png")"#],
        ])
        #expect(try row("SELECT * FROM version WHERE versionid = 7") == ["integer(7)", "integer(1)", "integer(7)"])
        // One version for the whole import: products 1 and 200, those of kit K1478 (5), template
        // 7 (3, 7), ARRI (1, 2); categories 2 and 13.
        #expect(try SyncFixture.changes(path, since: 6)
                == ChangeSet(version: 7, productIDs: [1, 2, 3, 5, 7, 200], categoryIDs: [2, 13]))
    }

    @Test func unchangedRecordsAreNoChange() throws {
        let text = #"[{"id": 3, "name": "Cooke S4/i 32mm", "sku": "k1479", "kit": [{"name": "Lens cap", "quantity": 1}]}]"#
        let s = try run(text)
        #expect(s.productsUnchanged == 1 && s.productsUpdated == 0 && s.kitRowsWritten == 0)
        // Nothing changed: no version row (it would wake every subscriber for an empty set).
        #expect(!s.versionWritten && s.version == 6)
        #expect(try row("SELECT max(versionid) FROM version") == ["integer(6)"])
        #expect(try SyncFixture.changes(path, since: 6) == ChangeSet(version: 6))
        // An integer sku is stored as SQLite stores it (1480), and compares equal; the kit row
        // written is a change, so this import is version 7.
        let t = try run(#"[{"id": 2, "sku": "1480", "kit": [{"name": "Viewfinder", "quantity": 0}]}]"#)
        #expect(t.productsUnchanged == 1 && t.kitRowsWritten == 1)
        #expect(t.versionWritten && t.version == 7)
        #expect(try row("SELECT kitID, kitQTY FROM Product_Assets WHERE asset = 'Viewfinder'") == [#"text("1480")"#, #"text("0")"#])
    }

    /// A catalog without a column the queries read (which `query` and `serve` refuse) is not
    /// written to: the import is refused naming the column.
    @Test func aCatalogMissingAColumnIsRefusedAndNotWritten() throws {
        try db.execute("ALTER TABLE hierarchy DROP COLUMN menu_title")
        let before = try SyncFixture.bytes(path)
        do {
            _ = try run(#"[{"id": 3, "name": "x"}]"#)
            Issue.record("expected a refusal")
        } catch {
            guard case .catalog(let message) = error else { Issue.record("\(error)"); return }
            #expect(message == "\(path): not a Radiant catalog: column hierarchy.menu_title is missing")
        }
        #expect(try SyncFixture.bytes(path) == before)
    }

    @Test func objectFormWithSections() throws {
        let s = try run("""
            {"manufacturers": [{"name": "Canon"}],
             "products": [{"id": 7, "manufacturer": "Canon"}],
             "categories": [],
             "templates": [{"id": 99, "specs": []}]}
            """)
        #expect(s.productsUpdated == 1 && s.manufacturersInserted == 1 && s.templatesInserted == 1)
        #expect(try row("SELECT manufacturer, logo FROM mfg WHERE mfgid = 10") == [#"text("Canon")"#, #"text("")"#])
    }

    @Test func everyBadJSONRecordIsReportedAndNothingWritten() throws {
        #expect(try problems("""
            [
              {"id": 1, "sku": "K1", "name": 5},
              {"id": "x2",
               "images": ["1", "2", "3", "4", "5", "6"]},
              {"type": "category", "id": 3, "title": null},
              {"id": 1, "kit": [{"name": "a", "quantity": "two"}], "colour": "red"},
              {"type": "gadget"},
              {"type": "template", "id": 26, "specs": [{"key": "z", "label": "Z"}]},
              {"type": "manufacturer", "name": "  "},
              {"id": 9, "videos": [{"kind": "TRAILER", "url": "t"}], "specs": [{"key": "a", "value": 1}]},
              7
            ]
            """) == [
                "2: record 1: name: expected a string or null",
                "3: record 2: id: expected an ID (an integer, or a string holding one)",
                "3: record 2: images: 6 images, but the catalog has 5 image columns",
                "5: record 3: title: expected a string",
                "6: record 4: colour: unknown product field (known: id, sku, name, manufacturer, category, displayOrder, thumbnail, images, videos, panoramaUrl, description, specs, kit, template)",
                "6: record 4: kit: needs the product's sku in the same record (kit rows are keyed by it)",
                "6: record 4: kit[0].quantity: expected an integer",
                "6: record 4: id: product 1 is also in record 1",
                "7: record 5: type: expected \"product\", \"category\", \"template\" or \"manufacturer\"",
                "8: record 6: specs[0].key: no column spec_z (template keys: a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t)",
                "9: record 7: name: expected a non-empty string",
                "10: record 8: videos[0].kind: unknown video kind TRAILER (known: BRACKET, DYNAMIC_RANGE, COLOR_RENDITION, PROMO, GREEN_SCREEN)",
                "10: record 8: specs[0].value: expected a string or null",
                "11: record 9: expected an object",
            ])
    }

    /// A member name is the file's own text, printed in the report: its control characters
    /// (an ESC that clears the screen, a newline that forges a line of the report) are escaped.
    @Test func aReportPrintsNoControlCharacterFromTheFile() throws {
        #expect(try problems(#"[{"id": 1, "c\u001b[2J\nimported 1 product\u2028x": 1}]"#) == [
            "1: record 1: c\\u001b[2J\\u000aimported 1 product\\u2028x: unknown product field (known: id, sku, name, manufacturer, category, displayOrder, thumbnail, images, videos, panoramaUrl, description, specs, kit, template)",
        ])
    }

    @Test func syntaxErrorsAndShapes() throws {
        #expect(try problems("[{\"id\": 1},\n {\"id\": 2, \"name\": \"x\"\n") == ["2: unexpected end of file inside the value starting here"])
        #expect(try problems("[{\"id\": 1},\n\n {\"id\": 3, \"name\": tru}]") == ["3: invalid JSON: invalid token near 'tru'"])
        #expect(try problems("{\"products\": {\"id\": 1}, \"extra\": []}")
                == ["1: products: expected an array", "1: extra: unknown member (expected products, categories, templates or manufacturers)"])
        #expect(try problems("{\"categories\": [{\"type\": \"template\", \"id\": 1}]}")
                == ["1: categories record 1: type: is \"template\" in an array of category records"])
        #expect(try problems("[] []") == ["1: unexpected text after the end of the JSON value"])
        // A member given twice is refused, as a CSV column given twice is (jansson kept the last).
        #expect(try problems("[{\"id\": 1},\n {\"id\": 2, \"name\": \"a\", \"name\": \"b\"}]")
                == ["2: invalid JSON: duplicate object key near '\"name\"'"])
        #expect(try problems(" \n ") == ["1: empty file"])
    }

    @Test func aNewTemplateGetsEmptyTextWhereNothingWasGiven() throws {
        let s = try run(#"[{"type": "template", "id": 77, "specs": [{"key": "a", "label": "Weight"}]}]"#)
        #expect(s.templatesInserted == 1)
        #expect(try row("SELECT ReferenceCategory, spec_a FROM DetailsKeyValues WHERE DetailsKey = 77")
                == [#"text("")"#, #"text("aWeight")"#])
    }

    @Test func csvUpsertsProducts() throws {
        let s = try run("""
            keyid,Product,CAT,displayorder,product_ID
            1,"ALEXA, ""Mini""
            LF",12,,K1478
            300,Added,,7,N300
            """, file: "in.csv")
        #expect(s.productsUpdated == 1 && s.productsInserted == 1)
        #expect(try row("SELECT Product, cat, displayorder, Manufacturer FROM Product_Catalog WHERE keyid = 1")
                == ["text(\"ALEXA, \\\"Mini\\\"\\nLF\")", "integer(12)", #"text("")"#, #"text("ARRI ")"#])
        #expect(try row("SELECT Product, cat, displayorder, description FROM Product_Catalog WHERE keyid = 300")
                == [#"text("Added")"#, #"text("")"#, "integer(7)", #"text("")"#])
    }

    @Test func everyBadCSVRecordIsReportedAndNothingWritten() throws {
        #expect(try problems("keyid,Product,bogus,keyid\n1,a,b,1\n", file: "in.csv")
                == ["1: header: bogus: no such column in Product_Catalog", "1: header: keyid: column given twice"])
        #expect(try problems("Product\nx\n", file: "in.csv") == ["1: header: no keyid column"])
        #expect(try problems("""
            keyid,Product,cat
            1,"multi
            line",12
            x,Third,3
            4,Fourth,abc
            5,Short
            1,Again,2
            """, file: "in.csv") == [
                "4: record 2: keyid: expected an integer keyid, got \"x\"",
                "5: record 3: cat: expected an integer or nothing, got \"abc\"",
                "6: record 4: 2 fields, but the header has 3",
                "7: record 5: keyid: keyid 1 is also in record 1",
            ])
        #expect(try problems("keyid,Product\n1,\"open\n", file: "in.csv") == ["2: unterminated quoted field"])
        #expect(try problems("keyid,Product\r\n1,a\r\n2,x,y\r\n", file: "in.csv")
                == ["3: record 2: 3 fields, but the header has 2"])  // CRLF: one line end
        // Classic Mac line ends (lone CR) are line ends: the records and their lines are found.
        #expect(try problems("keyid,Product\r1,\"a\rb\"\r2,x,y\r", file: "in.csv")
                == ["4: record 2: 3 fields, but the header has 2"])
        #expect(try problems("[{\"id\": 1},\r\r {\"id\": 3, \"name\": 5}]")
                == ["3: record 2: name: expected a string or null"])
        // Not UTF-8 (a Latin-1 export): reported with its record's line, not stored with U+FFFD.
        let latin1: [UInt8] = Array("keyid,Product\n1,ok\n2,\"two\nlines\",\n3,Caf".utf8) + [0xE9] + Array("\n".utf8)
        let before = try SyncFixture.bytes(path)
        do {
            _ = try CatalogImporter.run(db, bytes: latin1, file: "in.csv")
            Issue.record("expected problems")
        } catch {
            guard case .invalid(_, let problems) = error else { Issue.record("\(error)"); return }
            #expect(problems.map(\.description) == ["5: field 2 is not valid UTF-8 (save the file as UTF-8)"])
        }
        #expect(try SyncFixture.bytes(path) == before)
    }

    @Test func readOnlyCatalogsAreRefused() throws {
        let ro = try Database(path: path, readOnly: true)
        do {
            _ = try CatalogImporter.run(ro, bytes: Array(#"[{"id": 1}]"#.utf8), file: "in.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "\(path): read-only; cannot import")
            #expect(!error.isWriteFailure)
        }
        // Checking alone works on a read-only connection.
        #expect(try CatalogImporter.check(ro, bytes: Array(#"[{"id": 1}, {"type": "category", "id": 4}]"#.utf8), file: "x") == 2)
    }

    @Test func aLockedCatalogRollsBack() throws {
        let other = try Database(path: path, readOnly: false, busyTimeoutMs: 0)
        let mine = try Database(path: path, readOnly: false, busyTimeoutMs: 0)
        try other.execute("BEGIN IMMEDIATE")
        defer { try? other.execute("ROLLBACK") }
        do {
            _ = try CatalogImporter.run(mine, bytes: Array(#"[{"id": 1, "name": "x"}]"#.utf8), file: "in.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.isWriteFailure)
        }
    }

    @Test func anImportOntoTheLargestVersionIsRolledBackNotACrash() throws {
        let w = try SyncFixture.writer(path)
        try w.execute("UPDATE version SET versionid = 9223372036854775807 WHERE versionid = 6")
        let before = try SyncFixture.bytes(path)
        do {
            _ = try run(#"[{"id": 1, "name": "renamed"}]"#)
            Issue.record("expected an error")
        } catch {
            #expect(error.isWriteFailure)
            #expect("\(error)".contains("the largest integer SQLite holds: there is no next version"), "\(error)")
        }
        #expect(try SyncFixture.bytes(path) == before)
        #expect(throws: VersionBump.Exhausted.self) { try VersionBump.insert(w) }
    }

    @Test func bumpVersionPointsTheOriginalAppsAtPendingRows() throws {
        let w = try SyncFixture.writer(path)
        try w.execute("""
            UPDATE Product_Catalog SET Product = 'x' WHERE keyid = 5;
            INSERT INTO Product_Catalog (keyid, Product) VALUES (40, 'y');
            DELETE FROM Product_Catalog WHERE keyid = 2;
            UPDATE Product_Assets SET kitQTY = '9' WHERE assetID = 4;
            """)
        #expect(try VersionBump.insert(w) == VersionBump.Result(version: 7, catalogRow: 5, assetRow: 4))
        // Nothing since: one past the greatest rows; an explicit row lowers it.
        #expect(try VersionBump.insert(w) == VersionBump.Result(version: 8, catalogRow: 41, assetRow: 7))
        #expect(try VersionBump.insert(w, catalogRow: 3) == VersionBump.Result(version: 9, catalogRow: 3, assetRow: 7))
        // A given row above the default does not raise it (the apps would skip rows).
        #expect(try VersionBump.insert(w, catalogRow: 99_999, assetRow: 99_999) == VersionBump.Result(version: 10, catalogRow: 41, assetRow: 7))
        try w.execute("UPDATE Product_Catalog SET Product = 'z' WHERE keyid = 7")
        #expect(try VersionBump.insert(w, catalogRow: 20, assetRow: 2) == VersionBump.Result(version: 11, catalogRow: 7, assetRow: 2))
        #expect(try SyncFixture.changes(path, since: 6) == ChangeSet(version: 11, productIDs: [5, 7, 40], removedProductIDs: [2]))
    }
}
