import Foundation
import Testing
@testable import Resolvers
import TestSupport

/// Change capture and change sets over the contract fixture (versions 5 and 6; capture
/// installed at 6). Every edit is made by a separate connection (or the sqlite3 shell), and
/// every expected set is worked out from SYNC.md by hand.
@Suite struct SyncCaptureTests {
    let path: String
    let w: Database

    init() throws {
        path = try SyncFixture.make()
        w = try SyncFixture.writer(path)
    }

    func bump(_ v: Int) throws { try w.execute("INSERT INTO version VALUES (\(v), '', '')") }
    func set(_ since: Int, to: Int? = nil) throws -> ChangeSet { try SyncFixture.changes(path, since: since, to: to) }

    // MARK: Installation

    @Test func installIsIdempotentAndWritesNothingTheSecondTime() throws {
        let db = try Database(path: path, readOnly: false)
        #expect(try ChangeCapture.isInstalled(db))
        let before = try SyncFixture.bytes(path)
        try ChangeCapture.install(db)
        try ChangeCapture.install(db)
        #expect(try SyncFixture.bytes(path) == before)
        let names = try db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'cg\\_%' ESCAPE '\\' ORDER BY name")
        var all: [String] = []
        while try names.step() { all.append(names.text(0) ?? "") }
        #expect(all.filter { !$0.hasPrefix("sqlite_autoindex") }.allSatisfy { $0.hasPrefix("cg_") })
        #expect(all.contains("cg_changes") && all.contains("cg_product_catalog_ai") && all.contains("cg_version_ai"))
        // Every other object is the catalog's own, exactly as in a catalog without capture.
        func catalogObjects(_ db: Database) throws -> [String] {
            let s = try db.prepare("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
            var out: [String] = []
            while try s.step() { if let t = s.text(0), !t.contains(" cg_"), !t.contains("autoindex_cg_") { out.append(t) } }
            return out
        }
        let plain = try Database(path: try SyncFixture.make(capture: false), readOnly: true)
        #expect(try catalogObjects(db) == catalogObjects(plain))
        #expect(try catalogObjects(db).count == 12)
    }

    @Test func aMissingIndexIsAddedWithoutLosingHistory() throws {
        try w.execute("UPDATE Product_Catalog SET Product = 'x' WHERE keyid = 1")
        try bump(7)
        try w.execute("DROP INDEX cg_product_details_key")
        #expect(try ChangeCapture.install(w) == ["cg_product_details_key"])
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [1]))
    }

    @Test func aMissingTriggerRestartsHistory() throws {
        try w.execute("DROP TRIGGER cg_mfg_au")
        try w.execute("UPDATE mfg SET logo = 'unseen.png' WHERE mfgid = 9")
        try bump(7)
        #expect(try !ChangeCapture.isInstalled(w))
        #expect(try ChangeCapture.install(w) == ChangeCapture.triggerNames())
        // Changes may have gone unrecorded: resuming from before now would miss them.
        #expect(try SyncFixture.error(path, since: 6) == .expired(since: 6, oldest: 7))
        #expect(try set(7) == ChangeSet(version: 7))
    }

    @Test func historyStartsAtTheInstalledVersion() throws {
        let db = try Database(path: path, readOnly: true)
        #expect(try ChangeCapture.state(db) == ChangeCapture.State(installedVersion: 6, oldestVersion: 6))
        #expect(try ChangeSets.mode(db) == .captured)
        #expect(try set(6) == ChangeSet(version: 6))
        #expect(try SyncFixture.error(path, since: 5) == .expired(since: 5, oldest: 6))
        #expect(try SyncFixture.error(path, since: -1) == .expired(since: -1, oldest: 6))
        #expect(try SyncFixture.error(path, since: 7) == .ahead(since: 7, current: 6))
        #expect(ChangeSetError.expired(since: 5, oldest: 6).code == "CHANGES_EXPIRED")
        #expect(ChangeSetError.ahead(since: 7, current: 6).code == "VERSION_AHEAD")
        #expect(ChangeSetError.ahead(since: 7, current: 6).message
            == "Version 7 is ahead of the catalog's current version 6. Refetch the catalog.")
    }

    @Test func installRefusesAFileThatIsNotACatalog() throws {
        let p = TestFiles.file("notcatalog")
        let db = try Database(path: p, readOnly: false, create: true)
        try db.execute("CREATE TABLE Product_Catalog (x)")
        #expect(throws: ChangeCaptureError.self) { try ChangeCapture.install(db) }
        #expect(try !db.tableExists("cg_changes"))
    }

    // MARK: Products

    @Test func insertUpdateDeleteBySeparateConnection() throws {
        try w.execute("""
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (100, 'N1', 'New', 'RED', 12);
            UPDATE Product_Catalog SET Product = 'Cooke S4/i 35mm' WHERE keyid = 3;
            DELETE FROM Product_Catalog WHERE keyid = 4;
            """)
        // Pending: not part of any version yet.
        #expect(try set(6) == ChangeSet(version: 6))
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [3, 100], removedProductIDs: [4]))
        #expect(try set(7) == ChangeSet(version: 7))
    }

    @Test func insertOrReplaceIsSeen() throws {
        try w.execute("""
            INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product) VALUES (2, 'R2', 'Replaced');
            INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product) VALUES (101, 'R101', 'Brand new');
            """)
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [2, 101]))
        // A row replaced away by UPDATE OR REPLACE is removed; the row now under its key changed.
        try w.execute("UPDATE OR REPLACE Product_Catalog SET keyid = 1 WHERE keyid = 7")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [1], removedProductIDs: [7]))
    }

    @Test func insertOrReplaceWithRecursiveTriggersIsSeenOnce() throws {
        try w.execute("PRAGMA recursive_triggers = ON")
        try w.execute("INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product) VALUES (5, 'R5', 'Replaced')")
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [5]))
        let n = try w.scalarInt("SELECT count(*) FROM cg_changes WHERE tbl = 'P' AND op = 'D' AND old_key = 5")
        #expect(n == 1)
    }

    @Test func insertOrIgnoreOfAnExistingRowIsNoChange() throws {
        try w.execute("INSERT OR IGNORE INTO Product_Catalog (keyid, product_ID, Product) VALUES (2, 'X', 'Ignored')")
        try w.execute("INSERT OR IGNORE INTO DetailsKeyValues (DetailsKey, spec_a) VALUES (26, 'aIgnored')")
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7))
        // The note left by the ignored insert does not turn a later plain insert into a
        // replacement: delete 2, insert it again -> 2 changed, not removed.
        try w.execute("DELETE FROM Product_Catalog WHERE keyid = 2")
        try w.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product) VALUES (2, 'Y', 'Again')")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [2]))
    }

    @Test func failedStatementsRecordNothing() throws {
        #expect(throws: SQLiteError.self) {
            try w.execute("INSERT INTO Product_Catalog (keyid, product_ID) VALUES (300, 'ok'), (2, 'dup')")
        }
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7))
    }

    @Test func editsByTheSqlite3Shell() throws {
        let r = try SyncFixture.sqlite3(path, """
            UPDATE Product_Catalog SET Product = 'Élan Dolly II' WHERE keyid = 5;
            INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product) VALUES (6, 'D6', '9mm Adapter v2');
            DELETE FROM Product_Catalog WHERE keyid = 7;
            INSERT INTO version VALUES (7, '5', '');
            """)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [5, 6], removedProductIDs: [7]))
    }

    @Test func keyChangesAreADeleteAndAnInsert() throws {
        try w.execute("UPDATE Product_Catalog SET keyid = 200 WHERE keyid = 3")
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [200], removedProductIDs: [3]))
    }

    @Test func insertedAndDeletedInRangeAppearsNowhere() throws {
        try w.execute("INSERT INTO Product_Catalog (keyid, Product) VALUES (150, 'Brief')")
        try bump(7)
        try w.execute("DELETE FROM Product_Catalog WHERE keyid = 150")
        try w.execute("DELETE FROM Product_Catalog WHERE keyid = 1")
        try bump(8)
        try w.execute("INSERT INTO Product_Catalog (keyid, Product) VALUES (1, 'Back')")
        try bump(9)
        #expect(try set(6) == ChangeSet(version: 9, productIDs: [1]))
        #expect(try set(7) == ChangeSet(version: 9, productIDs: [1], removedProductIDs: [150]))
        #expect(try set(8) == ChangeSet(version: 9, productIDs: [1]))
        // Membership follows the state at `to`: at 8, product 1 was gone.
        #expect(try set(6, to: 8) == ChangeSet(version: 8, removedProductIDs: [1]))
        #expect(try set(7, to: 8) == ChangeSet(version: 8, removedProductIDs: [1, 150]))
    }

    // MARK: Related rows

    @Test func kitOnlyEdits() throws {
        try w.execute("UPDATE Product_Assets SET kitQTY = '3' WHERE assetID = 3") // kit '1480' = product 2's integer sku
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [2]))
        // Moving a kit row changes the products of the old and the new kit.
        try w.execute("UPDATE Product_Assets SET kitID = 'k1479' WHERE assetID = 1")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [1, 3, 5]))
        // Exact text: '01480' and '1480 ' are no product's kit.
        try w.execute("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES ('01480', 'x', '1'), ('1480 ', 'y', '1')")
        try w.execute("DELETE FROM Product_Assets WHERE assetID = 6")
        try bump(9)
        #expect(try set(8) == ChangeSet(version: 9))
        try w.execute("INSERT OR REPLACE INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES (5, 'D7', 'moved', '1')")
        try bump(10)
        #expect(try set(9) == ChangeSet(version: 10, productIDs: [3, 7]))
        // A REAL or a BLOB product_ID is served as its text, and its kit is the rows naming that
        // text: the column's integer affinity would never let text equal them.
        try w.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product) VALUES (40, X'4B31', 'blob sku'), (41, 2.5, 'real sku')")
        try bump(11)
        try w.execute("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES ('K1', 'handle', '1'), ('2.5', 'plate', '1')")
        try bump(12)
        #expect(try set(11) == ChangeSet(version: 12, productIDs: [40, 41]))
    }

    @Test func templateEdits() throws {
        try w.execute("UPDATE DetailsKeyValues SET spec_b = 'bMass' WHERE DetailsKey = 26")
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [1, 2])) // '26' and ' 26 '
        try w.execute("DELETE FROM DetailsKeyValues WHERE DetailsKey = 7")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [3, 7])) // '7' and '+7', not 'x7'
        try w.execute("INSERT INTO DetailsKeyValues (DetailsKey, spec_a) VALUES (99, 'aNew')")
        try bump(9)
        #expect(try set(8) == ChangeSet(version: 9, productIDs: [4]))
    }

    @Test func manufacturerEdits() throws {
        try w.execute("UPDATE mfg SET logo = 'new.png' WHERE mfgid = 5") // 'ARRI '
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [1, 2]))
        try w.execute("UPDATE mfg SET manufacturer = 'Chapman' WHERE mfgid = 7") // was 'Cooke'
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [3, 5, 6]))
        try w.execute("INSERT INTO mfg VALUES (20, ' ZEISS', 'z.png')")
        try bump(9)
        #expect(try set(8) == ChangeSet(version: 9, productIDs: [7]))
    }

    /// Kit and mfg refs holding text that is not UTF-8, or a NUL, name the products whose
    /// product_ID or Manufacturer is served as the same text (the kit and the logo compare them
    /// so). Before stop 21 the refs, read repaired, were matched with the stored bytes, and NULs
    /// were cut by json_each: such products were never listed.
    @Test func kitAndMakerRefsInDamagedTextOrWithANul() throws {
        // Product 2: product_ID Latin-1 "M\u{F6}" (served "M\u{FFFD}"); product 3: "A\0B".
        try w.execute("UPDATE Product_Catalog SET product_ID = CAST(X'4DF6' AS TEXT) WHERE keyid = 2")
        try w.execute("UPDATE Product_Catalog SET product_ID = CAST(X'410042' AS TEXT) WHERE keyid = 3")
        try bump(7)
        // A kit row for other bytes served the same ("M\u{FC}"), and one for "A\0B".
        try w.execute("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES (CAST(X'4DFC' AS TEXT), 'cable', '2')")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [2]))
        try w.execute("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES (CAST(X'410042' AS TEXT), 'shim', '1')")
        try bump(9)
        #expect(try set(8) == ChangeSet(version: 9, productIDs: [3]))
        // "A" alone is product 3's kit no more than "A\0B" is another's.
        try w.execute("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES ('A', 'x', '1')")
        try bump(10)
        #expect(try set(9) == ChangeSet(version: 10))
        // Manufacturers: product 4 made by Latin-1 "M\u{FC}ller", product 5 by "Mk\0r".
        try w.execute("UPDATE Product_Catalog SET Manufacturer = CAST(X'4DFC6C6C6572' AS TEXT) WHERE keyid = 4")
        try w.execute("UPDATE Product_Catalog SET Manufacturer = CAST(X'4D6B0072' AS TEXT) WHERE keyid = 5")
        try bump(11)
        try w.execute("INSERT INTO mfg VALUES (30, CAST(X'4DF66C6C6572' AS TEXT), 'm.png')")  // "M\u{F6}ller", served alike
        try bump(12)
        #expect(try set(11) == ChangeSet(version: 12, productIDs: [4]))
        try w.execute("INSERT INTO mfg VALUES (31, CAST(X'4D6B0072' AS TEXT), 'k.png')")
        try bump(13)
        #expect(try set(12) == ChangeSet(version: 13, productIDs: [5]))
    }

    // MARK: Categories

    @Test func hierarchyExistence() throws {
        // A renamed category changes itself only.
        try w.execute("UPDATE hierarchy SET menu_title = 'Digital' WHERE id = 10")
        try bump(7)
        #expect(try set(6) == ChangeSet(version: 7, categoryIDs: [10]))
        // A deleted category: removed; its products (cat 20) changed.
        try w.execute("DELETE FROM hierarchy WHERE id = 20")
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [3, 7], removedCategoryIDs: [20]))
        // A new row for a dangling id: product 5 (cat 999) and orphan 50 (parent 999) changed.
        try w.execute("INSERT INTO hierarchy VALUES (999, 'Dollies', '', 1, 0)")
        try bump(9)
        #expect(try set(8) == ChangeSet(version: 9, productIDs: [5], categoryIDs: [50, 999]))
        // Deleted and inserted again within one version: existence did not change.
        try w.execute("DELETE FROM hierarchy WHERE id = 12; INSERT INTO hierarchy VALUES (12, 'ARRI', '', 3, 10)")
        try bump(10)
        #expect(try set(9) == ChangeSet(version: 10, categoryIDs: [12]))
        // ... but across versions it did: the products of 12 changed in both.
        try w.execute("DELETE FROM hierarchy WHERE id = 12")
        try bump(11)
        try w.execute("INSERT INTO hierarchy VALUES (12, 'ARRI', '', 3, 10)")
        try bump(12)
        #expect(try set(10) == ChangeSet(version: 12, productIDs: [1, 2], categoryIDs: [12]))
        #expect(try set(10, to: 11) == ChangeSet(version: 11, productIDs: [1, 2], removedCategoryIDs: [12]))
        #expect(try set(6) == ChangeSet(version: 12, productIDs: [1, 2, 3, 5, 7], categoryIDs: [10, 12, 50, 999],
                                        removedCategoryIDs: [20]))
    }

    // MARK: Versions

    @Test func changesBeforeTheVersionRowInItsTransactionBelongToIt() throws {
        try w.execute("BEGIN; UPDATE Product_Catalog SET Product = 'a' WHERE keyid = 1; INSERT INTO version VALUES (7, '', ''); COMMIT")
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [1]))
    }

    @Test func changesAfterTheVersionRowInItsTransactionBelongToTheNextVersion() throws {
        // SQLite triggers cannot see commit boundaries (docs/SYNC.md): such a change counts in
        // the next version — never lost, never repeated.
        try w.execute("BEGIN; INSERT INTO version VALUES (7, '', ''); UPDATE Product_Catalog SET Product = 'b' WHERE keyid = 2; COMMIT")
        #expect(try set(6) == ChangeSet(version: 7))
        try bump(8)
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [2]))
        #expect(try set(6) == ChangeSet(version: 8, productIDs: [2]))
    }

    @Test func pendingChangesDecideNothing() throws {
        // Version 7: product 1 deleted, kit K1478 edited, product 2 renamed.
        try w.execute("""
            DELETE FROM Product_Catalog WHERE keyid = 1;
            UPDATE Product_Assets SET asset = 'Top handle v2' WHERE assetID = 2;
            UPDATE Product_Catalog SET Product = 'alexa 35 v2' WHERE keyid = 2;
            """)
        try bump(7)
        // Not yet in a version: 1 inserted again, 300 inserted into kit K1478, 2 deleted.
        try w.execute("""
            INSERT INTO Product_Catalog (keyid, product_ID, Product) VALUES (1, 'K1478', 'ALEXA Mini LF'), (300, 'K1478', 'Kit twin');
            DELETE FROM Product_Catalog WHERE keyid = 2;
            """)
        // At 7, 1 did not exist (removed, not listed), 300 did not exist, 2 existed (but is
        // gone now, so it cannot be listed; its deletion comes with version 8).
        #expect(try set(6) == ChangeSet(version: 7, productIDs: [5], removedProductIDs: [1]))
        try w.execute("DELETE FROM Product_Catalog WHERE keyid IN (1, 300)")
        try bump(8)
        // 1 and 300 were inserted and deleted inside (7, 8]: nowhere. 2: removed.
        #expect(try set(7) == ChangeSet(version: 8, removedProductIDs: [2]))
    }

    @Test func raisingAVersionRowMakesANewVersion() throws {
        try w.execute("UPDATE Product_Catalog SET Product = 'c' WHERE keyid = 3")
        try w.execute("UPDATE version SET versionid = 9 WHERE versionid = 6")
        #expect(try set(6) == ChangeSet(version: 9, productIDs: [3]))
        // A row below the current version is no new version: the change stays pending.
        try w.execute("UPDATE Product_Catalog SET Product = 'd' WHERE keyid = 4")
        try w.execute("INSERT INTO version VALUES (8, '', '')")
        #expect(try set(9) == ChangeSet(version: 9))
        try bump(10)
        #expect(try set(9) == ChangeSet(version: 10, productIDs: [4]))
    }

    @Test func severalVersionsInOneSet() throws {
        try w.execute("UPDATE Product_Catalog SET Product = 'x' WHERE keyid = 1")
        try bump(7)
        try w.execute("UPDATE Product_Catalog SET Product = 'y' WHERE keyid = 2")
        try bump(8)
        #expect(try set(6) == ChangeSet(version: 8, productIDs: [1, 2]))
        #expect(try set(7) == ChangeSet(version: 8, productIDs: [2]))
        #expect(try set(6, to: 7) == ChangeSet(version: 7, productIDs: [1]))
        #expect(try SyncFixture.error(path, since: 6, to: 9) == .ahead(since: 9, current: 8))
    }

    // MARK: Retention

    @Test func compactionExpiresOldVersions() throws {
        for v in 7...10 {
            try w.execute("UPDATE Product_Catalog SET Product = 'v\(v)' WHERE keyid = \(v - 6)")
            try bump(v)
        }
        let r = try ChangeCapture.compact(w, keepVersions: 2, keepDays: nil)
        #expect(r.oldestVersion == 9)
        #expect(r.deletedChanges == 3)
        #expect(try SyncFixture.error(path, since: 8) == .expired(since: 8, oldest: 9))
        #expect(try set(9) == ChangeSet(version: 10, productIDs: [4]))
        // Compaction never moves backwards, and a later one with a looser limit does nothing.
        #expect(try ChangeCapture.compact(w, keepVersions: 10, keepDays: nil).oldestVersion == 9)
        // Keep one day, seen two days later: only the current version stays.
        let later = try ChangeCapture.julianNow(w) + 2
        #expect(try ChangeCapture.compact(w, keepVersions: nil, keepDays: 1, now: later).oldestVersion == 10)
        #expect(try SyncFixture.error(path, since: 9) == .expired(since: 9, oldest: 10))
        // The change log keeps counting upwards after everything was compacted.
        try w.execute("UPDATE Product_Catalog SET Product = 'after' WHERE keyid = 5")
        try bump(11)
        #expect(try set(10) == ChangeSet(version: 11, productIDs: [5]))
    }

    // MARK: Read-only catalogs

    @Test func readOnlyCatalogsUseTheVersionRow() throws {
        let p = try SyncFixture.make(capture: false)
        let w = try SyncFixture.writer(p)
        try w.execute("INSERT INTO version VALUES (7, '5', 4)")
        let db = try Database(path: p, readOnly: true)
        #expect(try ChangeSets.mode(db) == .versionRows)
        // keyid >= 5, and the owners of assets >= 4: 'NOPE' (none), 'k1479' (3), 'K1478 ' (none).
        #expect(try SyncFixture.changes(db, since: 6) == ChangeSet(version: 7, productIDs: [3, 5, 6, 7]))
        // (0, 7] covers version 5 too, whose row asks for assets from 3 on: kit '1480', product 2.
        #expect(try SyncFixture.changes(db, since: 0) == ChangeSet(version: 7, productIDs: [2, 3, 5, 6, 7]))
        #expect(try SyncFixture.changes(db, since: 7) == ChangeSet(version: 7))
        #expect(try SyncFixture.error(p, since: 8) == .ahead(since: 8, current: 7))
        #expect(try SyncFixture.error(p, since: -1) == .expired(since: -1, oldest: nil))
        // updatecatalogrow '' and NULL name no rows.
        try w.execute("INSERT INTO version VALUES (8, '', NULL)")
        #expect(try SyncFixture.changes(db, since: 7) == ChangeSet(version: 8))
        // A set covering several versions holds what each of their rows asks for: here version
        // 7's rows from keyid 5 on, which version 9's row (from 7) alone would not.
        try w.execute("INSERT INTO version VALUES (9, 7, NULL)")
        #expect(try SyncFixture.changes(db, since: 8) == ChangeSet(version: 9, productIDs: [7]))
        #expect(try SyncFixture.changes(db, since: 6) == ChangeSet(version: 9, productIDs: [3, 5, 6, 7]))
    }

    @Test func readOnlyConnectionToACapturedCatalogIsExact() throws {
        try w.execute("DELETE FROM Product_Catalog WHERE keyid = 6")
        try bump(7)
        let db = try Database(path: path, readOnly: true)
        #expect(try ChangeSets.mode(db) == .captured)
        #expect(try SyncFixture.changes(db, since: 6) == ChangeSet(version: 7, removedProductIDs: [6]))
    }
}
