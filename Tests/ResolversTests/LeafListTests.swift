import Foundation
import Testing
@testable import Resolvers
import Schema

/// Product.kit and Product.specs written as JSON by the resolver (EngineOptions.serializeLeafLists)
/// give the executor's answers byte for byte, errors included, and are what the resolver returns
/// when only the items' scalar fields are selected.
@Suite struct LeafListTests {
    /// The fixture plus kit rows that need escaping, are not UTF-8 or share a kit between products.
    static let extraSQL = #"""
        INSERT INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES
          (20, '1480', ' Cable "XLR" \ 3m	', ' 4 '),
          (21, '1480', CAST(X'4C656E7320C3A9FF2063617020' AS TEXT), '-2'),
          (22, '1480', '', '0012'),
          (23, 'D6', '  ', 'x');
        UPDATE Product_Catalog SET info_spec_b = ' "quoted" ' || char(10) || 'line ' WHERE keyid = 1;
        UPDATE Product_Catalog SET display_Image02 = ' "q" ' || char(9), display_Image04 = CAST(X'20C3A9FF20' AS TEXT) WHERE keyid = 2;
        """#
    /// A quantity no Int can represent (kit 'D7', product 7), and a display order (product 3).
    static let overflowSQL = """
        INSERT INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES (24, 'D7', 'Huge', '3000000000');
        UPDATE Product_Catalog SET displayorder = 3000000000 WHERE keyid = 3;
        """

    static let queries = [
        "{ products(first: 50) { nodes { id kit { id name quantity } specs { key label value } images manufacturer { name logo } } } }",
        "{ products(first: 50) { nodes { manufacturer { logo __typename n: name } m: manufacturer { __typename } } } }",
        "{ products(first: 50) { nodes { kit { q: quantity __typename n: name id } specs { value __typename v: value } } } }",
        "{ product(id: 1) { kit { ...K } specs { ... on Spec { label } } } } fragment K on KitItem { name id }",
        "{ product(id: 2) { kit { id @skip(if: true) } specs { key @include(if: false) } } }",
        "{ a: product(id: 5) { kit { id } } b: product(id: 1) { kit { name } } c: product(id: 6) { kit { name quantity } } }",
        "{ product(id: 7) { sku kit { id quantity } } }",
        "{ category(id: 12) { products { nodes { kit { name } specs { key } i: images images } } } }",
        // Whole products written by the resolver (CatalogResolver.nodesJSON), and not.
        "{ products(first: 50) { nodes { __typename id sku name displayOrder thumbnail panoramaUrl description images n: name i: id } } }",
        "{ products(first: 50) { nodes { id category { id } } } }",
        "{ categories { id products(first: 3, includeDescendants: true) { totalCount nodes { name displayOrder specs { key value } kit { name } manufacturer { name } } } } }",
        "{ manufacturers { name products(first: 2) { nodes { id sku kit { quantity } } n: nodes { manufacturer { logo } } } } }",
        "{ search(text: \"zzzz\") { nodes { id } } products(filter: { categoryId: 999 }) { nodes { name } } }",
        "{ products(first: 50) { nodes { videos { url } } } }",
    ]

    /// An engine with the resolver's JSON on (`serialize`) or off (the general path).
    static func engine(_ path: String, serialize: Bool) throws -> TestEngine {
        var options = EngineOptions()
        options.serializeLeafLists = serialize
        return try TestEngine(path: path, options: options)
    }

    func answers(_ path: String, serialize: Bool) throws -> [String] {
        let engine = try Self.engine(path, serialize: serialize)
        return Self.queries.map { engine.run($0) }
    }

    @Test(arguments: [false, true])
    func sameAnswersAsTheExecutor(overflow: Bool) throws {
        for prepared in [false, true] {
            let path = try Fixture.make(extraSQL: Self.extraSQL + (overflow ? Self.overflowSQL : ""))
            if prepared { try CatalogPreparation.prepare(try Database(path: path, readOnly: false)) }
            let written = try answers(path, serialize: true)
            let executed = try answers(path, serialize: false)
            for (q, (a, b)) in zip(Self.queries, zip(written, executed)) { #expect(a == b, "\(q)") }
            if overflow {
                #expect(written[6].contains("Int cannot represent non 32-bit signed integer value: 3000000000"))
                #expect(written[6].contains(#""path":["product","kit",0,"quantity"]"#))
                #expect(written[6].contains(#"3000000000","locations":[{"line":1,"column":"#))
                #expect(written[6].contains(#""extensions":{"code":"UNREPRESENTABLE_VALUE"}"#))
                #expect(written[8].contains(#""path":["products","nodes",5,"displayOrder"]"#))
                #expect(written[0].contains(#""path":["products","nodes",6,"kit",0,"quantity"]"#))
                continue
            }
            #expect(written[8].contains(#"{"__typename":"Product","id":"1","sku":"K1478","name":"ALEXA Mini LF","displayOrder":2,"thumbnail":"mini.jpg","panoramaUrl":null,"description":"Large format camera","images":["a.jpg","b.jpg","c, d.jpg"],"n":"ALEXA Mini LF","i":"1"}"#))
            // The cases the extra rows are there for.
            #expect(written[0].contains(#"{"id":"20","name":"Cable \"XLR\" \\ 3m","quantity":4}"#))
            #expect(written[0].contains(#"{"id":"21","name":"Lens é\#u{FFFD} cap","quantity":-2}"#))
            #expect(written[0].contains(#""value":"\"quoted\" \nline""#))
            #expect(written[0].contains(#"{"id":"2","kit":"#) && written[0].contains(#""images":["\"q\"","é\#u{FFFD}"],"manufacturer":{"name":"ARRI","logo":"arri-old.png"}}"#))
            // A manufacturer that trims to empty, one with an empty logo, one with no mfg row.
            #expect(written[0].contains(#"{"id":"4","kit":[],"specs":[],"images":[],"manufacturer":null}"#))
            #expect(written[0].contains(#""manufacturer":{"name":"Cooke","logo":null}"#))
            #expect(written[0].contains(#""manufacturer":{"name":"Chapman","logo":null}"#))
            #expect(written[4] == #"{"data":{"product":{"kit":[{},{},{},{}],"specs":[{}]}}}"#)
        }
    }

    /// Kit rows whose assetIDs interleave three kits: without cg_assets_kit SQLite scans
    /// Product_Assets in assetID order, so the kits' rows come mixed.
    static let interleavedSQL = """
        INSERT INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES
          (30, 'D6', 'Shim 0.1', '3'), (31, 'K1478', 'Cheese plate', '1'), (32, 'D6', 'Shim 0.2', '2'),
          (33, '1480', 'Sunshade', '1'), (34, 'K1478', 'Rod clamp', '4'), (35, 'D6', 'Shim 0.3', '1'),
          (36, '1480', 'Eyecup', '2');
        """

    /// Each product's kit is exactly its rows in assetID order, whatever order the kit
    /// statement's plan gives: with cg_assets_kit the plan's own order is used (one statement),
    /// without it the rows come mixed and the sorted statement answers (CatalogResolver.kitSQL).
    @Test(arguments: [false, true])
    func kitsAreEachProductsRowsInAssetOrder(prepared: Bool) throws {
        let path = try Fixture.make(extraSQL: Self.interleavedSQL)
        if prepared { try CatalogPreparation.prepare(try Database(path: path, readOnly: false)) }
        let db = try Database(path: path, readOnly: true)
        let reference = try db.prepare("""
            SELECT a.assetID, trim(a.asset), CAST(a.kitQTY AS INTEGER) FROM Product_Assets a, Product_Catalog p
            WHERE p.keyid = ? AND a.kitID = CAST(p.product_ID AS TEXT) ORDER BY a.assetID
            """)
        for serialize in [true, false] {
            let engine = try Self.engine(path, serialize: serialize)
            var sql: [String] = []
            engine.session.traceSQL { sql.append($0) }
            let data = engine.json("{ products(first: 50) { nodes { id kit { id name quantity } } } }")["data"] as? [String: Any]
            engine.session.traceSQL(nil)
            let nodes = ((data?["products"] as? [String: Any])?["nodes"] as? [[String: Any]]) ?? []
            #expect(nodes.count == 7)
            var items = 0
            for node in nodes {
                let keyid = Int64(node["id"] as? String ?? "") ?? -1
                reference.reset()
                reference.bind(keyid, at: 1)
                var expected: [String] = []
                while try reference.step() {
                    expected.append("\(reference.int64(0)) \(reference.text(1) ?? "") \(reference.int64(2))")
                }
                let kit = ((node["kit"] as? [[String: Any]]) ?? []).map {
                    "\($0["id"] as? String ?? "?") \($0["name"] as? String ?? "?") \(($0["quantity"] as? Int).map(String.init) ?? "?")"
                }
                #expect(kit == expected, "product \(keyid), serialize \(serialize)")
                items += kit.count
            }
            #expect(items == 15)  // K1478 twice (products 1 and 5): 4 each; 1480: 3; k1479: 1; D6: 3
            let kitStatements = sql.filter { $0.contains("\"Product_Assets\"") && $0.contains("json_each") }
            #expect(kitStatements.count == (prepared ? 1 : 2), "\(kitStatements)")
        }
    }

    /// What the resolver itself returns for `kit` and `specs`: finished JSON when only scalar
    /// fields are selected and serializing is on, a list of objects otherwise.
    @Test func theResolverWritesJSONOnlyWhenItCan() throws {
        let path = try Fixture.make(extraSQL: Self.extraSQL + Self.overflowSQL)
        let db = try Database(path: path, readOnly: true)
        let layout = try CatalogLayout(db: db, path: path)
        func fields(_ query: String, serialize: Bool) throws -> [ResolvedValue] {
            let service = QueryService()
            guard case .ready(let op) = service.prepare(GraphQLRequest(query: query)) else {
                Issue.record("does not prepare: \(query)"); return []
            }
            let resolver = CatalogResolver(db: db, layout: layout, hierarchy: { Hierarchy(rows: []) },
                                           schema: CatalogSchema.shared, serializeLeafLists: serialize)
            let planner = Planner(schema: CatalogSchema.shared, document: op.document, variables: op.variables)
            let product = planner.plan(typeName: "Query", selectionSets: [op.operation.selectionSet]).fields[0]
            let rows = try resolver.resolve(type: "Query", field: product, objects: [.root])
            guard case .object(let p) = rows[0] else { Issue.record("no product"); return [] }
            return try product.child.fields.map { try resolver.resolve(type: "Product", field: $0, objects: [p])[0] }
        }
        func isJSON(_ v: ResolvedValue) -> Bool { if case .jsonList = v { return true } else { return false } }
        let written = try fields("{ product(id: 1) { kit { id name quantity __typename } specs { key } } }", serialize: true)
        #expect(written.count == 2 && written.allSatisfy(isJSON))
        if case .jsonList(let text, let items) = written[0] {
            #expect(String(decoding: text.list(items), as: UTF8.self)
                    == #"[{"id":"1","name":"Battery plate, V-mount","quantity":2,"__typename":"KitItem"},{"id":"2","name":"Top handle","quantity":0,"__typename":"KitItem"}]"#)
        }
        #expect(try !fields("{ product(id: 1) { kit { id } specs { key } } }", serialize: false).contains(where: isJSON))
        // `images`, and `manufacturer` with only name and logo, are written too.
        func isValue(_ v: ResolvedValue) -> Bool { if case .jsonValue = v { return true } else { return false } }
        let more = try fields("{ product(id: 1) { images manufacturer { logo name } } }", serialize: true)
        #expect(more.count == 2 && isJSON(more[0]) && isValue(more[1]))
        if case .jsonValue(let text, let bytes) = more[1] {
            #expect(Array(UnsafeRawBufferPointer(start: text.base + bytes.lowerBound, count: bytes.count))
                    == Array(#"{"logo":"arri-old.png","name":"ARRI"}"#.utf8))
        }
        #expect(try !fields("{ product(id: 1) { manufacturer { name productCount } } }", serialize: true).contains(where: isValue))
        // A quantity beyond Int: the general path, which reports the error.
        #expect(try !fields("{ product(id: 7) { kit { quantity } } }", serialize: true).contains(where: isJSON))
    }

    /// Whole products are written by the resolver when every field they select can be
    /// (CatalogResolver.nodesJSON), with the statements of the general path, and not otherwise.
    @Test func nodesAreWrittenByTheResolverOnlyWhenEveryFieldCanBe() throws {
        let plain = try Fixture.make(extraSQL: Self.extraSQL)
        let overflowing = try Fixture.make(extraSQL: Self.extraSQL + Self.overflowSQL)
        func nodes(_ query: String, serialize: Bool = true, path: String = plain) throws -> ResolvedValue? {
            let db = try Database(path: path, readOnly: true)
            let layout = try CatalogLayout(db: db, path: path)
            guard case .ready(let op) = QueryService().prepare(GraphQLRequest(query: query)) else {
                Issue.record("does not prepare: \(query)"); return nil
            }
            let resolver = CatalogResolver(db: db, layout: layout, hierarchy: { Hierarchy(rows: []) },
                                           schema: CatalogSchema.shared, serializeLeafLists: serialize)
            let planner = Planner(schema: CatalogSchema.shared, document: op.document, variables: op.variables)
            let products = planner.plan(typeName: "Query", selectionSets: [op.operation.selectionSet]).fields[0]
            guard case .object(let connection) = try resolver.resolve(type: "Query", field: products, objects: [.root])[0],
                  let field = products.child.fields.first(where: { $0.name == "nodes" }) else { return nil }
            return try resolver.resolve(type: "ProductConnection", field: field, objects: [connection]).first
        }
        func isJSON(_ v: ResolvedValue?) -> Bool { if case .jsonList = v { return true } else { return false } }
        let all = "{ products { nodes { __typename id sku name displayOrder thumbnail panoramaUrl description images "
            + "manufacturer { name logo } specs { key label value } kit { id name quantity } } } }"
        let written = try nodes(all)
        #expect(isJSON(written))
        if case .jsonList(let text, let items) = written {
            let answer = try TestEngine(path: plain).run(all)
            #expect(answer == #"{"data":{"products":{"nodes":"# + String(decoding: text.list(items), as: UTF8.self) + "}}}")
        }
        #expect(try !isJSON(nodes(all, serialize: false)))
        for other in ["category { id }", "videos { url }", "manufacturer { name products { totalCount } }",
                      "kit { id name quantity productId: id __typename }  specs { key } manufacturer { logo name } id"] {
            let isWritten = try isJSON(nodes("{ products { nodes { id \(other) } } }"))
            #expect(isWritten == other.hasPrefix("kit"), "\(other)")
        }
        // A display order or a kit quantity beyond Int: the general path, which reports it.
        #expect(try isJSON(nodes("{ products { nodes { name images } } }", path: overflowing)))
        #expect(try !isJSON(nodes("{ products { nodes { name displayOrder } } }", path: overflowing)))
        #expect(try !isJSON(nodes("{ products { nodes { name kit { quantity } } } }", path: overflowing)))

        // The same statements either way, however many connections share the level (on a
        // prepared catalog: cg_assets_kit gives the kit rows in order, CatalogResolver.kitSQL).
        try CatalogPreparation.prepare(try Database(path: plain, readOnly: false))
        let several = "{ categories { products(first: 3, includeDescendants: true) { nodes { id specs { key } kit { name } manufacturer { name logo } images } } } }"
        var statements: [[String]] = []
        for serialize in [true, false] {
            let engine = try Self.engine(plain, serialize: serialize)
            var sql: [String] = []
            engine.session.traceSQL { sql.append($0) }
            _ = engine.run(several)
            statements.append(sql)
        }
        #expect(statements[0] == statements[1])
        // One statement each for all the connections: the pages, the templates, the kits, the logos.
        // (Schema lookups, such as whether change capture is intact, are not data statements.)
        let batched = statements[0].filter { $0.contains("json_each") && !$0.contains("sqlite_master") }
        #expect(batched.count == 4, "\(batched)")
        #expect(batched.filter { $0.contains(#""Product_Assets""#) }.count == 1)
    }

    /// What nodesJSON makes of a `nodes` plan is kept with the plan for the next execution
    /// (`PlannedField.resolverMemo`), for the layout it was made for. Dropping display_Thumbnail
    /// makes a new layout in which panorama and description take the places before theirs
    /// (`CatalogLayout.productColumns`): the same prepared page then answers as a new session
    /// does (thumbnail null), not from the old columns' places.
    @Test func nodesPlanIsKeptForItsLayoutOnly() throws {
        let path = try Fixture.make(extraSQL: Self.extraSQL)
        let engine = try Self.engine(path, serialize: true)
        engine.session.answerCacheLimit = 0  // executed each time, not answered from the cache
        let page = "{ products(first: 50) { nodes { id sku name thumbnail panoramaUrl description displayOrder images manufacturer { name logo } specs { key label value } kit { id name quantity } } } }"
        let first = engine.run(page)
        #expect(first.contains(#""thumbnail":"mini.jpg""#), "\(first)")
        #expect(engine.run(page) == first)
        try Database(path: path, readOnly: false).execute("ALTER TABLE Product_Catalog DROP COLUMN display_Thumbnail")
        let after = engine.run(page)
        #expect(after == (try Self.engine(path, serialize: true)).run(page))
        #expect(after == (try Self.engine(path, serialize: false)).run(page))
        #expect(after == first.replacingOccurrences(of: #""thumbnail":"mini.jpg""#, with: #""thumbnail":null"#))
        #expect(engine.run(page) == after)
    }
}
