/// Field Selections (spec 5.3.1): a selected field exists on the parent type. Suggests types
/// to fragment on (for abstract parents) or similarly named fields.
final class FieldsOnCorrectTypeRule: ValidationRule {
    let hooks: Hooks = [.enterField]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Field) -> VisitAction {
        guard let parent = context.parentType, context.fieldDef == nil else { return .proceed }
        let name = node.name.value
        var suggestion = Suggestions.didYouMean("to use an inline fragment on", suggestedTypeNames(parent, name))
        if suggestion.isEmpty {
            suggestion = Suggestions.didYouMean(suggestedFieldNames(parent, name))
        }
        context.report("Cannot query field \"\(name)\" on type \"\(parent.name)\"." + suggestion, at: node.loc)
        return .proceed
    }

    /// Possible types of an abstract parent (and their interfaces) that define the field, most
    /// referenced first, super types before sub types, then by name.
    private func suggestedTypeNames(_ type: NamedTypeDef, _ fieldName: String) -> [String] {
        guard type.kind.isAbstract else { return [] }
        let schema = context.schema
        var suggested: [NamedTypeDef] = []
        var usage: [String: Int] = [:]
        for possibleName in schema.possibleTypes(type.name) {
            guard let possible = schema.type(possibleName), possible.field(fieldName) != nil else { continue }
            if usage[possible.name] == nil { suggested.append(possible) }
            usage[possible.name] = 1
            for ifaceName in possible.interfaces {
                guard let iface = schema.type(ifaceName), iface.field(fieldName) != nil else { continue }
                if usage[iface.name] == nil { suggested.append(iface) }
                usage[iface.name, default: 0] += 1
            }
        }
        return suggested.sorted { a, b in
            let diff = (usage[b.name] ?? 0) - (usage[a.name] ?? 0)
            if diff != 0 { return diff < 0 }
            if a.kind == .interface && isSubType(b, of: a) { return true }
            if b.kind == .interface && isSubType(a, of: b) { return false }
            return Suggestions.naturalCompare(a.name, b.name) < 0
        }.map(\.name)
    }

    private func isSubType(_ sub: NamedTypeDef, of sup: NamedTypeDef) -> Bool {
        context.schema.isSubType(sub.name, of: sup.name) || sub.interfaces.contains(sup.name)
    }

    private func suggestedFieldNames(_ type: NamedTypeDef, _ fieldName: String) -> [String] {
        guard type.kind == .object || type.kind == .interface else { return [] }
        return Suggestions.list(fieldName, type.fields.map(\.name))
    }
}
