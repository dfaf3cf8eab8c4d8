import Schema

/// The fields of one selection set on one object type after CollectFields (spec 6.3.2):
/// fragments inlined, @skip/@include applied, fields merged by response key.
/// Plans are built lazily, only for selections that have objects to run on.
final class SelectionPlan {
    let typeName: String
    let fields: [PlannedField]
    /// CollectFields failed (a @skip/@include `if` given null): every object of this plan is
    /// that field error instead (graphql-js throws it from collectSubfields, per value).
    let error: GraphQLError?

    init(typeName: String, fields: [PlannedField], error: GraphQLError? = nil) {
        self.typeName = typeName
        self.fields = fields
        self.error = error
    }
}

/// All AST fields sharing one response key, with the field definition and coerced arguments.
final class PlannedField {
    let key: String
    /// `"key":` as JSON text, written before the field's value.
    let keyJSON: [UInt8]
    let name: String
    let def: FieldDef
    let nodes: [Field]
    let arguments: [String: JSONValue]
    /// Set when the arguments could not be coerced (e.g. a variable of the wrong value).
    let argumentError: GraphQLError?
    private let planner: Planner
    private var _child: SelectionPlan?
    /// What a resolver made of this field before reading any row, kept for the next execution
    /// of the same plan (plans are per session, prepared operation and variables). The resolver
    /// checks it was made for its own layout.
    var resolverMemo: AnyObject?

    init(key: String, name: String, def: FieldDef, nodes: [Field], arguments: [String: JSONValue],
         argumentError: GraphQLError?, planner: Planner) {
        self.key = key; self.name = name; self.def = def; self.nodes = nodes
        var w = JSONWriter(capacity: key.utf8.count + 3)
        w.string(key); w.byte(0x3A)
        self.keyJSON = w.bytes
        self.arguments = arguments; self.argumentError = argumentError; self.planner = planner
    }

    /// The plan of this field's sub-selection, for composite return types.
    var child: SelectionPlan {
        if let c = _child { return c }
        let c = planner.plan(typeName: def.type.namedType, selectionSets: nodes.compactMap(\.selectionSet))
        _child = c
        return c
    }

    /// Every AST field merged into this one, as graphql-js's locatedError(fieldNodes).
    var locations: [SourceLocation] { nodes.map { planner.document.location($0.loc) } }

    func int(_ name: String) -> Int? {
        switch arguments[name] {
        case .int(let v)?: return Int(v)
        case .double(let d)? where d == d.rounded(): return Int(d)
        default: return nil
        }
    }
    /// A connection's `first`: 50 when absent or null, nil when outside 0...100 (a field error).
    var connectionFirst: Int? {
        guard case let value? = arguments["first"], value != .null else { return 50 }
        guard let n = int("first"), n >= 0, n <= 100 else { return nil }
        return n
    }
    func string(_ name: String) -> String? {
        if case .string(let s)? = arguments[name] { return s }
        return nil
    }
    func bool(_ name: String) -> Bool? {
        if case .bool(let b)? = arguments[name] { return b }
        return nil
    }
}

/// Builds selection plans for one execution (variables fixed).
final class Planner {
    let schema: GraphQLSchema
    let document: Document
    let variables: [String: JSONValue]
    let fragments: [String: FragmentDefinition]

    init(schema: GraphQLSchema, document: Document, variables: [String: JSONValue]) {
        self.schema = schema; self.document = document; self.variables = variables
        var f: [String: FragmentDefinition] = [:]
        // As graphql-js's fragment map: a repeated name (an invalid document) means the last.
        for d in document.fragments { f[d.name.value] = d }
        self.fragments = f
    }

    func plan(typeName: String, selectionSets: [SelectionSet]) -> SelectionPlan {
        var order: [String] = []
        var grouped: [String: [Field]] = [:]
        var visited = Set<String>()
        do throws(GraphQLError) {
            for set in selectionSets {
                try collect(set, typeName: typeName, order: &order, grouped: &grouped, visited: &visited)
            }
        } catch {
            return SelectionPlan(typeName: typeName, fields: [], error: Self.userInput(error))
        }
        var fields: [PlannedField] = []
        fields.reserveCapacity(order.count)
        for key in order {
            guard let nodes = grouped[key], let first = nodes.first,
                  let def = schema.fieldDef(parent: typeName, name: first.name.value) else { continue }
            var args: [String: JSONValue] = [:]
            var argError: GraphQLError?
            do {
                args = try coerceArgumentValues(
                    schema: schema, field: def, node: first, variables: variables, document: document)
            } catch {
                argError = Self.userInput(error)
            }
            fields.append(PlannedField(key: key, name: first.name.value, def: def, nodes: nodes,
                                       arguments: args, argumentError: argError, planner: self))
        }
        return SelectionPlan(typeName: typeName, fields: fields)
    }

    /// An argument that does not coerce is the client's error: BAD_USER_INPUT, as for variables.
    private static func userInput(_ error: GraphQLError) -> GraphQLError {
        var e = error
        if e.extensions["code"] == nil { e.extensions["code"] = .string("BAD_USER_INPUT") }
        return e
    }

    // CollectFields(objectType, selectionSet, variableValues, visitedFragments)
    private func collect(_ set: SelectionSet, typeName: String, order: inout [String],
                         grouped: inout [String: [Field]], visited: inout Set<String>) throws(GraphQLError) {
        for selection in set.selections {
            guard try shouldInclude(directives: selection.directives, schema: schema, variables: variables,
                                    document: document) else { continue }
            switch selection {
            case .field(let f):
                let key = f.responseKey
                if grouped[key] == nil { order.append(key); grouped[key] = [f] } else { grouped[key]!.append(f) }
            case .fragmentSpread(let s):
                let name = s.name.value
                guard !visited.contains(name), let frag = fragments[name] else { continue }
                visited.insert(name)
                guard schema.isSubType(typeName, of: frag.typeCondition.name.value) else { continue }
                try collect(frag.selectionSet, typeName: typeName, order: &order, grouped: &grouped, visited: &visited)
            case .inlineFragment(let i):
                if let cond = i.typeCondition, !schema.isSubType(typeName, of: cond.name.value) { continue }
                try collect(i.selectionSet, typeName: typeName, order: &order, grouped: &grouped, visited: &visited)
            }
        }
    }
}
