/// Field Selection Merging (spec 5.3.2): fields with the same response name, wherever they come
/// from (inline fragments, fragment spreads), can be merged: same field and arguments unless
/// their parents are distinct object types, compatible result shapes, and mergeable sub-fields.
///
/// The algorithm is graphql-js's (`OverlappingFieldsCanBeMergedRule.ts`: compare "within" each
/// selection set once, then "between" sets and fragments, fragment pairs compared once), with
/// guards against hostile documents:
/// - a comparison of two fields that found no conflict is remembered by the fields' structure
///   (parent type, name, arguments, sub-selections), so thousands of identical fields cost one
///   comparison, not millions;
/// - in large groups of same-named fields only one representative per distinct structure is
///   compared (identical fields conflict exactly as their representatives do);
/// - conflicts stop being collected once the error cap would be reached;
/// - total work is bounded; past the bound one error says the document is too complex.
final class OverlappingFieldsCanBeMergedRule: ValidationRule {
    let hooks: Hooks = [.enterSelectionSet]
    private let context: ValidationContext
    private let comparer: FieldComparer
    init(_ context: ValidationContext) {
        self.context = context
        self.comparer = FieldComparer(context)
    }

    func enter(_ node: SelectionSet) -> VisitAction {
        guard !comparer.tooComplex else { return .skip }
        // Most selection sets have distinct response names and no spreads: nothing can overlap.
        if Self.hasDistinctFieldsOnly(node) { return .proceed }
        let conflicts = comparer.findConflictsWithinSelectionSet(context.parentType, node)
        if comparer.tooComplex {
            context.report(FieldComparer.tooComplexMessage, at: node.loc)
            return .skip
        }
        for conflict in conflicts {
            context.report(
                "Fields \"\(conflict.responseName)\" conflict because \(conflict.reason.message). Use different aliases on the fields to fetch both if this was intentional.",
                at: (conflict.fields1 + conflict.fields2).map(\.loc))
        }
        return .proceed
    }
}

extension OverlappingFieldsCanBeMergedRule {
    /// True when the selection set (with its inline fragments) has no fragment spread and no
    /// response name twice.
    static func hasDistinctFieldsOnly(_ set: SelectionSet) -> Bool {
        var keys: [String] = []
        func collect(_ set: SelectionSet) -> Bool {
            for selection in set.selections {
                switch selection {
                case .field(let f): keys.append(f.responseKey)
                case .fragmentSpread: return false
                case .inlineFragment(let i): if !collect(i.selectionSet) { return false }
                }
            }
            return true
        }
        guard collect(set) else { return false }
        if keys.count <= 16 {
            for i in keys.indices {
                for j in keys.index(after: i)..<keys.count where keys[i] == keys[j] { return false }
            }
            return true
        }
        return Set(keys).count == keys.count
    }
}

// MARK: - Conflicts

private indirect enum ConflictReason {
    case text(String)
    case subfields([(String, ConflictReason)])

    var message: String {
        switch self {
        case .text(let s): return s
        case .subfields(let reasons):
            return reasons.map { "subfields \"\($0.0)\" conflict because \($0.1.message)" }.joined(separator: " and ")
        }
    }
}

private struct Conflict {
    let responseName: String
    let reason: ConflictReason
    let fields1: [Field]
    let fields2: [Field]
}

/// A field selection with the type it was selected on and its definition there (graphql-js
/// `NodeAndDef`); only object and interface fields have definitions here, as in graphql-js.
private final class NodeAndDef {
    let parentType: NamedTypeDef?
    let node: Field
    let def: FieldDef?
    /// Structural class (parent type + field structure), filled on first use.
    var classID: Int?
    init(_ parentType: NamedTypeDef?, _ node: Field, _ def: FieldDef?) {
        self.parentType = parentType; self.node = node; self.def = def
    }
}

/// Response name → fields, in first-seen order. A class so that identity can be compared.
private final class FieldMap {
    var keys: [String] = []
    var fields: [String: [NodeAndDef]] = [:]

    func append(_ key: String, _ field: NodeAndDef) {
        if fields[key] == nil { keys.append(key); fields[key] = [field] } else { fields[key]?.append(field) }
    }
}

