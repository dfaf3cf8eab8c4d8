/// Required Arguments (spec 5.4.2.1): every non-null argument without a default is given.
/// Checked when leaving the field or directive, so that deeper errors come first.
final class ProvidedRequiredArgumentsRule: ValidationRule {
    let hooks: Hooks = [.leaveField, .leaveDirective]
    private let context: ValidationContext
    /// Required arguments of each directive: (name, type as written).
    private var requiredDirectiveArgs: [String: [(String, String)]] = [:]

    init(_ context: ValidationContext) {
        self.context = context
        for d in context.schema.directives {
            requiredDirectiveArgs[d.name] = d.arguments.filter { $0.type.isNonNull && $0.defaultValue == nil }
                .map { ($0.name, $0.type.description) }
        }
        for case .typeSystem(.directive(_, let name, let args, _, _, _)) in context.document.definitions {
            requiredDirectiveArgs[name.value] = args.filter {
                if case .nonNull = $0.type { return $0.defaultValue == nil } else { return false }
            }.map { ($0.name.value, TypeRef($0.type).description) }
        }
    }

    func leave(_ node: Field) {
        guard let def = context.fieldDef else { return }
        for argDef in def.arguments where argDef.type.isNonNull && argDef.defaultValue == nil {
            if !node.arguments.contains(where: { $0.name.value == argDef.name }) {
                context.report(
                    "Field \"\(def.name)\" argument \"\(argDef.name)\" of type \"\(argDef.type)\" is required, but it was not provided.",
                    at: node.loc)
            }
        }
    }

    func leave(_ node: Directive) {
        let name = node.name.value
        guard let required = requiredDirectiveArgs[name] else { return }
        for (argName, typeText) in required where !node.arguments.contains(where: { $0.name.value == argName }) {
            context.report(
                "Directive \"@\(name)\" argument \"\(argName)\" of type \"\(typeText)\" is required, but it was not provided.",
                at: node.loc)
        }
    }
}
