// The project's two cost limits, checked after validation and before execution: selection
// depth, and a GitHub-style node estimate (the product of `first` along nested connections).
// Both follow fragment spreads, each fragment measured once, before the fragments spreading it;
// spreads that would close a cycle are ignored.

// MARK: Depth

/// The depth of an operation's deepest field (a top-level field has depth 1), through fragments,
/// and an error when it exceeds `maxDepth`, located at that deepest field.
public func checkDepth(document: Document, operation: OperationDefinition, maxDepth: Int) -> GraphQLError? {
    let meter = DepthMeter(document: document)
    let (depth, field) = meter.measure(operation.selectionSet)
    guard depth > maxDepth else { return nil }
    let loc = field?.loc ?? operation.loc
    var error = GraphQLError("Query depth \(depth) exceeds the limit of \(maxDepth).",
                             locations: [document.location(loc)])
    error.extensions["code"] = .string("DEPTH_LIMIT_EXCEEDED")
    return error
}

/// The depth of an operation's deepest field, through fragments (0 for an empty selection).
public func queryDepth(document: Document, operation: OperationDefinition) -> Int {
    let meter = DepthMeter(document: document)
    return meter.measure(operation.selectionSet).0
}

private struct DepthMeter {
    var memo: [String: (Int, Field?)] = [:]

    /// Measures every fragment once, each after the fragments it spreads.
    init(document: Document) {
        let (fragments, order) = fragmentsInDependencyOrder(document)
        for name in order {
            guard let def = fragments[name] else { continue }
            memo[name] = measure(def.selectionSet)
        }
    }

    /// The deepest field under a selection set, counted from it (its fields have depth 1), and
    /// the first field found at that depth. A spread of a fragment not measured yet (only on a
    /// cycle) or unknown counts 0.
    func measure(_ set: SelectionSet) -> (Int, Field?) {
        var best: (Int, Field?) = (0, nil)
        for selection in set.selections {
            let candidate: (Int, Field?)
            switch selection {
            case .field(let f):
                if let sub = f.selectionSet {
                    let (d, deepest) = measure(sub)
                    candidate = d > 0 ? (d + 1, deepest) : (1, f)
                } else {
                    candidate = (1, f)
                }
            case .inlineFragment(let i):
                candidate = measure(i.selectionSet)
            case .fragmentSpread(let s):
                candidate = memo[s.name.value] ?? (0, nil)
            }
            if candidate.0 > best.0 { best = candidate }
        }
        return best
    }
}

/// The document's fragments by name (the last of a name wins, as in graphql-js), and their names ordered so that
/// every fragment comes after the fragments it spreads (a spread closing a cycle is ignored).
/// Iterative: chains of thousands of fragments do not grow the stack.
func fragmentsInDependencyOrder(_ document: Document) -> ([String: FragmentDefinition], [String]) {
    var fragments: [String: FragmentDefinition] = [:]
    for f in document.fragments { fragments[f.name.value] = f }
    var state: [String: Bool] = [:]  // false: in progress, true: done
    var order: [String] = []
    struct Frame { let name: String; let spreads: [String]; var next = 0 }
    for root in document.fragments {
        let rootName = root.name.value
        guard state[rootName] == nil, let rootDef = fragments[rootName] else { continue }
        state[rootName] = false
        var stack = [Frame(name: rootName, spreads: spreadNames(rootDef.selectionSet))]
        while let top = stack.last {
            if top.next < top.spreads.count {
                let name = top.spreads[top.next]
                stack[stack.count - 1].next += 1
                if state[name] == nil, let def = fragments[name] {
                    state[name] = false
                    stack.append(Frame(name: name, spreads: spreadNames(def.selectionSet)))
                }
            } else {
                state[top.name] = true
                order.append(top.name)
                stack.removeLast()
            }
        }
    }
    return (fragments, order)
}

/// Names of the fragments spread anywhere in a selection set (nested fields and inline
/// fragments included), in document order.
private func spreadNames(_ set: SelectionSet) -> [String] {
    var names: [String] = []
    var toVisit: [ArraySlice<Selection>] = [set.selections[...]]
    while var selections = toVisit.popLast() {
        guard let first = selections.popFirst() else { continue }
        toVisit.append(selections)
        switch first {
        case .fragmentSpread(let s): names.append(s.name.value)
        case .field(let f): if let sub = f.selectionSet { toVisit.append(sub.selections[...]) }
        case .inlineFragment(let i): toVisit.append(i.selectionSet.selections[...])
        }
    }
    return names
}

// MARK: Nodes

/// The named type whose fields count as connections for the node limit.
public let connectionTypeName = "ProductConnection"

/// GitHub-style estimate of the nodes an operation can return: the sum, over every connection
/// field (one whose type's named type is `ProductConnection`), of the product of `first` along
/// its chain of enclosing connections, itself included. `first` comes from the literal, the
/// variable, or the argument's default (also when null); a value outside `0...maxFirst` counts
/// as 0, since such a field fails without returning nodes. Fields excluded by @skip/@include
/// are not counted. Saturates at Int.max.
public func estimateNodes(schema: GraphQLSchema, document: Document, operation: OperationDefinition,
                          variables: [String: JSONValue], maxFirst: Int = 100) -> Int {
    let estimator = NodeEstimator(schema: schema, document: document, variables: variables, maxFirst: maxFirst)
    return estimator.count(operation.selectionSet, parent: schema.rootType(operation.operation))
}