private struct FragmentPair: Hashable {
    let a: String
    let b: String
    init(_ x: String, _ y: String) { if x < y { a = x; b = y } else { a = y; b = x } }
}

private struct ClassPair: Hashable {
    let a: Int
    let b: Int
    let mutuallyExclusive: Bool
}

// MARK: - Comparison

private final class FieldComparer {
    static let tooComplexMessage =
        "The document is too complex to check that fields with the same name can be merged."
    /// Bound on comparison work per document (field comparisons + response names examined).
    private static let workBudget = 250_000
    /// Groups of same-named fields up to this size are compared pair by pair, exactly as
    /// graphql-js; larger ones by structural class.
    private static let exactGroupSize = 16
    /// Selection sets spreading more fragments than this are first checked by structural class.
    private static let manySpreads = 8

    /// Changes made while trying to prove a selection set conflict-free, undone when the proof
    /// fails so that the exact search that follows starts from the same state.
    private enum Change {
        case pair(FragmentPair, Bool?)
        case noConflict(ClassPair)
    }
    private var undoLog: [Change]?

    private let context: ValidationContext
    private var schema: GraphQLSchema { context.schema }
    private var cache: [ObjectIdentifier: (FieldMap, [String])] = [:]
    /// Fragment pairs already compared, and whether that comparison was mutually exclusive.
    private var comparedFragmentPairs: [FragmentPair: Bool] = [:]
    private var noConflict: Set<ClassPair> = []
    /// Field-structure pairs whose comparison is in progress (on the call stack).
    private var comparing: Set<ClassPair> = []
    private var structureIDs: [ObjectIdentifier: Int] = [:]
    private var classIDs: [String: Int] = [:]
    private var canonicalArguments: [ObjectIdentifier: String] = [:]
    private var work = 0
    private(set) var tooComplex = false
    /// Conflicts found so far in the current top-level search; collection stops past the cap.
    private var found = 0
    private var cap = 0
    /// Depth of sub-selection comparisons below the selection set being checked.
    private var nesting = 0

    init(_ context: ValidationContext) { self.context = context }

    private var shouldStop: Bool { tooComplex || found > cap }

    private func spend(_ units: Int) {
        work += units
        if work > Self.workBudget { tooComplex = true }
    }

    func findConflictsWithinSelectionSet(_ parentType: NamedTypeDef?, _ set: SelectionSet) -> [Conflict] {
        found = 0
        cap = context.remainingErrorBudget
        var conflicts: [Conflict] = []
        let (fieldMap, fragmentNames) = fieldsAndFragmentNames(parentType, set)
        if fragmentNames.count > Self.manySpreads && provablyConflictFree(fieldMap, fragmentNames) { return [] }
        collectConflictsWithin(&conflicts, fieldMap)
        for (i, name) in fragmentNames.enumerated() {
            if shouldStop { break }
            collectConflictsBetweenFieldsAndFragment(&conflicts, false, fieldMap, name)
            for other in fragmentNames[(i + 1)...] {
                if shouldStop { break }
                collectConflictsBetweenFragments(&conflicts, false, name, other)
            }
        }
        return conflicts
    }

    private func markCompared(_ a: String, _ b: String, _ mutuallyExclusive: Bool) {
        let key = FragmentPair(a, b)
        let previous = comparedFragmentPairs.updateValue(mutuallyExclusive, forKey: key)
        undoLog?.append(.pair(key, previous))
    }

    private func pairCompared(_ a: String, _ b: String, _ mutuallyExclusive: Bool) -> Bool {
        guard let result = comparedFragmentPairs[FragmentPair(a, b)] else { return false }
        return mutuallyExclusive ? true : result == mutuallyExclusive
    }

    // The two searches below walk chains of fragments with explicit stacks (a document may hold
    // thousands of fragments spreading each other); they visit exactly what graphql-js's
    // recursive versions visit, in the same order.

    private struct FragmentFrame {
        let name: String
        let refs: [String]
        var next = 0
    }

