import Schema

/// One value in the response tree.
enum Slot {
    case null
    case string(String)
    case int(Int)
    case bool(Bool)
    case object(ResultObject)
    case list([Slot])
}

/// One object in the response: a slot per planned field, in plan order.
final class ResultObject {
    let plan: SelectionPlan
    /// Parent object; the tree owns children, so the back reference needs no retain.
    unowned(unsafe) let parent: ResultObject?
    let key: String
    let indices: [Int]
    var slots: [Slot]

    init(plan: SelectionPlan, parent: ResultObject?, key: String, indices: [Int]) {
        self.plan = plan; self.parent = parent; self.key = key; self.indices = indices
        self.slots = Array(repeating: .null, count: plan.fields.count)
    }

    /// The response path of this object.
    var path: [PathComponent] {
        var parts: [[PathComponent]] = []
        var node: ResultObject? = self
        while let n = node, n.parent != nil {
            parts.append([.key(n.key)] + n.indices.map { .index($0) })
            node = n.parent
        }
        return parts.reversed().flatMap { $0 }
    }
}

/// A level of the breadth-first execution: every object of one selection plan.
private struct Batch {
    let plan: SelectionPlan
    var objects: [ObjectValue]
    var results: [ResultObject]
}

/// The data source the executor calls: one batch call per (field, level).
protocol BatchResolver: AnyObject {
    /// Returns one value per object, in order. Throwing fails the field for every object.
    func resolve(type: String, field: PlannedField, objects: [ObjectValue]) throws(GraphQLError) -> [ResolvedValue]
}

/// Executes a selection plan breadth-first: each field of each level is resolved once for all
/// objects of that level, so the number of resolver calls (and SQL statements) depends on the
/// query's shape, never on the number of rows.
final class Executor {
    let planner: Planner
    let resolver: BatchResolver
    private(set) var errors: [GraphQLError] = []

    init(planner: Planner, resolver: BatchResolver) {
        self.planner = planner; self.resolver = resolver
    }

    /// Runs the operation's root selection set and returns the serialised response.
    func run(operation: OperationDefinition, rootType: String) -> ExecutionResult {
        let rootPlan = planner.plan(typeName: rootType, selectionSets: [operation.selectionSet])
        let root = ResultObject(plan: rootPlan, parent: nil, key: "", indices: [])
        var queue: [Batch] = [Batch(plan: rootPlan, objects: [.root], results: [root])]
        var head = 0
        while head < queue.count {
            let batch = queue[head]
            queue[head] = Batch(plan: batch.plan, objects: [], results: [])
            head += 1
            runBatch(batch, queue: &queue)
        }
        var w = JSONWriter(capacity: 4096)
        w.byte(0x7B)
        var dataNull = false
        if !errors.isEmpty {
            dataNull = prune(root)
            w.raw("\"errors\":"); w.errors(errors); w.byte(0x2C)
        }
        w.raw("\"data\":")
        if dataNull { w.null() } else { write(root, &w) }
        w.byte(0x7D)
        return ExecutionResult(json: w.bytes, errors: errors, hasData: true)
    }

    private func runBatch(_ batch: Batch, queue: inout [Batch]) {
        let plan = batch.plan
        for (fi, field) in plan.fields.enumerated() {
            if field.name == "__typename" {
                for r in batch.results { r.slots[fi] = .string(plan.typeName) }
                continue
            }
            let values: [ResolvedValue]
            do throws(GraphQLError) {
                if let e = field.argumentError { throw e }
                values = try resolver.resolve(type: plan.typeName, field: field, objects: batch.objects)
            } catch {
                for r in batch.results { fail(error, field: field, parent: r, indices: []) }
                continue
            }
            var child: Batch?
            for (i, r) in batch.results.enumerated() {
                let v = i < values.count ? values[i] : .null
                r.slots[fi] = complete(v, type: field.def.type, field: field, parent: r, indices: [], child: &child)
            }
            if let child, !child.objects.isEmpty { queue.append(child) }
        }
    }

    private func fail(_ error: GraphQLError, field: PlannedField, parent: ResultObject, indices: [Int]) {
        var e = error
        if e.locations.isEmpty { e.locations = field.locations }
        e.path = parent.path + [.key(field.key)] + indices.map { .index($0) }
        errors.append(e)
    }