/// The node limit: an error located at the operation when the estimate exceeds `maxNodes`.
public func checkNodeLimit(schema: GraphQLSchema, document: Document, operation: OperationDefinition,
                           variables: [String: JSONValue], maxNodes: Int, maxFirst: Int = 100) -> GraphQLError? {
    let nodes = estimateNodes(schema: schema, document: document, operation: operation, variables: variables,
                              maxFirst: maxFirst)
    return nodeLimitError(nodes: nodes, maxNodes: maxNodes, document: document, operation: operation)
}

/// The node limit's error for an estimate already made (nil when `nodes` is within `maxNodes`).
public func nodeLimitError(nodes: Int, maxNodes: Int, document: Document, operation: OperationDefinition) -> GraphQLError? {
    guard nodes > maxNodes else { return nil }
    var error = GraphQLError("Query requests up to \(nodes) nodes, over the limit of \(maxNodes).",
                             locations: [document.location(operation.loc)])
    error.extensions["code"] = .string("NODE_LIMIT_EXCEEDED")
    return error
}

/// The variables the node estimate can depend on: every variable used, at any depth, in an
/// argument named `first` or in a directive's arguments, anywhere in the document (operation
/// and fragments alike). Empty means the estimate is the same whatever the variables are, so a
/// caller may make it once per document (QueryService does).
public func nodeEstimateVariables(_ document: Document) -> Set<String> {
    var names: Set<String> = []
    func values(_ v: Value) {
        switch v {
        case .variable(let x): names.insert(x.name.value)
        case .list(let items, _): items.forEach(values)
        case .object(let fields, _): fields.forEach { values($0.value) }
        default: break
        }
    }
    func directives(_ ds: [Directive]) {
        for d in ds { for a in d.arguments { values(a.value) } }
    }
    var toVisit: [SelectionSet] = document.operations.map(\.selectionSet) + document.fragments.map(\.selectionSet)
    while let set = toVisit.popLast() {
        for selection in set.selections {
            directives(selection.directives)
            switch selection {
            case .field(let f):
                for a in f.arguments where a.name.value == "first" { values(a.value) }
                if let sub = f.selectionSet { toVisit.append(sub) }
            case .inlineFragment(let i): toVisit.append(i.selectionSet)
            case .fragmentSpread: break
            }
        }
    }
    return names
}

private struct NodeEstimator {
    let schema: GraphQLSchema
    let variables: [String: JSONValue]
    let maxFirst: Int
    /// Nodes under each fragment with a multiplier of 1 (the count scales linearly).
    var memo: [String: Int] = [:]

    /// Counts every fragment once, each after the fragments it spreads.
    init(schema: GraphQLSchema, document: Document, variables: [String: JSONValue], maxFirst: Int) {
        self.schema = schema
        self.variables = variables
        self.maxFirst = maxFirst
        let (fragments, order) = fragmentsInDependencyOrder(document)
        for name in order {
            guard let def = fragments[name] else { continue }
            memo[name] = count(def.selectionSet, parent: schema.type(def.typeCondition.name.value))
        }
    }

    /// Nodes requested under a selection set whose enclosing connections multiply to 1.
    func count(_ set: SelectionSet, parent: NamedTypeDef?) -> Int {
        var total = 0
        for selection in set.selections {
            guard shouldInclude(directives: selection.directives, variables: variables) else { continue }
            switch selection {
            case .field(let field):
                guard let parent, let def = schema.fieldDef(parent: parent.name, name: field.name.value) else { continue }
                let childType = schema.namedDef(of: def.type)
                if def.type.namedType == connectionTypeName {
                    let first = firstValue(field, def)
                    total = add(total, first)
                    if let sub = field.selectionSet {
                        total = add(total, multiply(first, count(sub, parent: childType)))
                    }
                } else if let sub = field.selectionSet {
                    total = add(total, count(sub, parent: childType))
                }
            case .inlineFragment(let inline):
                let type = inline.typeCondition.map { schema.type($0.name.value) } ?? parent
                total = add(total, count(inline.selectionSet, parent: type))
            case .fragmentSpread(let spread):
                total = add(total, memo[spread.name.value] ?? 0)
            }
        }
        return total
    }

    private func firstValue(_ field: Field, _ def: FieldDef) -> Int {
        var value: JSONValue?
        if let arg = field.arguments.last(where: { $0.name.value == "first" }) {
            switch arg.value {
            case .variable(let v): value = variables[v.name.value]
            default: value = LeafCoercion.untypedValue(arg.value, variables: variables)
            }
        }
        if value == nil || value == .null {
            value = def.argument("first")?.defaultValue.map { LeafCoercion.untypedValue($0, variables: [:]) }
        }
        guard case .int(let n)? = value, n >= 0, n <= Int64(maxFirst) else { return 0 }
        return Int(n)
    }

    private func add(_ a: Int, _ b: Int) -> Int {
        let (r, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : r
    }

    private func multiply(_ a: Int, _ b: Int) -> Int {
        let (r, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? Int.max : r
    }
}