    /// graphql-js `collectConflictsBetweenFieldsAndFragment`.
    private func collectConflictsBetweenFieldsAndFragment(
        _ conflicts: inout [Conflict], _ mutuallyExclusive: Bool, _ fieldMap: FieldMap, _ fragmentName: String
    ) {
        func start(_ name: String) -> FragmentFrame? {
            guard !shouldStop, let fragment = context.fragment(name) else { return nil }
            let (fieldMap2, referenced) = referencedFieldsAndFragmentNames(fragment)
            if fieldMap === fieldMap2 { return nil }
            collectConflictsBetween(&conflicts, mutuallyExclusive, fieldMap, fieldMap2)
            return FragmentFrame(name: name, refs: referenced)
        }
        guard let root = start(fragmentName) else { return }
        var stack = [root]
        while let top = stack.last {
            if shouldStop { return }
            guard top.next < top.refs.count else { stack.removeLast(); continue }
            let ref = top.refs[top.next]
            stack[stack.count - 1].next += 1
            if pairCompared(ref, top.name, mutuallyExclusive) { continue }
            markCompared(ref, top.name, mutuallyExclusive)
            if let frame = start(ref) { stack.append(frame) }
        }
    }

    private struct FragmentPairFrame {
        let name1: String
        let name2: String
        let refs1: [String]
        let refs2: [String]
        var next1 = 0
        var next2 = 0
    }

    /// graphql-js `collectConflictsBetweenFragments`.
    private func collectConflictsBetweenFragments(
        _ conflicts: inout [Conflict], _ mutuallyExclusive: Bool, _ name1: String, _ name2: String
    ) {
        func start(_ name1: String, _ name2: String) -> FragmentPairFrame? {
            if name1 == name2 || shouldStop { return nil }
            if pairCompared(name1, name2, mutuallyExclusive) { return nil }
            markCompared(name1, name2, mutuallyExclusive)
            guard let f1 = context.fragment(name1), let f2 = context.fragment(name2) else { return nil }
            let (map1, refs1) = referencedFieldsAndFragmentNames(f1)
            let (map2, refs2) = referencedFieldsAndFragmentNames(f2)
            collectConflictsBetween(&conflicts, mutuallyExclusive, map1, map2)
            return FragmentPairFrame(name1: name1, name2: name2, refs1: refs1, refs2: refs2)
        }
        guard let root = start(name1, name2) else { return }
        var stack = [root]
        while let top = stack.last {
            if shouldStop { return }
            let pair: (String, String)
            if top.next2 < top.refs2.count {
                pair = (top.name1, top.refs2[top.next2])
                stack[stack.count - 1].next2 += 1
            } else if top.next1 < top.refs1.count {
                pair = (top.refs1[top.next1], top.name2)
                stack[stack.count - 1].next1 += 1
            } else {
                stack.removeLast()
                continue
            }
            if let frame = start(pair.0, pair.1) { stack.append(frame) }
        }
    }

    private func findConflictsBetweenSubSelectionSets(
        _ mutuallyExclusive: Bool, _ parent1: NamedTypeDef?, _ set1: SelectionSet,
        _ parent2: NamedTypeDef?, _ set2: SelectionSet
    ) -> [Conflict] {
        var conflicts: [Conflict] = []
        let (map1, names1) = fieldsAndFragmentNames(parent1, set1)
        let (map2, names2) = fieldsAndFragmentNames(parent2, set2)
        collectConflictsBetween(&conflicts, mutuallyExclusive, map1, map2)
        for name2 in names2 { collectConflictsBetweenFieldsAndFragment(&conflicts, mutuallyExclusive, map1, name2) }
        for name1 in names1 { collectConflictsBetweenFieldsAndFragment(&conflicts, mutuallyExclusive, map2, name1) }
        for name1 in names1 {
            for name2 in names2 { collectConflictsBetweenFragments(&conflicts, mutuallyExclusive, name1, name2) }
        }
        return conflicts
    }

