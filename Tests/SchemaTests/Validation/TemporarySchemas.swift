// TEMPORARY: a minimal SDL -> GraphQLSchema builder for the validation tests, used until
// SchemaBuilder (`GraphQLSchema.build(sdl:)`, `CatalogSchema.shared`) is merged from `parser`.
@testable import Schema

enum TemporarySchemas {
    static let introspectionSDL = #"""
directive @include(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT

directive @skip(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT

directive @deprecated(reason: String = "No longer supported") on FIELD_DEFINITION | ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION | ENUM_VALUE

directive @specifiedBy(url: String!) on SCALAR

type __Schema {
  description: String
  types: [__Type!]!
  queryType: __Type!
  mutationType: __Type
  subscriptionType: __Type
  directives: [__Directive!]!
}

type __Type {
  kind: __TypeKind!
  name: String
  description: String
  specifiedByURL: String
  fields(includeDeprecated: Boolean = false): [__Field!]
  interfaces: [__Type!]
  possibleTypes: [__Type!]
  enumValues(includeDeprecated: Boolean = false): [__EnumValue!]
  inputFields(includeDeprecated: Boolean = false): [__InputValue!]
  ofType: __Type
}

enum __TypeKind {
  SCALAR
  OBJECT
  INTERFACE
  UNION
  ENUM
  INPUT_OBJECT
  LIST
  NON_NULL
}

type __Field {
  name: String!
  description: String
  args(includeDeprecated: Boolean = false): [__InputValue!]!
  type: __Type!
  isDeprecated: Boolean!
  deprecationReason: String
}

type __InputValue {
  name: String!
  description: String
  type: __Type!
  defaultValue: String
  isDeprecated: Boolean!
  deprecationReason: String
}

type __EnumValue {
  name: String!
  description: String
  isDeprecated: Boolean!
  deprecationReason: String
}

type __Directive {
  name: String!
  description: String
  isRepeatable: Boolean!
  locations: [__DirectiveLocation!]!
  args(includeDeprecated: Boolean = false): [__InputValue!]!
}

enum __DirectiveLocation {
  QUERY
  MUTATION
  SUBSCRIPTION
  FIELD
  FRAGMENT_DEFINITION
  FRAGMENT_SPREAD
  INLINE_FRAGMENT
  VARIABLE_DEFINITION
  SCHEMA
  SCALAR
  OBJECT
  FIELD_DEFINITION
  ARGUMENT_DEFINITION
  INTERFACE
  UNION
  ENUM
  ENUM_VALUE
  INPUT_OBJECT
  INPUT_FIELD_DEFINITION
}
"""#

    static let catalog: GraphQLSchema = build(contractSDL)

    static let contractSDL: String = {
        // The contract, as in /work/shared/contract/schema.graphql.
        #"""
# The API contract for the catalog queries: the project writes its own schema.graphql to match it.
# Field semantics: SEMANTICS.md beside this file. Database schema: radiant-schema.sql.

schema {
  query: Query
  subscription: Subscription
}

type Query {
  catalogVersion: CatalogVersion!
  categories: [Category!]!
  category(id: ID!): Category
  product(id: ID!): Product
  products(filter: ProductFilter, orderBy: ProductOrder = CATALOG, first: Int = 50, after: String): ProductConnection!
  search(text: String!, first: Int = 50, after: String): ProductConnection!
  alphabet: [LetterCount!]!
  manufacturers: [Manufacturer!]!
}

type Subscription {
  catalogVersion: CatalogVersion!
}

input ProductFilter {
  categoryId: ID
  includeDescendants: Boolean = false
  manufacturer: String
  sku: String
  letter: String
}

enum ProductOrder {
  CATALOG
  NAME
  NEWEST
}

type CatalogVersion {
  version: Int!
  catalogRow: Int
  assetRow: Int
}

type Category {
  id: ID!
  title: String!
  icon: String
  level: Int
  parent: Category
  children: [Category!]!
  path: [Category!]!
  productCount(includeDescendants: Boolean = false): Int!
  products(includeDescendants: Boolean = false, orderBy: ProductOrder = CATALOG, first: Int = 50, after: String): ProductConnection!
}

type Product {
  id: ID!
  sku: String!
  name: String!
  manufacturer: Manufacturer
  category: Category
  displayOrder: Int
  thumbnail: String
  images: [String!]!
  videos: [Video!]!
  panoramaUrl: String
  description: String
  specs: [Spec!]!
  kit: [KitItem!]!
}

enum VideoKind {
  BRACKET
  DYNAMIC_RANGE
  COLOR_RENDITION
  PROMO
  GREEN_SCREEN
}

type Video {
  kind: VideoKind!
  url: String!
}

type Spec {
  key: String!
  label: String!
  value: String!
}

type KitItem {
  id: ID!
  name: String!
  quantity: Int!
}

type Manufacturer {
  name: String!
  logo: String
  productCount: Int!
  products(orderBy: ProductOrder = CATALOG, first: Int = 50, after: String): ProductConnection!
}

type LetterCount {
  letter: String!
  count: Int!
}

type ProductConnection {
  totalCount: Int!
  nodes: [Product!]!
  edges: [ProductEdge!]!
  pageInfo: PageInfo!
}

type ProductEdge {
  cursor: String!
  node: Product!
}

type PageInfo {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
  endCursor: String
}
"""#
    }()

    static func build(_ sdl: String) -> GraphQLSchema {
        guard let doc = try? Parser.parse(Source(sdl + "\n" + introspectionSDL + "\nscalar String scalar Int scalar Float scalar Boolean scalar ID")) else {
            preconditionFailure("bad test SDL")
        }
        var types: [NamedTypeDef] = []
        var directives: [DirectiveDef] = []
        var query = "Query", subscription: String? = nil, mutation: String? = nil
        var implementations: [String: [String]] = [:]
        var unions: [String: [String]] = [:]
        for case .typeSystem(let def) in doc.definitions {
            switch def {
            case .object(_, let n, let ifaces, _, _, _, _), .interface(_, let n, let ifaces, _, _, _, _):
                for i in ifaces { implementations[i.name.value, default: []].append(n.value) }
            case .union(_, let n, _, let members, _, _):
                unions[n.value] = members.map(\.name.value)
            default: break
            }
        }
        func args(_ a: [InputValueDefinition]) -> [InputValueDef] {
            a.map { InputValueDef(name: $0.name.value, description: nil, type: TypeRef($0.type), defaultValue: $0.defaultValue) }
        }
        func fields(_ f: [FieldDefinition]) -> [FieldDef] {
            f.map { FieldDef(name: $0.name.value, description: nil, arguments: args($0.arguments), type: TypeRef($0.type)) }
        }
        var hasSchema = false
        for case .typeSystem(let def) in doc.definitions {
            switch def {
            case .schema(_, _, let ops, _, _):
                hasSchema = true
                for op in ops {
                    switch op.operation {
                    case .query: query = op.type.name.value
                    case .mutation: mutation = op.type.name.value
                    case .subscription: subscription = op.type.name.value
                    }
                }
            case .scalar(_, let n, _, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .scalar, description: nil))
            case .object(_, let n, let ifaces, _, let f, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .object, description: nil, fields: fields(f),
                                          interfaces: ifaces.map(\.name.value)))
            case .interface(_, let n, let ifaces, _, let f, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .interface, description: nil, fields: fields(f),
                                          interfaces: ifaces.map(\.name.value),
                                          possibleTypes: implementations[n.value] ?? []))
            case .union(_, let n, _, let members, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .union, description: nil,
                                          possibleTypes: members.map(\.name.value)))
            case .enumType(_, let n, _, let values, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .enumType, description: nil,
                                          enumValues: values.map { EnumValueDef(name: $0.name.value, description: nil) }))
            case .inputObject(_, let n, _, let f, _, _):
                types.append(NamedTypeDef(name: n.value, kind: .inputObject, description: nil, inputFields: args(f)))
            case .directive(_, let n, let a, let repeatable, let locs, _):
                directives.append(DirectiveDef(name: n.value, description: nil, locations: locs.map(\.value),
                                               arguments: args(a), isRepeatable: repeatable))
            }
        }
        if !hasSchema, types.contains(where: { $0.name == "Subscription" }) { subscription = "Subscription" }
        return GraphQLSchema(description: nil, types: types, queryType: query, mutationType: mutation,
                             subscriptionType: subscription, directives: directives)
    }
}
