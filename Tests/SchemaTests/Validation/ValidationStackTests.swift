import Testing
import Foundation
@testable import Schema

/// Validation and the limit checks recurse once per nesting level; the parser caps nesting at
/// 200. At the cap with overlapping fields compared at every level, a release build fits in a
/// 512 KiB thread stack (measured); this debug-build test allows 2 MiB.
@Suite struct ValidationStackTests {
    @Test func deepNestingFitsASmallThreadStack() {
        let levels = 190
        let inner = String(repeating: "parent { ", count: levels) + "id" + String(repeating: " }", count: levels)
        let query = "{ a: category(id: 1) { \(inner) } a: category(id: 1) { \(inner) } }"
        guard let doc = try? Parser.parse(Source(query)) else { Issue.record("parse"); return }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var count = -1
        let t = Thread {
            count = validate(schema: CatalogSchema.shared, document: doc).count
            _ = checkDepth(document: doc, operation: doc.operations[0], maxDepth: 15)
            _ = estimateNodes(schema: CatalogSchema.shared, document: doc, operation: doc.operations[0], variables: [:])
            done.signal()
        }
        t.stackSize = 2 * 1024 * 1024
        t.start()
        done.wait()
        #expect(count == 0)
    }
}