    /// Shows that no two fields with the same response name anywhere in the selection set (its
    /// fields and those of every fragment it reaches) conflict, comparing one field per
    /// structural class. graphql-js's search compares a subset of those pairs, and whether a
    /// pair conflicts depends only on the pair's classes; so when no class pair conflicts, the
    /// search would find nothing. This makes `{ ...F1 ... ...F5000 }` linear instead of
    /// quadratic in the number of fragments. Returns false as soon as some pair conflicts.
    private func provablyConflictFree(_ fieldMap: FieldMap, _ fragmentNames: [String]) -> Bool {
        var keys: [String] = []
        var classes: [String: [(first: NodeAndDef, second: NodeAndDef?)]] = [:]
        var classIndex: [String: [Int: Int]] = [:]
        var count = 0
        var added: Set<ObjectIdentifier> = []
        func add(_ map: FieldMap) {
            guard added.insert(ObjectIdentifier(map)).inserted else { return }
            for key in map.keys {
                guard let fields = map.fields[key] else { continue }
                if classes[key] == nil { keys.append(key); classes[key] = []; classIndex[key] = [:] }
                for f in fields {
                    count += 1
                    let id = classID(f)
                    if let i = classIndex[key]?[id] {
                        if classes[key]?[i].second == nil { classes[key]?[i].second = f }
                    } else {
                        classIndex[key]?[id] = classes[key]?.count ?? 0
                        classes[key]?.append((f, nil))
                    }
                }
            }
        }
        add(fieldMap)
        var visited: Set<String> = []
        var queue = fragmentNames
        while let name = queue.popLast() {
            guard visited.insert(name).inserted, let fragment = context.fragment(name) else { continue }
            let (map, refs) = referencedFieldsAndFragmentNames(fragment)
            add(map)
            queue.append(contentsOf: refs)
        }
        spend(count)

        undoLog = []
        var proven = true
        search: for key in keys {
            guard let groups = classes[key] else { continue }
            for (a, group) in groups.enumerated() {
                if tooComplex { proven = false; break search }
                if let second = group.second, findConflict(false, key, group.first, second) != nil {
                    proven = false; break search
                }
                for other in groups[(a + 1)...] {
                    if tooComplex || findConflict(false, key, group.first, other.first) != nil {
                        proven = false; break search
                    }
                }
            }
        }
        let log = undoLog ?? []
        undoLog = nil
        if !proven {
            for change in log.reversed() {
                switch change {
                case .pair(let key, let previous): comparedFragmentPairs[key] = previous
                case .noConflict(let key): noConflict.remove(key)
                }
            }
        }
        return proven
    }

    private func collectConflictsWithin(_ conflicts: inout [Conflict], _ fieldMap: FieldMap) {
        spend(fieldMap.keys.count)
        for key in fieldMap.keys {
            guard let fields = fieldMap.fields[key], fields.count > 1 else { continue }
            if fields.count <= Self.exactGroupSize {
                for i in 0..<fields.count {
                    for j in (i + 1)..<fields.count {
                        if shouldStop { return }
                        if let c = findConflict(false, key, fields[i], fields[j]) { record(&conflicts, c) }
                    }
                }
            } else {
                let classes = representatives(fields)
                for (a, group) in classes.enumerated() {
                    if let second = group.second, !shouldStop,
                       let c = findConflict(false, key, group.first, second) { record(&conflicts, c) }
                    for other in classes[(a + 1)...] {
                        if shouldStop { return }
                        if let c = findConflict(false, key, group.first, other.first) { record(&conflicts, c) }
                    }
                }
            }
            if shouldStop { return }
        }
    }

    private func collectConflictsBetween(
        _ conflicts: inout [Conflict], _ mutuallyExclusive: Bool, _ map1: FieldMap, _ map2: FieldMap
    ) {
        spend(map1.keys.count)
        for key in map1.keys {
            guard let fields1 = map1.fields[key], let fields2 = map2.fields[key] else { continue }
            if fields1.count * fields2.count <= Self.exactGroupSize * Self.exactGroupSize {
                for f1 in fields1 {
                    for f2 in fields2 {
                        if shouldStop { return }
                        if let c = findConflict(mutuallyExclusive, key, f1, f2) { record(&conflicts, c) }
                    }
                }
            } else {
                let classes2 = representatives(fields2)
                for g1 in representatives(fields1) {
                    for g2 in classes2 {
                        if shouldStop { return }
                        if let c = findConflict(mutuallyExclusive, key, g1.first, g2.first) { record(&conflicts, c) }
                    }
                }
            }
            if shouldStop { return }
        }
    }

    private func record(_ conflicts: inout [Conflict], _ conflict: Conflict) {
        conflicts.append(conflict)
        // Only top-level conflicts become errors; nested ones are bounded by the work budget.
        if nesting == 0 { found += 1 }
    }

