import Schema

/// A value a resolver produced, before completion against the field's type.
enum ResolvedValue {
    case null
    case string(String)
    /// An ID that is an integer: written as a JSON string of its digits, no String made.
    case id(Int64)
    /// A product column's trimmed text, written as a JSON string from the row's bytes.
    case rowText(ProductRow, column: Int)
    case int(Int)
    case bool(Bool)
    case enumName(String)
    case object(ObjectValue)
    case list([ResolvedValue])
    /// A field error for this one item: the field becomes null, the error is reported with its path.
    case error(GraphQLError)
    /// The field's finished JSON: a list of leaf objects the resolver serialised itself
    /// (CatalogResolver.leafList), complete with respect to the field's type, written as `[`,
    /// bytes `items` of `text`, `]`. The lists of one field share one text: no array per list.
    case jsonList(TextBuffer, items: Range<Int>)
    /// A leaf object the resolver serialised itself (CatalogResolver.manufacturersJSON),
    /// complete with respect to the field's type: bytes `bytes` of `text`, written as they are.
    case jsonValue(TextBuffer, bytes: Range<Int>)
}

/// The runtime objects of the catalog schema (and of introspection). Every payload is one
/// reference (a class, or a box for the `indirect` cases), so an ObjectValue is one pointer:
/// copying it is a retain, not a switch over payload layouts (objects are copied per field and
/// per level).
enum ObjectValue {
    case root
    indirect case catalogVersion(CatalogVersionValue)
    case category(CategoryNode)
    case product(ProductRow)
    case manufacturer(ManufacturerRef)
    case connection(ConnectionRef)
    indirect case edge(ProductRow, cursor: String)
    indirect case pageInfo(PageInfoValue)
    indirect case video(kind: String, url: String)
    /// `value` is the product's column `column` (trimmed).
    indirect case spec(key: String, label: String, row: ProductRow, column: Int)
    indirect case kitItem(KitRow)
    indirect case letterCount(letter: String, count: Int)
    indirect case changeSet(ChangeSet)
    case introSchema
    indirect case introType(TypeRef)
    indirect case introField(FieldDef)
    indirect case introInputValue(InputValueDef)
    indirect case introEnumValue(EnumValueDef)
    indirect case introDirective(DirectiveDef)
}

struct PageInfoValue {
    var hasNextPage: Bool
    var hasPreviousPage: Bool
    var startCursor: String?
    var endCursor: String?
}
