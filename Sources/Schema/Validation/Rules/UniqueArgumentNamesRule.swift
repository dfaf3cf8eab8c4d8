/// Argument Uniqueness (spec 5.4.2).
final class UniqueArgumentNamesRule: ValidationRule {
    let hooks: Hooks = [.enterField, .enterDirective]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    private func check(_ arguments: [Argument]) {
        guard arguments.count > 1 else { return }
        var order: [String] = []
        var groups: [String: [Argument]] = [:]
        for arg in arguments {
            let name = arg.name.value
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(arg)
        }
        for name in order {
            guard let args = groups[name], args.count > 1 else { continue }
            context.report("There can be only one argument named \"\(name)\".", at: args.map(\.name.loc))
        }
    }

    func enter(_ node: Field) -> VisitAction { check(node.arguments); return .proceed }
    func enter(_ node: Directive, location: DirectiveLocationName) -> VisitAction {
        check(node.arguments)
        return .proceed
    }
}
