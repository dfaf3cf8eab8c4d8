/// Single root field (spec 5.2.3.1): a subscription selects exactly one top-level field, and
/// not an introspection field. Fields are collected as execution would, without variables.
final class SingleFieldSubscriptionsRule: ValidationRule {
    let hooks: Hooks = [.enterOperation]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        guard node.operation == .subscription, let subscriptionType = context.schema.rootType(.subscription)
        else { return .proceed }
        var collector = RootFieldCollector(context: context, runtimeType: subscriptionType.name)
        collector.collect(node.selectionSet)
        let label = node.name.map { "Subscription \"\($0.value)\"" } ?? "Anonymous Subscription"
        if collector.keys.count > 1 {
            let extra = collector.keys.dropFirst().flatMap { collector.fields[$0] ?? [] }
            context.report("\(label) must select only one top level field.", at: extra.map(\.loc))
        }
        for key in collector.keys {
            guard let fieldNodes = collector.fields[key], let first = fieldNodes.first else { continue }
            if first.name.value.hasPrefix("__") {
                context.report("\(label) must not select an introspection top level field.",
                               at: fieldNodes.map(\.loc))
            }
        }
        return .proceed
    }
}

/// graphql-js `collectFields` with no variable values: fields grouped by response key, in order.
private struct RootFieldCollector {
    let context: ValidationContext
    let runtimeType: String
    var keys: [String] = []
    var fields: [String: [Field]] = [:]
    var visitedFragments: Set<String> = []

    init(context: ValidationContext, runtimeType: String) {
        self.context = context
        self.runtimeType = runtimeType
    }

    /// Depth-first in document order, with an explicit stack (fragment chains can be long).
    mutating func collect(_ set: SelectionSet) {
        var toVisit: [ArraySlice<Selection>] = [set.selections[...]]
        while var selections = toVisit.popLast() {
            guard let selection = selections.popFirst() else { continue }
            toVisit.append(selections)
            switch selection {
            case .field(let field):
                guard Self.included(field.directives) else { continue }
                let key = field.responseKey
                if fields[key] == nil { keys.append(key); fields[key] = [field] } else { fields[key]?.append(field) }
            case .inlineFragment(let inline):
                guard Self.included(inline.directives), conditionMatches(inline.typeCondition) else { continue }
                toVisit.append(inline.selectionSet.selections[...])
            case .fragmentSpread(let spread):
                let name = spread.name.value
                guard !visitedFragments.contains(name), Self.included(spread.directives) else { continue }
                visitedFragments.insert(name)
                guard let fragment = context.fragment(name), conditionMatches(fragment.typeCondition) else { continue }
                toVisit.append(fragment.selectionSet.selections[...])
            }
        }
    }

    private func conditionMatches(_ condition: NamedType?) -> Bool {
        guard let condition else { return true }
        let name = condition.name.value
        if name == runtimeType { return true }
        guard let t = context.schema.type(name), t.kind.isAbstract else { return false }
        return context.schema.isSubType(runtimeType, of: name)
    }

    /// @skip(if: true) / @include(if: false) literals exclude; variables have no value here.
    private static func included(_ directives: [Directive]) -> Bool {
        for d in directives {
            guard let arg = d.arguments.first(where: { $0.name.value == "if" }),
                  case .boolean(let b, _) = arg.value else { continue }
            if d.name.value == "skip" && b { return false }
            if d.name.value == "include" && !b { return false }
        }
        return true
    }
}
