/// Directives Are Defined and Directives Are In Valid Locations (spec 5.7.1, 5.7.2).
final class KnownDirectivesRule: ValidationRule {
    let hooks: Hooks = [.enterDirective]
    private let context: ValidationContext
    private var locations: [String: Set<String>] = [:]

    init(_ context: ValidationContext) {
        self.context = context
        for d in context.schema.directives { locations[d.name] = Set(d.locations) }
        for case .typeSystem(.directive(_, let name, _, _, let locs, _)) in context.document.definitions {
            locations[name.value] = Set(locs.map(\.value))
        }
    }

    func enter(_ node: Directive, location: DirectiveLocationName) -> VisitAction {
        let name = node.name.value
        guard let allowed = locations[name] else {
            context.report("Unknown directive \"@\(name)\".", at: node.loc)
            return .proceed
        }
        if !allowed.contains(location.rawValue) {
            context.report("Directive \"@\(name)\" may not be used on \(location.rawValue).", at: node.loc)
        }
        return .proceed
    }
}
