import Foundation
import Testing
@testable import Resolvers
import Schema

/// Query.catalogChanges and Subscription.catalogChanges through the executor (SYNC.md).
@Suite struct CatalogChangesTests {
    static let selection = "{ version products { id name } removedProductIds categories { id title } removedCategoryIds }"

    @Test func pullSyncListsChangesSinceAVersion() throws {
        let path = try Fixture.make()
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        let engine = try TestEngine(path: path)
        #expect(engine.run("{ catalogChanges(sinceVersion: 6) \(Self.selection) }")
            == #"{"data":{"catalogChanges":{"version":6,"products":[],"removedProductIds":[],"categories":[],"removedCategoryIds":[]}}}"#)
        try writer.execute("""
            UPDATE Product_Catalog SET Product = 'Cooke S4/i 40mm' WHERE keyid = 3;
            DELETE FROM Product_Catalog WHERE keyid = 7;
            UPDATE hierarchy SET menu_title = 'Prime lenses' WHERE id = 20;
            INSERT INTO version VALUES (7, '', '');
            """)
        #expect(engine.run("{ catalogChanges(sinceVersion: 6) \(Self.selection) }")
            == #"{"data":{"catalogChanges":{"version":7,"products":[{"id":"3","name":"Cooke S4/i 40mm"}],"removedProductIds":["7"],"categories":[{"id":"20","title":"Prime lenses"}],"removedCategoryIds":[]}}}"#)
        #expect(engine.run("{ catalogChanges(sinceVersion: 7) { version products { id } } }")
            == #"{"data":{"catalogChanges":{"version":7,"products":[]}}}"#)
    }

    @Test func expiredAndAheadVersionsAreErrors() throws {
        let path = try Fixture.make()
        try CatalogPreparation.prepare(try Database(path: path, readOnly: false))
        let engine = try TestEngine(path: path)
        let ahead = engine.run("{ catalogChanges(sinceVersion: 9) { version } }")
        #expect(ahead.contains(#""extensions":{"code":"VERSION_AHEAD"}"#))
        #expect(ahead.contains(#""path":["catalogChanges"]"#))
        #expect(ahead.hasSuffix(#""data":null}"#))
        #expect(engine.run("{ catalogChanges(sinceVersion: -1) { version } }").contains(#""code":"CHANGES_EXPIRED""#))
        #expect(engine.run("{ catalogChanges(sinceVersion: 2) { version } }").contains(#""code":"CHANGES_EXPIRED""#))
    }

    @Test func subscriptionEventsAnswerFromTheSubscribersLastVersion() throws {
        let path = try Fixture.make()
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        let engine = try TestEngine(path: path)
        guard case .ready(let op) = engine.service.prepare(GraphQLRequest(
            query: "subscription S { catalogChanges { version products { id } removedProductIds } }")) else {
            Issue.record("no prepare"); return
        }
        try writer.execute("UPDATE Product_Catalog SET Product = 'x' WHERE keyid = 1; INSERT INTO version VALUES (7, '', '')")
        try writer.execute("DELETE FROM Product_Catalog WHERE keyid = 2; INSERT INTO version VALUES (8, '', '')")
        #expect(String(decoding: engine.session.execute(op, subscriptionSince: 7).json, as: UTF8.self)
            == #"{"data":{"catalogChanges":{"version":8,"products":[],"removedProductIds":["2"]}}}"#)
        #expect(String(decoding: engine.session.execute(op, subscriptionSince: 6).json, as: UTF8.self)
            == #"{"data":{"catalogChanges":{"version":8,"products":[{"id":"1"}],"removedProductIds":["2"]}}}"#)
    }

    /// A change set is whole or not at all: never cut, but past --max-response-bytes it is one
    /// RESPONSE_TOO_LARGE error that says to refetch (the feed then completes), where it used to
    /// take whatever memory it needed (a 534 MB message for a one-row kit edit in an audit).
    @Test func aChangeSetPastTheByteLimitIsRefusedWhole() throws {
        let path = try Fixture.make()
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        var options = EngineOptions()
        options.maxResponseBytes = 4_096
        let engine = try TestEngine(path: path, options: options)
        guard case .ready(let op) = engine.service.prepare(GraphQLRequest(
            query: "subscription S { catalogChanges { version products { id name description } } }")) else {
            Issue.record("no prepare"); return
        }
        try writer.execute("""
            UPDATE Product_Catalog SET description = printf('%.3000c', 'd') WHERE keyid IN (1, 2);
            INSERT INTO version VALUES (7, '', '');
            """)
        let text = String(decoding: engine.session.execute(op, subscriptionSince: 6).json, as: UTF8.self)
        #expect(text.contains(#""code":"RESPONSE_TOO_LARGE""#) && text.contains("The change set since version 6 would take more than 4096 bytes"), "\(text.prefix(300))")
        #expect(!text.contains("ddd"))
        // Under the limit the same set is whole.
        options.maxResponseBytes = 16_384
        let whole = String(decoding: try TestEngine(path: path, options: options).session.execute(op, subscriptionSince: 6).json, as: UTF8.self)
        #expect(whole.hasPrefix(#"{"data":{"catalogChanges":{"version":7,"products":[{"id":"1""#) && whole.contains(String(repeating: "d", count: 3000)), "\(whole.prefix(200))")
    }

    @Test func readOnlyCatalogsUseTheVersionRowRule() throws {
        let path = try Fixture.make(extraSQL: "INSERT INTO version VALUES (7, '6', '5')")
        let engine = try TestEngine(path: path)
        // keyid >= 6, plus the owner of asset 5 (kitID k1479 → product 3).
        #expect(engine.run("{ catalogChanges(sinceVersion: 6) { version products { id } removedProductIds } }")
            == #"{"data":{"catalogChanges":{"version":7,"products":[{"id":"3"},{"id":"6"},{"id":"7"}],"removedProductIds":[]}}}"#)
    }
}
