import Schema

/// One value in the response tree: plain integers only (no reference counting). Scalars are
/// serialised as they complete, objects and lists refer into the executor's flat storage (a
/// level's slots, the list arena), so building the tree allocates per level, not per value.
enum Slot {
    case null
    /// A scalar's JSON text: `count` bytes of the scalar arena from `start`.
    case json(start: Int32, count: Int32)
    /// Object `row` of level `level`.
    case object(level: Int32, row: Int32)
    /// `count` slots of the list arena from `start`.
    case list(start: Int32, count: Int32)
    /// Text a resolver finished in its own buffer, written from there (`Tree.outside`, entry
    /// `index`): `count` bytes in the answer, brackets included.
    case outside(index: Int32, count: Int32)
}

/// Where `Slot.outside` text lies: plain values, its buffer kept alive by `Tree.outsideOwners`.
struct OutsideSpan {
    let base: UnsafeRawPointer
    let count: Int
    /// A list's items: written between brackets.
    let bracketed: Bool
}

/// The list indices between an object and its parent object's field ("a": [[{...}]] gives two).
/// Stored inline for the usual zero or one index; deeper nesting keeps the rest in an array.
struct ListIndices {
    var first: Int32 = -1
    var more: [Int]? = nil

    static let none = ListIndices()

    func appending(_ k: Int) -> ListIndices {
        if first < 0 { return ListIndices(first: Int32(k), more: nil) }
        var m = more ?? []
        m.append(k)
        return ListIndices(first: first, more: m)
    }

    var components: [PathComponent] {
        guard first >= 0 else { return [] }
        return [.index(Int(first))] + (more ?? []).map { .index($0) }
    }
}

/// Every object of one selection plan at one depth of the breadth-first execution: the
/// resolver's objects and, per object, a slot per planned field (row-major) and its place in
/// the tree (for error paths).
private struct Level {
    let plan: SelectionPlan
    let fieldCount: Int
    /// Index of the parent level (-1 for the root) and the parent's field this level fills.
    let parentLevel: Int32
    let parentField: Int32
    var objects: [ObjectValue] = []
    /// A slot per object and planned field, row-major: made when the level runs.
    var slots: [Slot] = []
    /// Per object: its parent object's row in the parent level, and its list indices.
    var parents: [Int32] = []
    var indices: [ListIndices] = []

    init(plan: SelectionPlan, parentLevel: Int32, parentField: Int32) {
        self.plan = plan; self.fieldCount = plan.fields.count
        self.parentLevel = parentLevel; self.parentField = parentField
    }

    mutating func reserve(_ objects: Int) {
        self.objects.reserveCapacity(objects)
        parents.reserveCapacity(objects)
        indices.reserveCapacity(objects)
    }

    /// Adds an object; returns its row.
    mutating func append(_ object: ObjectValue, parent: Int32, indices: ListIndices) -> Int32 {
        let row = Int32(objects.count)
        objects.append(object)
        parents.append(parent)
        self.indices.append(indices)
        return row
    }
}

/// The response being built: levels, the list arena and the errors. A value passed inout, so
/// its mutations need no run-time exclusivity checks.
private struct Tree {
    var levels: [Level] = []
    var lists: [Slot] = []
    /// The JSON text of every non-null scalar, back to back.
    var scalars = ScalarText()
    var errors: [GraphQLError] = []

