import Foundation
import Testing
@testable import Resolvers
import Schema

/// Execution over the hand-made fixture: every field and argument of the contract, with
/// expected answers worked out from SEMANTICS.md.
@Suite struct ExecutionTests {
    let engine: TestEngine

    init() throws {
        engine = try TestEngine(path: try Fixture.make())
    }

    @Test func catalogVersionUsesGreatestRowAndNullsEmptyText() {
        #expect(engine.run("{ catalogVersion { version catalogRow assetRow } }")
            == ##"{"data":{"catalogVersion":{"version":6,"catalogRow":null,"assetRow":null}}}"##)
    }

    /// A product row with columns that are not UTF-8 between ASCII ones: each column reads as
    /// `String(decoding:as:)` makes of its bytes (U+FFFD per bad sequence), then trimmed, and
    /// the columns after a repaired one keep their own text.
    @Test func productColumnsThatAreNotUTF8ReadAsTheirRepair() throws {
        let engine = try TestEngine(path: try Fixture.make(extraSQL: """
            UPDATE Product_Catalog SET Product = CAST(X'4C656E7320C3A9FF2063617020' AS TEXT),
              description = ' ' || CAST(X'C3897465C328' AS TEXT) || ' x ', display_Thumbnail = CAST(X'E282' AS TEXT),
              display_Image01 = 'ok.jpg', info_spec_a = CAST(X'FF3230' AS TEXT) WHERE keyid = 3;
            """))
        #expect(engine.run("{ product(id: 3) { sku name description thumbnail images specs { value } displayOrder } }")
            == ##"{"data":{"product":{"sku":"k1479","name":"Lens é\##u{FFFD} cap","description":"Éte\##u{FFFD}( x","thumbnail":"\##u{FFFD}","images":["ok.jpg"],"specs":[{"value":"\##u{FFFD}20"},{"value":"T2"}],"displayOrder":null}}}"##)
    }

    @Test func rootCategoriesOrderedByID() {
        #expect(engine.run("{ categories { id title icon level } }")
            == ##"{"data":{"categories":[{"id":"1","title":"Cameras","icon":null,"level":1},{"id":"2","title":"Lenses","icon":"lens.png","level":1}]}}"##)
    }

    @Test func categoryTreeFields() {
        #expect(engine.run(##"{ category(id: "10") { title parent { id } children { id } path { id } } }"##)
            == ##"{"data":{"category":{"title":"Digital Cinema","parent":{"id":"1"},"children":[{"id":"12"}],"path":[{"id":"1"},{"id":"10"}]}}}"##)
    }

    @Test func orphansCyclesAndSelfParents() {
        #expect(engine.run(##"{ category(id: 51) { path { id } parent { id parent { id } } } }"##)
            == ##"{"data":{"category":{"path":[{"id":"50"},{"id":"51"}],"parent":{"id":"50","parent":null}}}}"##)
        #expect(engine.run(##"{ category(id: "60") { path { id } } }"##)
            == ##"{"data":{"category":{"path":[{"id":"61"},{"id":"60"}]}}}"##)
        #expect(engine.run(##"{ category(id: "70") { parent { id } children { id } path { id } } }"##)
            == ##"{"data":{"category":{"parent":{"id":"70"},"children":[{"id":"70"}],"path":[{"id":"70"}]}}}"##)
        #expect(engine.run(##"{ category(id: "999") { id } a: category(id: "abc") { id } b: category(id: "020") { id } }"##)
            == ##"{"data":{"category":null,"a":null,"b":{"id":"20"}}}"##)
    }