    // CompleteValue(fieldType, fields, result, variableValues)
    private func complete(_ value: ResolvedValue, type: TypeRef, field: PlannedField, parent: ResultObject,
                          indices: [Int], child: inout Batch?) -> Slot {
        if case .error(let e) = value {
            fail(e, field: field, parent: parent, indices: indices)
            return .null
        }
        switch type {
        case .nonNull(let inner):
            if case .null = value {
                fail(GraphQLError("Cannot return null for non-nullable field \(parent.plan.typeName).\(field.name)."),
                     field: field, parent: parent, indices: indices)
                return .null
            }
            return complete(value, type: inner, field: field, parent: parent, indices: indices, child: &child)
        case .list(let item):
            switch value {
            case .null: return .null
            case .list(let items):
                var out: [Slot] = []
                out.reserveCapacity(items.count)
                for (k, v) in items.enumerated() {
                    out.append(complete(v, type: item, field: field, parent: parent, indices: indices + [k], child: &child))
                }
                return .list(out)
            default:
                fail(GraphQLError("Expected a list for field \(parent.plan.typeName).\(field.name)."),
                     field: field, parent: parent, indices: indices)
                return .null
            }
        case .named:
            switch value {
            case .null: return .null
            case .string(let s), .enumName(let s): return .string(s)
            case .bool(let b): return .bool(b)
            case .int(let i):
                guard i >= Int(Int32.min) && i <= Int(Int32.max) else {
                    fail(GraphQLError("Int cannot represent non 32-bit signed integer value: \(i)"),
                         field: field, parent: parent, indices: indices)
                    return .null
                }
                return .int(i)
            case .object(let o):
                if child == nil { child = Batch(plan: field.child, objects: [], results: []) }
                let r = ResultObject(plan: field.child, parent: parent, key: field.key, indices: indices)
                child!.objects.append(o)
                child!.results.append(r)
                return .object(r)
            case .list, .error:
                fail(GraphQLError("Unexpected list for field \(parent.plan.typeName).\(field.name)."),
                     field: field, parent: parent, indices: indices)
                return .null
            }
        }
    }

    // MARK: Null propagation (spec 6.4.4): a null in a non-null position nulls the nearest
    // nullable ancestor. Returns true when `object` itself must become null.

    private func prune(_ object: ResultObject) -> Bool {
        for (i, field) in object.plan.fields.enumerated() {
            let (slot, isNull) = prune(object.slots[i], type: field.def.type)
            object.slots[i] = slot
            if isNull && field.def.type.isNonNull { return true }
        }
        return false
    }

    private func prune(_ slot: Slot, type: TypeRef) -> (Slot, Bool) {
        let inner = type.nullable
        switch slot {
        case .null: return (.null, true)
        case .object(let o): return prune(o) ? (.null, true) : (slot, false)
        case .list(let items):
            guard case .list(let itemType) = inner else { return (slot, false) }
            var out = items
            for (k, item) in items.enumerated() {
                let (s, isNull) = prune(item, type: itemType)
                if isNull && itemType.isNonNull { return (.null, true) }
                out[k] = s
            }
            return (.list(out), false)
        default: return (slot, false)
        }
    }

    // MARK: Serialisation

    private func write(_ object: ResultObject, _ w: inout JSONWriter) {
        w.byte(0x7B)
        for (i, field) in object.plan.fields.enumerated() {
            if i > 0 { w.byte(0x2C) }
            w.string(field.key)
            w.byte(0x3A)
            write(object.slots[i], &w)
        }
        w.byte(0x7D)
    }

    private func write(_ slot: Slot, _ w: inout JSONWriter) {
        switch slot {
        case .null: w.null()
        case .string(let s): w.string(s)
        case .int(let i): w.int(i)
        case .bool(let b): w.bool(b)
        case .object(let o): write(o, &w)
        case .list(let items):
            w.byte(0x5B)
            for (k, s) in items.enumerated() {
                if k > 0 { w.byte(0x2C) }
                write(s, &w)
            }
            w.byte(0x5D)
        }
    }
}
