import ArgumentParser

struct CatalogGatewayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog-gateway",
        abstract: "Serve a Radiant equipment-rental catalog (SQLite) as a live GraphQL API.",
        subcommands: [ServeCommand.self])
}

CatalogGatewayCommand.main()
