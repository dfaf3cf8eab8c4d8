/// All Variable Usages Are Allowed (spec 5.8.5): a variable's type fits every position it is
/// used in (a nullable variable may fill a non-null position that has a default, or when the
/// variable has a non-null default).
final class VariablesInAllowedPositionRule: ValidationRule {
    let hooks: Hooks = [.enterOperation, .enterVariableDefinition, .leaveOperation]
    private let context: ValidationContext
    private var definitions: [String: VariableDefinition] = [:]
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        definitions = [:]
        return .proceed
    }

    func enter(_ node: VariableDefinition) -> VisitAction {
        definitions[node.variable.name.value] = node
        return .proceed
    }

    func leave(_ node: OperationDefinition) {
        let schema = context.schema
        for usage in context.recursiveVariableUsages(node) {
            let name = usage.node.name.value
            guard let def = definitions[name], let locationType = usage.type else { continue }
            let varType = TypeRef(def.type)
            // graphql-js typeFromAST: unknown named types give no type.
            guard schema.type(varType.namedType) != nil else { continue }
            if !allowed(varType, def.defaultValue, locationType, usage.hasLocationDefault) {
                context.report(
                    "Variable \"$\(name)\" of type \"\(varType)\" used in position expecting type \"\(locationType)\".",
                    at: [def.loc, usage.node.loc])
            }
        }
    }

    private func allowed(_ varType: TypeRef, _ varDefault: Value?, _ locationType: TypeRef, _ locationHasDefault: Bool) -> Bool {
        if case .nonNull(let nullableLocation) = locationType, !varType.isNonNull {
            var hasNonNullVariableDefault = false
            if let d = varDefault {
                if case .null = d {} else { hasNonNullVariableDefault = true }
            }
            if !hasNonNullVariableDefault && !locationHasDefault { return false }
            return context.schema.isTypeSubType(varType, of: nullableLocation)
        }
        return context.schema.isTypeSubType(varType, of: locationType)
    }
}