    /// The first (and second) field of each structural class, in order of first appearance.
    private func representatives(_ fields: [NodeAndDef]) -> [(first: NodeAndDef, second: NodeAndDef?)] {
        var index: [Int: Int] = [:]
        var groups: [(first: NodeAndDef, second: NodeAndDef?)] = []
        for f in fields {
            let id = classID(f)
            if let i = index[id] {
                if groups[i].second == nil { groups[i].second = f }
            } else {
                index[id] = groups.count
                groups.append((f, nil))
            }
        }
        return groups
    }

    private func findConflict(
        _ parentFieldsAreMutuallyExclusive: Bool, _ responseName: String, _ f1: NodeAndDef, _ f2: NodeAndDef
    ) -> Conflict? {
        let p1 = f1.parentType, p2 = f2.parentType
        let mutuallyExclusive = parentFieldsAreMutuallyExclusive
            || (p1?.name != p2?.name && p1?.kind == .object && p2?.kind == .object)
        let memoKey = ClassPair(a: classID(f1), b: classID(f2), mutuallyExclusive: mutuallyExclusive)
        if noConflict.contains(memoKey) { return nil }
        // The same two field structures met again below themselves: a fragment spreads itself
        // (NoFragmentCyclesRule reports it). Every conflict on that path is found by the
        // comparison already in progress, so the repeat adds nothing; going on would not end.
        guard comparing.insert(memoKey).inserted else { return nil }
        defer { comparing.remove(memoKey) }
        spend(1)
        let conflict = compare(mutuallyExclusive, responseName, f1, f2)
        if conflict == nil, noConflict.insert(memoKey).inserted { undoLog?.append(.noConflict(memoKey)) }
        return conflict
    }

    private func compare(_ mutuallyExclusive: Bool, _ responseName: String, _ f1: NodeAndDef, _ f2: NodeAndDef) -> Conflict? {
        let node1 = f1.node, node2 = f2.node
        if !mutuallyExclusive {
            let name1 = node1.name.value, name2 = node2.name.value
            if name1 != name2 {
                return Conflict(responseName: responseName, reason: .text("\"\(name1)\" and \"\(name2)\" are different fields"),
                                fields1: [node1], fields2: [node2])
            }
            if !sameArguments(node1, node2) {
                return Conflict(responseName: responseName, reason: .text("they have differing arguments"),
                                fields1: [node1], fields2: [node2])
            }
        }
        let type1 = f1.def?.type, type2 = f2.def?.type
        if let type1, let type2, typesConflict(type1, type2) {
            return Conflict(responseName: responseName,
                            reason: .text("they return conflicting types \"\(type1)\" and \"\(type2)\""),
                            fields1: [node1], fields2: [node2])
        }
        if let set1 = node1.selectionSet, let set2 = node2.selectionSet {
            nesting += 1
            defer { nesting -= 1 }
            let sub = findConflictsBetweenSubSelectionSets(
                mutuallyExclusive, type1.flatMap { schema.namedDef(of: $0) }, set1,
                type2.flatMap { schema.namedDef(of: $0) }, set2)
            guard !sub.isEmpty else { return nil }
            return Conflict(responseName: responseName,
                            reason: .subfields(sub.map { ($0.responseName, $0.reason) }),
                            fields1: [node1] + sub.flatMap(\.fields1), fields2: [node2] + sub.flatMap(\.fields2))
        }
        return nil
    }

    private func typesConflict(_ t1: TypeRef, _ t2: TypeRef) -> Bool {
        if case .list(let i1) = t1 {
            if case .list(let i2) = t2 { return typesConflict(i1, i2) }
            return true
        }
        if case .list = t2 { return true }
        if case .nonNull(let i1) = t1 {
            if case .nonNull(let i2) = t2 { return typesConflict(i1, i2) }
            return true
        }
        if case .nonNull = t2 { return true }
        let leaf1 = schema.namedDef(of: t1)?.kind.isLeaf ?? false
        let leaf2 = schema.namedDef(of: t2)?.kind.isLeaf ?? false
        if leaf1 || leaf2 { return t1.namedType != t2.namedType }
        return false
    }