    mutating func string(_ s: String) -> Slot {
        let start = scalars.count
        scalars.string(s)
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    /// An integer ID: its digits as a JSON string.
    mutating func id(_ i: Int64) -> Slot {
        let start = scalars.count
        scalars.int(i, quoted: true)
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    mutating func rowText(_ row: ProductRow, _ column: Int) -> Slot {
        let start = scalars.count
        row.withTrimmed(column) { scalars.string($0) }
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    mutating func int(_ i: Int) -> Slot {
        let start = scalars.count
        scalars.int(Int64(i), quoted: false)
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    /// Text finished elsewhere, at least this long, is written into the answer from its own
    /// buffer (`Slot.outside`) rather than copied into `scalars` first: a page's products (the
    /// resolver's `nodes`, ~24 KB on the demo page) were copied twice.
    static let outsideMinBytes = 256
    /// `Slot.outside` text, and the buffers it lies in.
    var outside: [OutsideSpan] = []
    var outsideOwners: [TextBuffer] = []

    private mutating func outside(_ text: TextBuffer, _ bytes: Range<Int>, bracketed: Bool) -> Slot {
        outside.append(OutsideSpan(base: UnsafeRawPointer(text.base + bytes.lowerBound), count: bytes.count, bracketed: bracketed))
        if outsideOwners.last !== text { outsideOwners.append(text) }
        return .outside(index: Int32(outside.count - 1), count: Int32(bytes.count + (bracketed ? 2 : 0)))
    }

    /// A list finished elsewhere (ResolvedValue.jsonList): its items' text between brackets.
    mutating func jsonList(_ text: TextBuffer, _ items: Range<Int>) -> Slot {
        if items.count >= Self.outsideMinBytes { return outside(text, items, bracketed: true) }
        let start = scalars.count
        scalars.byte(0x5B)
        scalars.append(text, items)
        scalars.byte(0x5D)
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    /// A value finished elsewhere (ResolvedValue.jsonValue), as it is.
    mutating func jsonValue(_ text: TextBuffer, _ bytes: Range<Int>) -> Slot {
        if bytes.count >= Self.outsideMinBytes { return outside(text, bytes, bracketed: false) }
        let start = scalars.count
        scalars.append(text, bytes)
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }

    mutating func bool(_ b: Bool) -> Slot {
        let start = scalars.count
        scalars.append(b ? "true" : "false")
        return .json(start: Int32(start), count: Int32(scalars.count - start))
    }
}

/// Memory a ScalarText writes into, freed with its last reference. Also what leaf lists are
/// ranges of (ResolvedValue.jsonList).
final class TextBuffer {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    init(capacity: Int) {
        base = .allocate(byteCount: capacity, alignment: 16)
        self.capacity = capacity
    }

    deinit { base.deallocate() }

    /// Bytes `items` between brackets: the list a ResolvedValue.jsonList is (tests).
    func list(_ items: Range<Int>) -> [UInt8] {
        [0x5B] + UnsafeRawBufferPointer(start: base + items.lowerBound, count: items.count) + [0x5D]
    }
}

/// The scalars' JSON text in a buffer that grows by doubling, with its own count: a write is
/// one capacity check and a copy into memory the struct points at (no Array: its uniqueness
/// check on every write cost more than the copy of text this short). Bytes past `count` are
/// never read (nor zeroed). Text that needs escaping goes through JSONWriter. Also the buffer
/// the catalog resolver writes leaf lists into (CatalogResolver.leafList). Passed inout, never
/// copied and then written: copies share the memory.
struct ScalarText {
    /// The owner's memory and size, kept here so that a write reads no class property.
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var buffer: TextBuffer
    private(set) var count = 0

    init(capacity: Int = 16 << 10) {
        buffer = TextBuffer(capacity: Swift.max(capacity, 16))
        base = buffer.base
        self.capacity = buffer.capacity
    }

    @inline(__always) private mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(n) }
    }

    private mutating func grow(_ n: Int) {
        let larger = TextBuffer(capacity: Swift.max(2 * capacity, count + n))
        larger.base.copyMemory(from: base, byteCount: count)
        buffer = larger
        base = larger.base
        capacity = larger.capacity
    }

    /// Calls `body` with what was written.
    func withWritten<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withExtendedLifetime(buffer) { try body(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count)) }
    }

    @inline(__always) mutating func append(_ raw: UnsafeRawBufferPointer) {
        guard let src = raw.baseAddress, raw.count > 0 else { return }
        reserve(raw.count)
        copyBytes(to: base + count, from: src, count: raw.count)
        count += raw.count
    }

    mutating func append(_ s: StaticString) {
        s.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    mutating func append(_ b: [UInt8]) {
        b.withUnsafeBytes { append($0) }
    }

    /// Bytes `items` of a leaf list's text.
    mutating func append(_ text: TextBuffer, _ items: Range<Int>) {
        withExtendedLifetime(text) { append(UnsafeRawBufferPointer(start: text.base + items.lowerBound, count: items.count)) }
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        base.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// A JSON string of a String's UTF-8.
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { string(UnsafeRawBufferPointer($0)) }
    }

    /// A JSON string of `utf8` (bytes that may not be valid UTF-8: JSONWriter's rules).
    mutating func string(_ utf8: UnsafeRawBufferPointer) {
        guard JSONWriter.isPlain(utf8) else {
            var w = JSONWriter(capacity: utf8.count + 16)
            w.string(utf8: utf8)
            w.bytes.withUnsafeBytes { append($0) }
            return
        }
        plainString(utf8)
    }

    /// A JSON string of bytes that need no escaping (`JSONWriter.isPlain` is true for them): the
    /// bytes between quotes.
    @inline(__always) mutating func plainString(_ utf8: UnsafeRawBufferPointer) {
        let n = utf8.count
        reserve(n + 2)
        base.storeBytes(of: 0x22, toByteOffset: count, as: UInt8.self)
        if let src = utf8.baseAddress { copyBytes(to: base + count + 1, from: src, count: n) }
        base.storeBytes(of: 0x22, toByteOffset: count + n + 1, as: UInt8.self)
        count += n + 2
    }

    /// Decimal digits (in quotes for an ID): at most 22 bytes, copied into room made first.
    @inline(__always) mutating func int(_ v: Int64, quoted: Bool) {
        reserve(24)
        let to = base + count
        count += JSONWriter.withDecimal(v, quoted: quoted) { d in
            copyBytes(to: to, from: d.baseAddress!, count: d.count)
            return d.count
        }
    }
}

/// How a field's values complete when they are scalars: decided once per field.
private enum ScalarShape {
    /// Not a named type (list) or wrapped otherwise: the general path.
    case general
    /// A named type, nullable or not.
    case named(nonNull: Bool)

    init(_ type: TypeRef) {
        switch type {
        case .named: self = .named(nonNull: false)
        case .nonNull(.named): self = .named(nonNull: true)
        default: self = .general
        }
    }
}

/// The data source the executor calls: one batch call per (field, level).
protocol BatchResolver: AnyObject {
    /// Returns one value per object, in order. Throwing fails the field for every object.
    func resolve(type: String, field: PlannedField, objects: [ObjectValue]) throws(GraphQLError) -> [ResolvedValue]
    /// About how many bytes of answer the next `resolve` may still add (the executor's
    /// `maxBytes` less its estimate so far): a resolver that writes JSON itself stops past it
    /// and leaves the field to the executor's general path, which reports RESPONSE_TOO_LARGE.
    var byteBudget: Int { get set }
}

/// Executes a selection plan breadth-first: each field of each level is resolved once for all
/// objects of that level, so the number of resolver calls (and SQL statements) depends on the
/// query's shape, never on the number of rows.
final class Executor {
    let planner: Planner
    let resolver: BatchResolver
    private(set) var errors: [GraphQLError] = []
    /// About how many bytes one answer may take: once the levels run so far pass it, no
    /// further level runs and the answer is a RESPONSE_TOO_LARGE error. The node limit counts
    /// only connections' pages; lists of objects outside them (categories, children, path, kit)
    /// are bounded by this.
    var maxBytes = Int.max
    /// The estimate: 16 bytes per value, plus the text of strings and of the JSON the
    /// resolver wrote itself (a page's products).
    private var estimatedBytes = 0
    /// --max-nodes at run time. The limit checked before execution multiplies `first` along
    /// nested connections and counts a list (`manufacturers`, `categories`, `children`, `kit`,
    /// …) as one object; here each connection counts `first` for every object it actually runs
    /// on, before its page is read, so `manufacturers { products(first: 100) { nodes … } }`
    /// over 100,000 manufacturers is refused at once rather than read until the time limit.
    /// On connections alone the count never exceeds the estimate made before execution.
    var maxNodes = Int.max
    private var countedNodes = 0

    init(planner: Planner, resolver: BatchResolver) {
        self.planner = planner; self.resolver = resolver
    }

    /// A field error of completion, with its code: UNREPRESENTABLE_VALUE for a stored value the
    /// field's type cannot represent (a kit quantity or version past 32 bits), INTERNAL_SERVER_ERROR
    /// for a resolver's value of the wrong shape (a fault of ours).
    static func fieldError(_ message: String, code: String) -> GraphQLError {
        var e = GraphQLError(message)
        e.extensions["code"] = .string(code)
        return e
    }

    /// Runs the operation's root selection set and returns the serialised response.
    func run(operation: OperationDefinition, rootType: String) -> ExecutionResult {
        run(rootPlan: planner.plan(typeName: rootType, selectionSets: [operation.selectionSet]))
    }

    /// Runs a root selection plan (built by this executor's planner) and returns the
    /// serialised response.
    func run(rootPlan: SelectionPlan) -> ExecutionResult {
        if let e = rootPlan.error {
            // graphql-js: CollectFields of the operation throws, and execute answers data null.
            errors = [e]
            return .failedExecution(errors)
        }
        var tree = Tree()
        var root = Level(plan: rootPlan, parentLevel: -1, parentField: -1)
        _ = root.append(.root, parent: -1, indices: .none)
        tree.levels.append(root)
        var head = 0
        while head < tree.levels.count {
            // Checked before the level runs (its slots alone may be past the limit: thousands of
            // aliases over thousands of objects) and after each of its fields: checked only after
            // the whole level, a 3 KB document cost seconds and gigabytes.
            estimatedBytes += 16 * tree.levels[head].objects.count * max(1, tree.levels[head].plan.fields.count)
            if let e = estimatedBytes > maxBytes ? tooLarge() : runLevel(Int32(head), &tree) {
                errors = [e]
                return .failedExecution(errors)
            }
            tree.levels[head].objects = []
            head += 1
        }
        errors = tree.errors
        var prefix = JSONWriter(capacity: 64)
        prefix.byte(0x7B)
        var dataNull = false
        if !tree.errors.isEmpty {
            dataNull = prune(level: 0, row: 0, &tree)
            prefix.raw("\"errors\":"); prefix.errors(tree.errors); prefix.byte(0x2C)
        }
        prefix.raw("\"data\":")
        if dataNull {
            prefix.null(); prefix.byte(0x7D)
            return ExecutionResult(json: prefix.bytes, errors: tree.errors, hasData: true)
        }
        // Every level's slots and field keys laid out flat (plain values, no references), then
        // one allocation of a bound on the answer's size, written through a pointer.
        var slots: [Slot] = []
        var levelBase: [Int] = []
        var levelKeys: [Int] = []
        var keyRanges: [Int] = []
        var keys: [UInt8] = []
        // At least the answer's size (exact unless nulls were propagated): every level's objects
        // and every slot counted once, in one pass over the flat buffers (no walk of the tree).
        var bound = prefix.bytes.count + 1
        levelBase.reserveCapacity(tree.levels.count)
        levelKeys.reserveCapacity(tree.levels.count)
        for level in tree.levels {
            levelBase.append(slots.count)
            slots.append(contentsOf: level.slots)
            levelKeys.append(keyRanges.count)
            let keyStart = keys.count
            for (i, field) in level.plan.fields.enumerated() {
                keyRanges.append(keys.count)
                keys.append(i == 0 ? 0x7B : 0x2C)
                keys.append(contentsOf: field.keyJSON)
            }
            bound += level.parents.count * (keys.count - keyStart + (level.fieldCount == 0 ? 2 : 1))
            bound += FlatTree.sizeBound(level.slots)
        }
        keyRanges.append(keys.count)
        bound += FlatTree.sizeBound(tree.lists)
        let json = slots.withUnsafeBufferPointer { slots in
            levelBase.withUnsafeBufferPointer { levelBase in
                levelKeys.withUnsafeBufferPointer { levelKeys in
                    keyRanges.withUnsafeBufferPointer { keyRanges in
                        keys.withUnsafeBufferPointer { keys in
                            tree.lists.withUnsafeBufferPointer { lists in
                                tree.outside.withUnsafeBufferPointer { outside in
                                    tree.scalars.withWritten { scalars in
                                        let flat = FlatTree(slots: slots, levelBase: levelBase, levelKeys: levelKeys,
                                                            keyRanges: keyRanges, keys: keys, lists: lists, scalars: scalars,
                                                            outside: outside)
                                        return withExtendedLifetime(tree.outsideOwners) {
                                            [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
                                                var out = RawOutput(buffer)
                                                prefix.bytes.withUnsafeBufferPointer { out.append($0) }
                                                flat.write(level: 0, row: 0, &out)
                                                out.byte(0x7D)
                                                count = out.count
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return ExecutionResult(json: json, errors: tree.errors, hasData: true)
    }

    /// RESPONSE_TOO_LARGE's message when the default does not fit (a change set).
    var tooLargeMessage: String?
    /// The code of the error a resolver throws when the field's values alone would pass
    /// `byteBudget`: the whole answer is then RESPONSE_TOO_LARGE, not a field error per object.
    static let tooLargeCode = "RESPONSE_TOO_LARGE"

    private func tooLarge() -> GraphQLError {
        var e = GraphQLError(tooLargeMessage ?? "The answer would take more than \(maxBytes) bytes (--max-response-bytes); ask for fewer fields or smaller pages.")
        e.extensions["code"] = .string(Self.tooLargeCode)
        return e
    }

    /// Counts a connection field's page before it is read (`maxNodes`): `first` for each of the
    /// `objects` objects it runs on, when its selection reads the page (`totalCount` alone does
    /// not). The error when the count passes the limit, located at the field.
    private func countNodes(_ field: PlannedField, on typeName: String, objects: Int) -> GraphQLError? {
        guard maxNodes != Int.max, field.def.type.namedType == connectionTypeName, objects > 0,
              let first = field.connectionFirst, first > 0,
              field.child.fields.contains(where: { $0.name != "totalCount" && $0.name != "__typename" })
        else { return nil }
        let (page, o1) = objects.multipliedReportingOverflow(by: first)
        let (sum, o2) = countedNodes.addingReportingOverflow(page)
        countedNodes = o1 || o2 ? Int.max : sum
        guard countedNodes > maxNodes else { return nil }
        var e = GraphQLError(
            "Query would return up to \(countedNodes) nodes, over the limit of \(maxNodes): \(objects) \(typeName) objects ask `\(field.key)` for \(first) each. Lists multiply connections' first at run time; ask for smaller pages or fewer objects.",
            locations: field.locations)
        e.extensions["code"] = .string("NODE_LIMIT_EXCEEDED")
        return e
    }

    /// Resolves and completes every field of level `li`; an error when the estimate passed
    /// `maxBytes` (checked after each field) or a connection `maxNodes`, and the level was left
    /// unfinished.
    private func runLevel(_ li: Int32, _ tree: inout Tree) -> GraphQLError? {
        let plan = tree.levels[Int(li)].plan
        let objects = tree.levels[Int(li)].objects
        let n = objects.count
        let stride = plan.fields.count
        // The level's slots, made when it runs (all its objects are known), are held here while
        // its fields run (completion appends only to other levels), so each write is one array
        // store, not a path through `tree.levels`.
        var slots = [Slot](repeating: .null, count: n * stride)
        defer { tree.levels[Int(li)].slots = slots }
        for (fi, field) in plan.fields.enumerated() {
            if field.name == "__typename" {
                let name = tree.string(plan.typeName)
                for r in 0..<n { slots[r * stride + fi] = name }
                continue
            }
            let values: [ResolvedValue]
            do throws(GraphQLError) {
                if let e = field.argumentError { throw e }
                if let e = countNodes(field, on: plan.typeName, objects: n) { return e }
                resolver.byteBudget = maxBytes == Int.max ? Int.max : maxBytes - estimatedBytes
                values = try resolver.resolve(type: plan.typeName, field: field, objects: objects)
            } catch {
                if error.extensions["code"] == .string(Self.tooLargeCode) { return tooLarge() }
                for r in 0..<n {
                    fail(error, field: field, level: li, row: Int32(r), indices: .none, &tree)
                    if estimatedBytes > maxBytes { return tooLarge() }
                }
                continue
            }
            if maxBytes != Int.max {
                estimatedBytes += Self.textBytes(values)
                if estimatedBytes > maxBytes { return tooLarge() }
            }
            let shape = ScalarShape(field.def.type)
            var child: Int32 = -1
            values.withUnsafeBufferPointer { buf in
                for r in 0..<n {
                    let slot: Slot
                    if r >= buf.count {
                        slot = complete(.null, type: field.def.type, field: field, fieldIndex: fi, level: li, row: Int32(r),
                                        indices: .none, child: &child, &tree)
                    } else if case .named(let nonNull) = shape {
                        // Scalars and objects of a named type complete in place; anything else
                        // (nulls in non-null positions, errors, out-of-range Ints) takes the
                        // general path.
                        switch buf[r] {
                        case .string(let s), .enumName(let s): slot = tree.string(s)
                        case .id(let i): slot = tree.id(i)
                        case .rowText(let row, let column): slot = tree.rowText(row, column)
                        case .object(let o):
                            slot = object(o, field: field, fieldIndex: fi, level: li, row: Int32(r), indices: .none,
                                          child: &child, &tree)
                        case .bool(let b): slot = tree.bool(b)
                        case .int(let i) where i >= Int(Int32.min) && i <= Int(Int32.max): slot = tree.int(i)
                        case .null where !nonNull: slot = .null
                        default:
                            slot = complete(buf[r], type: field.def.type, field: field, fieldIndex: fi, level: li,
                                            row: Int32(r), indices: .none, child: &child, &tree)
                        }
                    } else {
                        slot = complete(buf[r], type: field.def.type, field: field, fieldIndex: fi, level: li, row: Int32(r),
                                        indices: .none, child: &child, &tree)
                    }
                    slots[r * stride + fi] = slot
                }
            }
            if estimatedBytes > maxBytes { return tooLarge() }
        }
        return nil
    }

    /// The text a field's values add to the answer beyond their slots (`maxBytes`).
    private static func textBytes(_ values: [ResolvedValue]) -> Int {
        var n = 0
        for v in values {
            switch v {
            case .string(let s), .enumName(let s): n += s.utf8.count
            case .jsonList(_, let items): n += items.count
            case .jsonValue(_, let bytes): n += bytes.count
            // A product's column, written from its row, trimmed (padding is common).
            case .rowText(let row, let column): n += row.trimmedBytes(column)?.count ?? 0
            case .list(let items): n += 16 * items.count + textBytes(items)
            default: break
            }
        }
        return n
    }

    /// The response path of an object.
    private func path(level: Int32, row: Int32, _ tree: Tree) -> [PathComponent] {
        var parts: [[PathComponent]] = []
        var l = level, r = row
        while l > 0 {
            let lv = tree.levels[Int(l)]
            let parent = tree.levels[Int(lv.parentLevel)]
            parts.append([.key(parent.plan.fields[Int(lv.parentField)].key)] + lv.indices[Int(r)].components)
            r = lv.parents[Int(r)]
            l = lv.parentLevel
        }
        return parts.reversed().flatMap { $0 }
    }

    private func fail(_ error: GraphQLError, field: PlannedField, level: Int32, row: Int32, indices: ListIndices,
                      _ tree: inout Tree) {
        var e = error
        if e.locations.isEmpty { e.locations = field.locations }
        e.path = path(level: level, row: row, tree) + [.key(field.key)] + indices.components
        // Errors are part of the answer (`maxBytes`): a field failing over a long list fails
        // once per item (an audit's timed-out list of 500,000 made 132 MB of errors).
        estimatedBytes += 64 + e.message.utf8.count + 16 * (e.path?.count ?? 0)
        tree.errors.append(e)
    }

    // CompleteValue(fieldType, fields, result, variableValues)
    private func complete(_ value: ResolvedValue, type: TypeRef, field: PlannedField, fieldIndex: Int,
                          level: Int32, row: Int32, indices: ListIndices, child: inout Int32, _ tree: inout Tree) -> Slot {
        if case .error(let e) = value {
            fail(e, field: field, level: level, row: row, indices: indices, &tree)
            return .null
        }
        if case .jsonList(let text, let items) = value { return tree.jsonList(text, items) }
        if case .jsonValue(let text, let bytes) = value { return tree.jsonValue(text, bytes) }
        switch type {
        case .nonNull(let inner):
            if case .null = value {
                fail(Self.fieldError("Cannot return null for non-nullable field \(tree.levels[Int(level)].plan.typeName).\(field.name).", code: "INTERNAL_SERVER_ERROR"),
                     field: field, level: level, row: row, indices: indices, &tree)
                return .null
            }
            return complete(value, type: inner, field: field, fieldIndex: fieldIndex, level: level, row: row,
                            indices: indices, child: &child, &tree)
        case .list(let item):
            switch value {
            case .null: return .null
            case .list(let items):
                let start = tree.lists.count
                tree.lists.append(contentsOf: repeatElement(.null, count: items.count))
                // Items of a named type (nullable or not) that are objects or strings complete
                // here, as the general path would; anything else takes it.
                let named: Bool
                switch item {
                case .named, .nonNull(.named): named = true
                default: named = false
                }
                for (k, v) in items.enumerated() {
                    let s: Slot
                    switch v {
                    case .object(let o) where named:
                        s = object(o, field: field, fieldIndex: fieldIndex, level: level, row: row,
                                   indices: indices.appending(k), child: &child, &tree)
                    case .string(let str) where named: s = tree.string(str)
                    case .rowText(let r, let c) where named: s = tree.rowText(r, c)
                    default:
                        s = complete(v, type: item, field: field, fieldIndex: fieldIndex, level: level, row: row,
                                     indices: indices.appending(k), child: &child, &tree)
                    }
                    tree.lists[start + k] = s
                }
                return .list(start: Int32(start), count: Int32(items.count))
            default:
                fail(Self.fieldError("Expected a list for field \(tree.levels[Int(level)].plan.typeName).\(field.name).", code: "INTERNAL_SERVER_ERROR"),
                     field: field, level: level, row: row, indices: indices, &tree)
                return .null
            }
        case .named:
            switch value {
            case .null: return .null
            case .string(let s), .enumName(let s): return tree.string(s)
            case .id(let i): return tree.id(i)
            case .rowText(let row, let column): return tree.rowText(row, column)
            case .bool(let b): return tree.bool(b)
            case .int(let i):
                guard i >= Int(Int32.min) && i <= Int(Int32.max) else {
                    fail(Self.fieldError("Int cannot represent non 32-bit signed integer value: \(i)", code: "UNREPRESENTABLE_VALUE"),
                         field: field, level: level, row: row, indices: indices, &tree)
                    return .null
                }
                return tree.int(i)
            case .object(let o):
                return object(o, field: field, fieldIndex: fieldIndex, level: level, row: row, indices: indices,
                              child: &child, &tree)
            case .jsonList(let text, let items): return tree.jsonList(text, items)
            case .jsonValue(let text, let bytes): return tree.jsonValue(text, bytes)
            case .list, .error:
                fail(Self.fieldError("Unexpected list for field \(tree.levels[Int(level)].plan.typeName).\(field.name).", code: "INTERNAL_SERVER_ERROR"),
                     field: field, level: level, row: row, indices: indices, &tree)
                return .null
            }
        }
    }

    /// An object completes as the next row of the field's child level (made on first use).
    @inline(__always)
    private func object(_ o: ObjectValue, field: PlannedField, fieldIndex: Int, level: Int32, row: Int32,
                        indices: ListIndices, child: inout Int32, _ tree: inout Tree) -> Slot {
        if let e = field.child.error {
            // CollectFields of its selection failed: this value is that field error.
            fail(e, field: field, level: level, row: row, indices: indices, &tree)
            return .null
        }
        if child < 0 {
            child = Int32(tree.levels.count)
            var lv = Level(plan: field.child, parentLevel: level, parentField: Int32(fieldIndex))
            // At least one object per parent object is the usual shape.
            lv.reserve(tree.levels[Int(level)].parents.count)
            tree.levels.append(lv)
        }
        let r = tree.levels[Int(child)].append(o, parent: row, indices: indices)
        return .object(level: child, row: r)
    }

    // MARK: Null propagation (spec 6.4.4): a null in a non-null position nulls the nearest
    // nullable ancestor. Returns true when the object itself must become null.

    private func prune(level: Int32, row: Int32, _ tree: inout Tree) -> Bool {
        let plan = tree.levels[Int(level)].plan
        let base = Int(row) * plan.fields.count
        for (i, field) in plan.fields.enumerated() {
            let (slot, isNull) = prune(tree.levels[Int(level)].slots[base + i], type: field.def.type, &tree)
            tree.levels[Int(level)].slots[base + i] = slot
            if isNull && field.def.type.isNonNull { return true }
        }
        return false
    }

    private func prune(_ slot: Slot, type: TypeRef, _ tree: inout Tree) -> (Slot, Bool) {
        let inner = type.nullable
        switch slot {
        case .null: return (.null, true)
        case .object(let l, let r): return prune(level: l, row: r, &tree) ? (.null, true) : (slot, false)
        case .list(let start, let count):
            guard case .list(let itemType) = inner else { return (slot, false) }
            for k in Int(start)..<Int(start + count) {
                let (s, isNull) = prune(tree.lists[k], type: itemType, &tree)
                if isNull && itemType.isNonNull { return (.null, true) }
                tree.lists[k] = s
            }
            return (slot, false)
        default: return (slot, false)
        }
    }

}

/// The finished tree as plain buffers for serialisation: every level's slots back to back
/// (`levelBase`), each level's field keys as ranges of `keys` (`levelKeys` indexes `keyRanges`,
/// whose consecutive entries bound one key, written with the "{" or "," before it), the list
/// arena and the scalars' JSON.
private struct FlatTree {
    let slots: UnsafeBufferPointer<Slot>
    let levelBase: UnsafeBufferPointer<Int>
    let levelKeys: UnsafeBufferPointer<Int>
    let keyRanges: UnsafeBufferPointer<Int>
    let keys: UnsafeBufferPointer<UInt8>
    let lists: UnsafeBufferPointer<Slot>
    let scalars: UnsafeBufferPointer<UInt8>
    let outside: UnsafeBufferPointer<OutsideSpan>

    @inline(__always) private func fieldCount(_ level: Int) -> Int {
        let k = levelKeys[level]
        return (level + 1 < levelKeys.count ? levelKeys[level + 1] : keyRanges.count - 1) - k
    }

    /// The bytes `write` produces for these slots themselves: objects are counted with their
    /// level, list items with the list arena.
    static func sizeBound(_ slots: [Slot]) -> Int {
        var n = 0
        for slot in slots {
            switch slot {
            case .null: n += 4
            case .json(_, let count), .outside(_, let count): n += Int(count)
            case .object: break
            case .list(_, let count): n += 2 + max(0, Int(count) - 1)
            }
        }
        return n
    }

    func write(level: Int32, row: Int32, _ out: inout RawOutput) {
        let l = Int(level)
        let fields = fieldCount(l)
        let base = levelBase[l] + Int(row) * fields
        let k = levelKeys[l]
        if fields == 0 { out.byte(0x7B) }
        for i in 0..<fields {
            // The key with the "{" or "," before it.
            out.append(UnsafeBufferPointer(rebasing: keys[keyRanges[k + i]..<keyRanges[k + i + 1]]))
            write(slots[base + i], &out)
        }
        out.byte(0x7D)
    }

    func write(_ slot: Slot, _ out: inout RawOutput) {
        switch slot {
        case .null: out.null()
        case .json(let start, let count):
            out.append(UnsafeBufferPointer(rebasing: scalars[Int(start)..<Int(start + count)]))
        case .outside(let index, _):
            let span = outside[Int(index)]
            if span.bracketed { out.byte(0x5B) }
            out.append(UnsafeBufferPointer(start: span.base.assumingMemoryBound(to: UInt8.self), count: span.count))
            if span.bracketed { out.byte(0x5D) }
        case .object(let l, let r): write(level: l, row: r, &out)
        case .list(let start, let count):
            out.byte(0x5B)
            for k in Int(start)..<Int(start + count) {
                if k > start { out.byte(0x2C) }
                write(lists[k], &out)
            }
            out.byte(0x5D)
        }
    }
}

/// Writes into a buffer of a size computed beforehand; every write is bounds-checked.
private struct RawOutput {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    @inline(__always) mutating func byte(_ b: UInt8) {
        precondition(count < buffer.count, "answer larger than its computed size")
        buffer[count] = b
        count += 1
    }

    @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(count + bytes.count <= buffer.count, "answer larger than its computed size")
        guard let src = bytes.baseAddress, let dst = buffer.baseAddress, bytes.count > 0 else { return }
        (dst + count).update(from: src, count: bytes.count)
        count += bytes.count
    }

    mutating func null() {
        byte(0x6E); byte(0x75); byte(0x6C); byte(0x6C)
    }
}
