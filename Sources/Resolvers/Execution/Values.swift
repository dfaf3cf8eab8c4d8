import Schema

/// A value a resolver produced, before completion against the field's type.
enum ResolvedValue {
    case null
    case string(String)
    case int(Int)
    case bool(Bool)
    case enumName(String)
    case object(ObjectValue)
    case list([ResolvedValue])
    /// A field error for this one item: the field becomes null, the error is reported with its path.
    case error(GraphQLError)
}

/// The runtime objects of the catalog schema (and of introspection).
enum ObjectValue {
    case root
    case catalogVersion(CatalogVersionValue)
    case category(CategoryNode)
    case product(ProductRow)
    case manufacturer(ManufacturerRef)
    case connection(ConnectionRef)
    case edge(ProductRow, cursor: String)
    case pageInfo(PageInfoValue)
    case video(kind: String, url: String)
    case spec(key: String, label: String, value: String)
    case kitItem(KitRow)
    case letterCount(letter: String, count: Int)
    case changeSet(ChangeSet)
    case introSchema
    case introType(TypeRef)
    case introField(FieldDef)
    case introInputValue(InputValueDef)
    case introEnumValue(EnumValueDef)
    case introDirective(DirectiveDef)
}

struct PageInfoValue {
    var hasNextPage: Bool
    var hasPreviousPage: Bool
    var startCursor: String?
    var endCursor: String?
}