    @Test func categoryProductsAndCounts() {
        #expect(engine.run(#"""
            { category(id: 1) { productCount all: productCount(includeDescendants: true)
                products(includeDescendants: true) { totalCount nodes { id } } } }
            """#)
            == ##"{"data":{"category":{"productCount":0,"all":3,"products":{"totalCount":3,"nodes":[{"id":"4"},{"id":"2"},{"id":"1"}]}}}}"##)
    }

    @Test func productScalarsImagesVideosSpecsKit() {
        #expect(engine.run(#"""
            { product(id: "1") { id sku name manufacturer { name logo productCount } category { id } displayOrder
              thumbnail images videos { kind url } panoramaUrl description specs { key label value }
              kit { id name quantity } } }
            """#)
            == ##"{"data":{"product":{"id":"1","sku":"K1478","name":"ALEXA Mini LF","manufacturer":{"name":"ARRI","logo":"arri-old.png","productCount":2},"category":{"id":"12"},"displayOrder":2,"thumbnail":"mini.jpg","images":["a.jpg","b.jpg","c, d.jpg"],"videos":[{"kind":"DYNAMIC_RANGE","url":"dr.mp4"},{"kind":"PROMO","url":"promo.mp4"}],"panoramaUrl":null,"description":"Large format camera","specs":[{"key":"a","label":"Sensor","value":"LF 36x25"},{"key":"b","label":"Weight","value":"2.6 kg"},{"key":"e","label":"06)","value":"y"}],"kit":[{"id":"1","name":"Battery plate, V-mount","quantity":2},{"id":"2","name":"Top handle","quantity":0}]}}}"##)
    }

    @Test func productQuirks() {
        #expect(engine.run(#"""
            { a: product(id: 2) { sku description panoramaUrl specs { key value } kit { name quantity } }
              b: product(id: "4") { sku manufacturer { name } specs { key } }
              c: product(id: "05") { category { id } specs { key } kit { id } }
              d: product(id: "6") { specs { key } }
              e: product(id: "7") { specs { label value } displayOrder }
              f: product(id: "3") { displayOrder }
              g: product(id: "K1478") { id } }
            """#)
            == ##"{"data":{"a":{"sku":"1480","description":null,"panoramaUrl":"pano.html","specs":[{"key":"a","value":"S35"}],"kit":[{"name":"Viewfinder","quantity":0}]},"b":{"sku":"1481","manufacturer":null,"specs":[]},"c":{"category":null,"specs":[],"kit":[{"id":"1"},{"id":"2"}]},"d":{"specs":[]},"e":{"specs":[{"label":"Focal length","value":"a"},{"label":"T-stop","value":"b"}],"displayOrder":0},"f":{"displayOrder":null},"g":null}}"##)
    }

    @Test func orderings() {
        func ids(_ order: String) -> String {
            engine.run("{ products(orderBy: \(order)) { nodes { id } } }")
        }
        #expect(ids("CATALOG") == ##"{"data":{"products":{"nodes":[{"id":"4"},{"id":"2"},{"id":"1"},{"id":"5"},{"id":"6"},{"id":"3"},{"id":"7"}]}}}"##)
        #expect(ids("NAME") == ##"{"data":{"products":{"nodes":[{"id":"6"},{"id":"2"},{"id":"1"},{"id":"3"},{"id":"4"},{"id":"7"},{"id":"5"}]}}}"##)
        #expect(ids("NEWEST") == ##"{"data":{"products":{"nodes":[{"id":"7"},{"id":"6"},{"id":"5"},{"id":"4"},{"id":"3"},{"id":"2"},{"id":"1"}]}}}"##)
        #expect(engine.run("{ products(orderBy: null) { nodes { id } } }") == ids("CATALOG"))
    }

    /// A product_ID stored as a REAL or a BLOB is served as SQLite's text of it, and the sku
    /// filter finds it by that text, with the gateway's index and without it.
    @Test(arguments: [false, true]) func skuFilterFindsRealAndBlobProductIDsByTheirServedText(prepared: Bool) throws {
        let path = try Fixture.make(extraSQL: """
            UPDATE Product_Catalog SET product_ID = 1.0 / 3 WHERE keyid = 3;
            UPDATE Product_Catalog SET product_ID = X'3231' WHERE keyid = 4;
            UPDATE Product_Catalog SET product_ID = 123456789012345.6 WHERE keyid = 6;
            """)
        if prepared { try CatalogPreparation.prepare(try Database(path: path, readOnly: false)) }
        let engine = try TestEngine(path: path)
        #expect(engine.run(##"{ a: product(id: 3) { sku } b: product(id: 4) { sku } c: product(id: 6) { sku } }"##)
            == ##"{"data":{"a":{"sku":"0.333333333333333"},"b":{"sku":"21"},"c":{"sku":"123456789012346.0"}}}"##)
        for (id, sku) in [("3", "0.333333333333333"), ("4", "21"), ("6", "123456789012346.0")] {
            #expect(engine.run("{ products(filter: {sku: \"\(sku)\"}) { nodes { id } } }")
                == ##"{"data":{"products":{"nodes":[{"id":"\##(id)"}]}}}"##, "sku \(sku)")
        }
        // Exact text: neither another rendering of the number nor the integer it rounds to.
        #expect(engine.run(##"{ a: products(filter: {sku: "0.3333333333333333"}) { totalCount } b: products(filter: {sku: "123456789012346"}) { totalCount } }"##)
            == ##"{"data":{"a":{"totalCount":0},"b":{"totalCount":0}}}"##)
    }

    @Test func filters() {
        #expect(engine.run(##"{ products(filter: {sku: "1480"}) { nodes { id } } x: products(filter: {sku: "01480"}) { totalCount } }"##)
            == ##"{"data":{"products":{"nodes":[{"id":"2"}]},"x":{"totalCount":0}}}"##)
        #expect(engine.run(##"{ products(filter: {sku: "K1478"}) { nodes { id } } }"##)
            == ##"{"data":{"products":{"nodes":[{"id":"1"},{"id":"5"}]}}}"##)
        #expect(engine.run(##"{ products(filter: {letter: "#"}) { nodes { id } } }"##)
            == ##"{"data":{"products":{"nodes":[{"id":"5"},{"id":"6"}]}}}"##)
        #expect(engine.run(##"{ products(filter: {manufacturer: "ARRI"}) { totalCount } x: products(filter: {manufacturer: "ARRI "}) { totalCount } }"##)
            == ##"{"data":{"products":{"totalCount":2},"x":{"totalCount":0}}}"##)
        #expect(engine.run(##"{ products(filter: {categoryId: "2", includeDescendants: true, letter: null}) { nodes { id } } }"##)
            == ##"{"data":{"products":{"nodes":[{"id":"3"},{"id":"7"}]}}}"##)
        #expect(engine.run(##"{ products(filter: {categoryId: "50", includeDescendants: true}) { nodes { id } } }"##)
            == ##"{"data":{"products":{"nodes":[{"id":"6"}]}}}"##)
        #expect(engine.run(##"{ products(filter: {categoryId: "nope"}) { totalCount } }"##)
            == ##"{"data":{"products":{"totalCount":0}}}"##)
    }

    @Test func letterErrors() {
        #expect(engine.run(##"{ products(filter: {letter: "a"}) { totalCount } }"##)
            == ##"{"errors":[{"message":"Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"a\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##)
    }

    @Test func search() {
        func ids(_ text: String) -> String { engine.run("{ search(text: \"\(text)\") { nodes { id } } }") }
        #expect(ids("alexa") == ##"{"data":{"search":{"nodes":[{"id":"2"},{"id":"1"}]}}}"##)
        #expect(ids("100%") == ##"{"data":{"search":{"nodes":[{"id":"3"}]}}}"##)
        #expect(ids("p_ime") == ##"{"data":{"search":{"nodes":[]}}}"##)
        #expect(ids(" cooke\\tLENS ") == ##"{"data":{"search":{"nodes":[{"id":"3"}]}}}"##)
        #expect(ids("arri large") == ##"{"data":{"search":{"nodes":[{"id":"1"}]}}}"##)
        #expect(engine.run(##"{ search(text: "  ") { totalCount } }"##).contains(##""message":"Argument \"text\" must contain at least one word.""##))
    }

    @Test func alphabetAndManufacturers() {
        #expect(engine.run("{ alphabet { letter count } }")
            == ##"{"data":{"alphabet":[{"letter":"A","count":2},{"letter":"C","count":1},{"letter":"R","count":1},{"letter":"Z","count":1},{"letter":"#","count":2}]}}"##)
        #expect(engine.run("{ manufacturers { name logo productCount products(orderBy: NEWEST, first: 1) { nodes { id } } } }")
            == ##"{"data":{"manufacturers":[{"name":"ARRI","logo":"arri-old.png","productCount":2,"products":{"nodes":[{"id":"2"}]}},{"name":"Chapman","logo":null,"productCount":1,"products":{"nodes":[{"id":"5"}]}},{"name":"Cooke","logo":null,"productCount":2,"products":{"nodes":[{"id":"6"}]}},{"name":"ZEISS","logo":null,"productCount":1,"products":{"nodes":[{"id":"7"}]}}]}}"##)
    }

    @Test func paginationVisitsEveryRowOnce() throws {
        var seen: [String] = []
        var after: JSONValue = .null
        var pages = 0
        while pages < 10 {
            let r = engine.json("query($a: String) { products(first: 3, after: $a) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }",
                                variables: .object([("a", after)]))
            let conn = try #require(((r["data"] as? [String: Any])?["products"]) as? [String: Any])
            let edges = try #require(conn["edges"] as? [[String: Any]])
            let info = try #require(conn["pageInfo"] as? [String: Any])
            seen += edges.compactMap { ($0["node"] as? [String: Any])?["id"] as? String }
            #expect(info["hasPreviousPage"] as? Bool == (pages > 0))
            #expect(info["startCursor"] as? String == edges.first?["cursor"] as? String)
            pages += 1
            guard info["hasNextPage"] as? Bool == true, let end = info["endCursor"] as? String else { break }
            after = .string(end)
        }
        #expect(seen == ["4", "2", "1", "5", "6", "3", "7"])
        #expect(pages == 3)
    }

    @Test func connectionArgumentErrors() {
        #expect(engine.run("{ products(first: 101) { totalCount } }")
            == ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got 101.","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##)
        #expect(engine.run(##"{ products(after: "bogus") { totalCount } }"##).contains(##""message":"Argument \"after\" is not a valid cursor: \"bogus\".""##))
        #expect(engine.run("{ products(first: 0) { nodes { id } pageInfo { hasNextPage startCursor } } }")
            == ##"{"data":{"products":{"nodes":[],"pageInfo":{"hasNextPage":true,"startCursor":null}}}}"##)
    }

    @Test func fieldErrorsNullTheNearestNullableParent() {
        // Category.products is non-null: the error nulls the category, and data stays.
        let r = engine.run(##"{ category(id: 1) { id products(first: -1) { totalCount } } categories { id } }"##)
        #expect(r.hasPrefix(##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got -1.","locations":[{"line":1,"column":24}],"path":["category","products"]"##))
        #expect(r.hasSuffix(##""data":{"category":null,"categories":[{"id":"1"},{"id":"2"}]}}"##))
        // Each category of a list gets its own error path; the non-null list items null the list.
        let r2 = engine.run(##"{ categories { products(first: 500) { totalCount } } }"##)
        #expect(r2.contains(##""path":["categories",0,"products"]"##))
        #expect(r2.contains(##""path":["categories",1,"products"]"##))
        #expect(r2.hasSuffix(##""data":null}"##))
    }

    @Test func typenameAliasesFragmentsAndDirectives() {
        let q = #"""
            query Q($skip: Boolean = true, $id: ID!) {
              p: product(id: $id) { __typename ...F ... on Product { sku @skip(if: $skip) } }
            }
            fragment F on Product { name kit @include(if: false) { id } }
            """#
        #expect(engine.run(q, variables: .object([("id", .int(3))]))
            == ##"{"data":{"p":{"__typename":"Product","name":"Cooke S4/i 32mm"}}}"##)
        #expect(engine.run(q, variables: .object([("id", .string("3")), ("skip", .bool(false))]))
            == ##"{"data":{"p":{"__typename":"Product","name":"Cooke S4/i 32mm","sku":"k1479"}}}"##)
    }

    @Test func subscriptionEventExecutesOverCurrentSnapshot() throws {
        let path = try Fixture.make()
        let e = try TestEngine(path: path)
        guard case .ready(let op) = e.service.prepare(GraphQLRequest(query: "subscription { catalogVersion { version } }")) else {
            Issue.record("subscription did not prepare"); return
        }
        #expect(op.kind == .subscription)
        #expect(String(decoding: e.session.execute(op).json, as: UTF8.self) == ##"{"data":{"catalogVersion":{"version":6}}}"##)
        let writer = try Database(path: path, readOnly: false)
        try writer.execute("INSERT INTO version VALUES (7, 100, 200)")
        #expect(String(decoding: e.session.execute(op).json, as: UTF8.self) == ##"{"data":{"catalogVersion":{"version":7}}}"##)
        #expect(try e.session.catalogVersion() == CatalogVersionValue(version: 7, catalogRow: 100, assetRow: 200))
    }

    @Test func hierarchyReloadsAfterCommit() throws {
        let path = try Fixture.make()
        let e = try TestEngine(path: path)
        #expect(e.run("{ categories { id } }") == ##"{"data":{"categories":[{"id":"1"},{"id":"2"}]}}"##)
        let writer = try Database(path: path, readOnly: false)
        try writer.execute("INSERT INTO hierarchy VALUES (3,'Grip','',1,0)")
        #expect(e.run("{ categories { id } }") == ##"{"data":{"categories":[{"id":"1"},{"id":"2"},{"id":"3"}]}}"##)
    }

    @Test func integerFieldsUseCastExceptForNullAndEmpty() throws {
        let path = try Fixture.make(extraSQL: """
            UPDATE Product_Catalog SET displayorder = 'abc' WHERE keyid = 4;
            UPDATE Product_Catalog SET displayorder = '3.7' WHERE keyid = 5;
            UPDATE Product_Catalog SET displayorder = ' 12 ' WHERE keyid = 6;
            UPDATE hierarchy SET level = '2x' WHERE id = 11;
            """)
        let e = try TestEngine(path: path)
        #expect(e.run(#"{ a: product(id: 4) { displayOrder } b: product(id: 5) { displayOrder } c: product(id: 6) { displayOrder } d: product(id: 3) { displayOrder } h: category(id: 11) { level } i: category(id: 20) { level } }"#)
            == #"{"data":{"a":{"displayOrder":0},"b":{"displayOrder":3},"c":{"displayOrder":12},"d":{"displayOrder":null},"h":{"level":2},"i":{"level":null}}}"#)
    }

    @Test func extraImageColumnsAreDiscovered() throws {
        let path = try Fixture.make(extraSQL: """
            ALTER TABLE Product_Catalog ADD COLUMN display_Image06 text;
            UPDATE Product_Catalog SET display_Image06 = 'six.jpg' WHERE keyid = 2;
            """)
        let e = try TestEngine(path: path)
        #expect(e.run("{ product(id: 2) { images } }") == ##"{"data":{"product":{"images":["six.jpg"]}}}"##)
    }
}

/// Where graphql-js's execution details were not followed before stop 21 (found by comparing
/// with graphql-core): @skip/@include given null, repeated fragment names, merged fields' errors.
@Suite struct ExecutionConformanceTests {
    let engine: TestEngine

    init() throws {
        engine = try TestEngine(path: try Fixture.make())
    }

    static let notNull = #"Argument \"if\" of non-null type \"Boolean!\" must not be null."#

    /// `if` given null through a variable with a default (the default does not apply to an
    /// explicit null): a field error from CollectFields, for the value whose selection holds it.
    @Test func skipAndIncludeGivenNullAreFieldErrors() {
        let null: JSONValue = .object([("t", .null)])
        #expect(engine.run("query Q($t: Boolean = true) { product(id: 1) { id @skip(if: $t) sku } }", variables: null)
            == #"{"errors":[{"message":"\#(Self.notNull)","locations":[{"line":1,"column":61}],"path":["product"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":{"product":null}}"#)
        // At the root: CollectFields of the operation fails, and data is null.
        #expect(engine.run("query Q($t: Boolean = false) { __typename ...F @include(if: $t) } fragment F on Query { __typename }", variables: null)
            == #"{"errors":[{"message":"\#(Self.notNull)","locations":[{"line":1,"column":61}],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"#)
        // A null that no value reaches is no error, and values still decide as before.
        #expect(engine.run("query Q($t: Boolean = true) { product(id: 999) { id @skip(if: $t) } }", variables: null)
            == #"{"data":{"product":null}}"#)
        #expect(engine.run("query Q($t: Boolean = true) { product(id: 1) { id @skip(if: $t) sku } }", variables: .object([("t", .bool(false))]))
            == #"{"data":{"product":{"id":"1","sku":"K1478"}}}"#)
        #expect(engine.run("query Q($t: Boolean = true) { product(id: 1) { id @skip(if: $t) sku } }")
            == #"{"data":{"product":{"sku":"K1478"}}}"#)
    }

    /// The items of a list each fail on their own (their own path), on the general path and on
    /// the resolver's own JSON for products.
    @Test func skipGivenNullInsideAList() {
        let out = engine.run("query Q($t: Boolean = true) { products(first: 2) { nodes { ... on Product @skip(if: $t) { id } } } }",
                             variables: .object([("t", .null)]))
        #expect(out.contains(#""path":["products","nodes",0]"#) && out.hasSuffix(#""data":null}"#), "\(out)")
    }

    /// Fragments sharing a name (an invalid document: UniqueFragmentNames) mean the last of them,
    /// as graphql-js's fragment maps do, in validation as in execution.
    @Test func aRepeatedFragmentNameMeansTheLast() {
        let out = engine.run("query Q { ...F } fragment F on Query { search(text: $a) { totalCount } } fragment F on Query { search(text: $b) { totalCount } }")
        #expect(out.contains(#"Variable \"$b\" is not defined by operation \"Q\"."#), "\(out)")
        #expect(!out.contains(#"Variable \"$a\""#), "\(out)")
    }

    /// A field error on a response key that several AST fields share is located at each of them.
    @Test func mergedFieldsErrorAtEveryLocation() {
        #expect(engine.run("{ a: product(id: 1) { kit { quantity } }\n  a: product(id: 1) { kit { quantity } } p: products(first: 101) { totalCount }\n p: products(first: 101) { totalCount } }")
            .contains(#""locations":[{"line":2,"column":42},{"line":3,"column":2}],"path":["p"]"#))
    }
}
