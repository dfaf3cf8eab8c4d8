/// Fragment Spread Type Existence and variable types (spec 5.5.1.2, 5.8.2): every named type
/// exists in the schema.
final class KnownTypeNamesRule: ValidationRule {
    let hooks: Hooks = [.enterNamedType]
    private let context: ValidationContext
    private let definedInDocument: Set<String>
    init(_ context: ValidationContext) {
        self.context = context
        var defined: Set<String> = []
        for case .typeSystem(let def) in context.document.definitions {
            switch def {
            case .scalar(_, let n, _, false, _), .object(_, let n, _, _, _, false, _),
                 .interface(_, let n, _, _, _, false, _), .union(_, let n, _, _, false, _),
                 .enumType(_, let n, _, _, false, _), .inputObject(_, let n, _, _, false, _):
                defined.insert(n.value)
            default: break
            }
        }
        definedInDocument = defined
    }

    private static let standardTypeNames = Introspection.scalarNames + Introspection.typeNames

    func enter(_ node: NamedType) -> VisitAction {
        let name = node.name.value
        if context.schema.type(name) == nil && !definedInDocument.contains(name) {
            // In type-system definitions the standard types always exist.
            let isSDL = context.isInTypeSystemDefinition
            if isSDL && Self.standardTypeNames.contains(name) { return .proceed }
            let candidates = (isSDL ? Self.standardTypeNames : []) + context.schema.typeNames + definedInDocument.sorted()
            context.report("Unknown type \"\(name)\"." + Suggestions.didYouMean(Suggestions.list(name, candidates)),
                           at: node.loc)
        }
        return .proceed
    }
}