    private func sameArguments(_ node1: Field, _ node2: Field) -> Bool {
        let args1 = node1.arguments, args2 = node2.arguments
        if args1.isEmpty { return args2.isEmpty }
        if args2.isEmpty || args1.count != args2.count { return false }
        return args1.allSatisfy { arg1 in
            guard let arg2 = args2.last(where: { $0.name.value == arg1.name.value }) else { return false }
            return canonicalText(arg1) == canonicalText(arg2)
        }
    }

    private func canonicalText(_ argument: Argument) -> String {
        let key = ObjectIdentifier(argument)
        if let text = canonicalArguments[key] { return text }
        let text = Self.canonical(argument.value)
        canonicalArguments[key] = text
        return text
    }

    /// A literal printed with object fields sorted (graphql-js `print(sortValueNode(value))`).
    static func canonical(_ value: Value) -> String {
        switch value {
        case .list(let items, _):
            return "[" + items.map(canonical).joined(separator: ", ") + "]"
        case .object(let fields, _):
            let sorted = fields.sorted { Suggestions.naturalCompare($0.name.value, $1.name.value) < 0 }
            return "{" + sorted.map { $0.name.value + ": " + canonical($0.value) }.joined(separator: ", ") + "}"
        default:
            return Printer.print(value)
        }
    }

    // MARK: Collecting fields

    private func fieldsAndFragmentNames(_ parentType: NamedTypeDef?, _ set: SelectionSet) -> (FieldMap, [String]) {
        let key = ObjectIdentifier(set)
        if let cached = cache[key] { return cached }
        let map = FieldMap()
        var names: [String] = []
        var seen: Set<String> = []
        collect(parentType, set, map, &names, &seen)
        let result = (map, names)
        cache[key] = result
        return result
    }

    private func referencedFieldsAndFragmentNames(_ fragment: FragmentDefinition) -> (FieldMap, [String]) {
        if let cached = cache[ObjectIdentifier(fragment.selectionSet)] { return cached }
        return fieldsAndFragmentNames(schema.type(fragment.typeCondition.name.value), fragment.selectionSet)
    }

    private func collect(_ parentType: NamedTypeDef?, _ set: SelectionSet, _ map: FieldMap,
                         _ names: inout [String], _ seen: inout Set<String>) {
        for selection in set.selections {
            switch selection {
            case .field(let field):
                var def: FieldDef?
                if let p = parentType, p.kind == .object || p.kind == .interface { def = p.field(field.name.value) }
                map.append(field.responseKey, NodeAndDef(parentType, field, def))
            case .fragmentSpread(let spread):
                if seen.insert(spread.name.value).inserted { names.append(spread.name.value) }
            case .inlineFragment(let inline):
                let type = inline.typeCondition.map { schema.type($0.name.value) } ?? parentType
                collect(type, inline.selectionSet, map, &names, &seen)
            }
        }
    }

    // MARK: Structural classes

    /// Equal for two fields exactly when every comparison treats them alike: same parent type,
    /// field name, arguments and (recursively) sub-selections.
    private func classID(_ f: NodeAndDef) -> Int {
        if let id = f.classID { return id }
        let key = (f.parentType?.name ?? "") + "#" + String(structureID(f.node))
        let id = intern(key)
        f.classID = id
        return id
    }

    private func structureID(_ field: Field) -> Int {
        let key = ObjectIdentifier(field)
        if let id = structureIDs[key] { return id }
        var text = field.name.value + "("
        for arg in field.arguments.sorted(by: { $0.name.value < $1.name.value }) {
            text += arg.name.value + ":" + canonicalText(arg) + ","
        }
        text += ")"
        if let set = field.selectionSet { text += "{" + selectionText(set) + "}" }
        let id = intern(text)
        structureIDs[key] = id
        return id
    }

    private func selectionText(_ set: SelectionSet) -> String {
        var text = ""
        for selection in set.selections {
            switch selection {
            case .field(let f): text += f.responseKey + "=" + String(structureID(f)) + " "
            case .fragmentSpread(let s): text += "..." + s.name.value + " "
            case .inlineFragment(let i):
                text += "...on " + (i.typeCondition?.name.value ?? "") + "{" + selectionText(i.selectionSet) + "} "
            }
        }
        return text
    }

    private func intern(_ key: String) -> Int {
        if let id = classIDs[key] { return id }
        let id = classIDs.count
        classIDs[key] = id
        return id
    }
}
