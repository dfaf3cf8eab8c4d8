import Foundation
import Testing
@testable import Resolvers
import Schema
import TestSupport

/// A small hand-made Radiant catalog with every quirk SEMANTICS.md talks about, written to a
/// temporary file with the exact contract schema (../shared/contract/radiant-schema.sql).
enum Fixture {
    static let contractDir = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/contract")

    static func radiantSchemaSQL() throws -> String {
        let text = try String(contentsOf: contractDir.appendingPathComponent("radiant-schema.sql"), encoding: .utf8)
        // sqlite_sequence is created by SQLite itself for the AUTOINCREMENT table.
        return text.replacingOccurrences(of: "CREATE TABLE sqlite_sequence(name,seq);", with: "")
    }

    static let rows = """
        INSERT INTO hierarchy VALUES (1,'Cameras','',1,0);
        INSERT INTO hierarchy VALUES (2,'Lenses','lens.png ',1,0);
        INSERT INTO hierarchy VALUES (10,' Digital Cinema ','',2,1);
        INSERT INTO hierarchy VALUES (11,'Film','',2,1);
        INSERT INTO hierarchy VALUES (12,'ARRI','',3,10);
        INSERT INTO hierarchy VALUES (20,'Primes','','',2);
        INSERT INTO hierarchy VALUES (50,'Orphan','',2,999);
        INSERT INTO hierarchy VALUES (51,'Orphan child','',3,50);
        INSERT INTO hierarchy VALUES (60,'Cycle A','',2,61);
        INSERT INTO hierarchy VALUES (61,'Cycle B','',2,60);
        INSERT INTO hierarchy VALUES (70,'Self','',1,70);

        INSERT INTO mfg VALUES (5,'ARRI ','arri.png');
        INSERT INTO mfg VALUES (3,'ARRI','arri-old.png');
        INSERT INTO mfg VALUES (7,'Cooke','');
        INSERT INTO mfg VALUES (9,'RED','red.png');

        INSERT INTO DetailsKeyValues (DetailsKey, spec_a, spec_b, spec_c, spec_d, spec_e) VALUES (26,'aSensor ','bWeight','cMount','e','e06)');
        INSERT INTO DetailsKeyValues (DetailsKey, spec_a, spec_b) VALUES (7,'aFocal length','bT-stop');

        INSERT INTO version VALUES (5,'10','3');
        INSERT INTO version VALUES (6,'','');

        INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder, display_Thumbnail,
            display_Image01, display_Image02, display_Image03, display_Image04, display_Image05, panorama, description,
            info_DetailsKey, info_spec_a, info_spec_b, info_spec_c, info_spec_d, info_spec_e,
            bracketvid, dynamicvid, colorrendvid, promovid, gscreenvid)
        VALUES
          (1, 'K1478', 'ALEXA Mini LF', 'ARRI ', 12, 2, 'mini.jpg', 'a.jpg', '', ' b.jpg ', '', 'c, d.jpg', '',
           '  Large format camera  ', '26', 'LF 36x25', '2.6 kg ', '', 'x', ' y ', '', 'dr.mp4', '', 'promo.mp4 ', ''),
          (2, 1480, 'alexa 35', 'ARRI', 12, 1, '', '', '', '', '', '', 'pano.html', '', ' 26 ', 'S35', '', '', '', '', '', '', '', '', ''),
          (3, 'k1479', 'Cooke S4/i 32mm', 'Cooke', 20, '', '', '', '', '', '', '', '', 'Prime lens 100% sharp_', '7', 'ignored', 'T2', '', '', '', '', '', '', '', ''),
          (4, '1481', 'RED Komodo', '  ', 10, 3, '', '', '', '', '', '', '', 'Compact', '99', 'z', '', '', '', '', '', '', '', '', ''),
          (5, 'K1478', 'Élan Dolly', 'Chapman', 999, 1, '', '', '', '', '', '', '', 'dolly', '', '', '', '', '', '', '', '', '', '', ''),
          (6, 'D6', '9mm Adapter', 'Cooke', 51, 1, '', '', '', '', '', '', '', '', 'x7', '', '', '', '', '', '', '', '', '', ''),
          (7, 'D7', 'zeiss ultra prime', 'ZEISS', 20, 0, '', '', '', '', '', '', '', 'Ultra', '+7', 'a', 'b', '', '', '', '', '', '', '', '');

        INSERT INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES
          (1, 'K1478', 'Battery plate, V-mount ', '2'),
          (2, 'K1478', 'Top handle', ''),
          (3, '1480', 'Viewfinder', 'x'),
          (4, 'NOPE', 'Orphan kit row', '1'),
          (5, 'k1479', 'Lens cap', '1'),
          (6, 'K1478 ', 'Not matching (trailing space)', '1');
        """

    /// Writes the fixture catalog to a new temporary file and returns its path.
    static func make(extraSQL: String = "") throws -> String {
        let path = TestFiles.file("fixture")
        let db = try Database(path: path, readOnly: false, create: true)
        try db.execute(try radiantSchemaSQL())
        try db.execute(rows)
        if !extraSQL.isEmpty { try db.execute(extraSQL) }
        return path
    }
}

/// Runs queries against a catalog file and returns the response text.
final class TestEngine {
    let service: QueryService
    let session: CatalogSession

    init(path: String, options: EngineOptions = EngineOptions()) throws {
        service = QueryService(options: options)
        session = try CatalogSession(path: path, service: service)
    }

    func run(_ query: String, variables: JSONValue? = nil, operationName: String? = nil) -> String {
        let result: ExecutionResult
        switch service.prepare(GraphQLRequest(query: query, variables: variables, operationName: operationName)) {
        case .failed(let r): result = r
        case .ready(let op): result = session.execute(op)
        }
        return String(decoding: result.json, as: UTF8.self)
    }

    /// Parses the response into Foundation objects for field-level assertions.
    func json(_ query: String, variables: JSONValue? = nil) -> [String: Any] {
        let text = run(query, variables: variables)
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? ["unparsable": text]
    }
}

/// A per-snapshot cache's check (SpecTemplateCacheTests, LogoCacheTests): each query answers
/// without errors and, run three times on `cached` (the first run fills the cache, the next ones
/// read it; the other queries in between fill it with other keys), as on `uncached`; then all
/// again in reverse order.
func expectCachedAnswersMatch(_ cached: TestEngine, _ uncached: TestEngine, _ queries: [String],
                              sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    for q in queries {
        let expected = uncached.run(q)
        #expect(!expected.contains("\"errors\""), "\(q): \(expected)", sourceLocation: sourceLocation)
        for _ in 0..<3 { #expect(cached.run(q) == expected, "\(q)", sourceLocation: sourceLocation) }
    }
    for q in queries.reversed() { #expect(cached.run(q) == uncached.run(q), "\(q)", sourceLocation: sourceLocation) }
}
