/// Argument Names (spec 5.4.1): every argument is defined by its field or directive.
final class KnownArgumentNamesRule: ValidationRule {
    let hooks: Hooks = [.enterDirective, .enterArgument]
    private let context: ValidationContext
    private var directiveArgs: [String: [String]] = [:]

    init(_ context: ValidationContext) {
        self.context = context
        for d in context.schema.directives { directiveArgs[d.name] = d.arguments.map(\.name) }
        for case .typeSystem(.directive(_, let name, let args, _, _, _)) in context.document.definitions {
            directiveArgs[name.value] = args.map(\.name.value)
        }
    }

    func enter(_ node: Directive, location: DirectiveLocationName) -> VisitAction {
        let name = node.name.value
        if let known = directiveArgs[name] {
            for arg in node.arguments where !known.contains(arg.name.value) {
                context.report(
                    "Unknown argument \"\(arg.name.value)\" on directive \"@\(name)\"."
                        + Suggestions.didYouMean(Suggestions.list(arg.name.value, known)),
                    at: arg.loc)
            }
        }
        // Directive arguments are done; the Argument callback below is for field arguments.
        return .skip
    }

    func enter(_ node: Argument) -> VisitAction {
        if context.argument == nil, let fieldDef = context.fieldDef, let parent = context.parentType {
            let name = node.name.value
            context.report(
                "Unknown argument \"\(name)\" on field \"\(parent.name).\(fieldDef.name)\"."
                    + Suggestions.didYouMean(Suggestions.list(name, fieldDef.arguments.map(\.name))),
                at: node.loc)
        }
        return .proceed
    }
}
