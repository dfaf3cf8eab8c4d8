import Testing
import Foundation
import Synchronization
@testable import Schema

/// Validation and the limit checks recurse once per nesting level (the parser caps nesting at
/// 200) and never per fragment: chains of fragments are walked with explicit stacks. At the
/// nesting cap with overlapping fields compared at every level, a release build fits in a
/// 512 KiB thread stack (measured); this debug-build test allows 2 MiB.
@Suite struct ValidationStackTests {
    /// Runs `body` on a thread with the given stack size and waits for it.
    func onThread(stack: Int, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let t = Thread { body(); done.signal() }
        t.stackSize = stack
        t.start()
        done.wait()
    }

    @Test(arguments: ["query", "subscription"]) func longFragmentChainsUseNoStack(_ kind: String) {
        let n = 6000
        var text = "\(kind) { ...F0 }\n"
        let type = kind == "query" ? "Query" : "Subscription"
        text += (0..<n).map { "fragment F\($0) on \(type) { ...F\($0 + 1) }\n" }.joined()
        text += "fragment F\(n) on \(type) { catalogVersion { version } }\n"
        guard let doc = try? Parser.parse(Source(text)) else { Issue.record("parse"); return }
        let result = Mutex<[Int]>([])
        onThread(stack: 512 * 1024) {
            let errors = validate(schema: CatalogSchema.shared, document: doc).count
            let depth = queryDepth(document: doc, operation: doc.operations[0])
            let nodes = estimateNodes(schema: CatalogSchema.shared, document: doc, operation: doc.operations[0], variables: [:])
            result.withLock { $0 = [errors, depth, nodes] }
        }
        #expect(result.withLock { $0 } == [0, 2, 0])
    }

    @Test func deepNestingFitsASmallThreadStack() {
        let levels = 190
        let inner = String(repeating: "parent { ", count: levels) + "id" + String(repeating: " }", count: levels)
        let query = "{ a: category(id: 1) { \(inner) } a: category(id: 1) { \(inner) } }"
        guard let doc = try? Parser.parse(Source(query)) else { Issue.record("parse"); return }
        let count = Mutex(-1)
        onThread(stack: 2 * 1024 * 1024) {
            let errors = validate(schema: CatalogSchema.shared, document: doc).count
            _ = checkDepth(document: doc, operation: doc.operations[0], maxDepth: 15)
            _ = estimateNodes(schema: CatalogSchema.shared, document: doc, operation: doc.operations[0], variables: [:])
            count.withLock { $0 = errors }
        }
        #expect(count.withLock { $0 } == 0)
    }
}
