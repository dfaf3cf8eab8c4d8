/// Fragments must not form cycles (spec 5.5.2.2). A depth-first search over spreads, each
/// fragment entered once; every cycle found is reported with the spreads along it. Iterative,
/// so that a long chain of fragments cannot exhaust the stack.
final class NoFragmentCyclesRule: ValidationRule {
    let hooks: Hooks = [.enterFragmentDefinition]
    private let context: ValidationContext
    private var visited: Set<String> = []
    /// Spreads from the fragment where the search started to the current one.
    private var spreadPath: [FragmentSpread] = []
    /// Position in spreadPath of each fragment on the current path.
    private var pathIndex: [String: Int] = [:]

    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: FragmentDefinition) -> VisitAction {
        detectCycles(from: node)
        return .proceed
    }

    private struct Frame {
        let name: String
        let spreads: [FragmentSpread]
        var next = 0
    }

    private func start(_ fragment: FragmentDefinition) -> Frame? {
        let name = fragment.name.value
        guard visited.insert(name).inserted else { return nil }
        let spreads = context.fragmentSpreads(fragment.selectionSet)
        if spreads.isEmpty { return nil }
        pathIndex[name] = spreadPath.count
        return Frame(name: name, spreads: spreads)
    }

    private func detectCycles(from root: FragmentDefinition) {
        guard let rootFrame = start(root) else { return }
        var stack = [rootFrame]
        while let top = stack.last {
            if context.isAborted { return }
            if top.next == top.spreads.count {
                pathIndex[top.name] = nil
                stack.removeLast()
                if !stack.isEmpty { spreadPath.removeLast() }
                continue
            }
            let spread = top.spreads[top.next]
            stack[stack.count - 1].next += 1
            let spreadName = spread.name.value
            spreadPath.append(spread)
            if let cycleIndex = pathIndex[spreadName] {
                let cycle = spreadPath[cycleIndex...]
                let via = cycle.dropLast().map { "\"\($0.name.value)\"" }.joined(separator: ", ")
                context.report("Cannot spread fragment \"\(spreadName)\" within itself" + (via.isEmpty ? "." : " via \(via)."),
                               at: cycle.map(\.loc))
                spreadPath.removeLast()
            } else if let fragment = context.fragment(spreadName), let frame = start(fragment) {
                stack.append(frame)
            } else {
                spreadPath.removeLast()
            }
        }
    }
}
