import Testing
@testable import Schema

/// One schema error case: SDL, expected message, line and column (0, 0: no location).
struct SchemaErrorCase: Sendable, CustomTestStringConvertible {
    let sdl: String
    let message: String
    let line: Int
    let column: Int
    init(_ sdl: String, _ message: String, _ line: Int, _ column: Int) {
        self.sdl = sdl; self.message = message; self.line = line; self.column = column
    }
    var testDescription: String { sdl.debugDescription }
}

private func buildError(_ sdl: String) -> GraphQLError? {
    do {
        _ = try GraphQLSchema.build(sdl: sdl)
        return nil
    } catch {
        return error
    }
}

@Suite struct SchemaBuilderTests {
    static let errorCases: [SchemaErrorCase] = [
        SchemaErrorCase("type Query { a: }", "Syntax Error: Expected Name, found \"}\".", 1, 17),
        SchemaErrorCase("type Query { a: Foo }", "Unknown type \"Foo\".", 1, 17),
        SchemaErrorCase("type Query { a: [Foo!] }", "Unknown type \"Foo\".", 1, 18),
        SchemaErrorCase("type Query { a(x: Bar): Int }", "Unknown type \"Bar\".", 1, 19),
        SchemaErrorCase("type Query implements Node { a: Int }", "Unknown type \"Node\".", 1, 23),
        SchemaErrorCase("type Query { a: U } union U = Query | Nope", "Unknown type \"Nope\".", 1, 39),
        SchemaErrorCase("type Query { a: Int } input I { x: Nope }", "Unknown type \"Nope\".", 1, 36),
        SchemaErrorCase("type Query { a: Int } directive @d(x: Nope) on FIELD", "Unknown type \"Nope\".", 1, 39),
        SchemaErrorCase("type Query { a: Int } type Query { b: Int }", "There can be only one type named \"Query\".", 1, 28),
        SchemaErrorCase("type Query { a: Int a: String }", "Field \"Query.a\" can only be defined once.", 1, 21),
        SchemaErrorCase("type Query { a: Int } input I { x: Int x: Int }", "Field \"I.x\" can only be defined once.", 1, 40),
        SchemaErrorCase("type Query { a: E } enum E { A A }", "Enum value \"E.A\" can only be defined once.", 1, 32),
        SchemaErrorCase("type Query { a(x: Int, x: Int): Int }", "Argument \"Query.a(x:)\" can only be defined once.", 1, 24),
        SchemaErrorCase("type Query { a: Int } extend type Query { a: Int }", "Field \"Query.a\" can only be defined once.", 1, 43),
        SchemaErrorCase("type Query { a: Int } directive @d on FIELD directive @d on FIELD",
                        "There can be only one directive named \"@d\".", 1, 56),
        SchemaErrorCase("type Query { a: Int } extend type Foo { b: Int }",
                        "Cannot extend type \"Foo\" because it is not defined.", 1, 35),
        SchemaErrorCase("type Query { a: Int } enum E { A } extend type E { b: Int }",
                        "Cannot extend non-object type \"E\".", 1, 48),
        SchemaErrorCase("type Query { a: Int } extend input Query { b: Int }",
                        "Cannot extend non-input object type \"Query\".", 1, 36),
        SchemaErrorCase("type Query { a: Int } extend scalar String @specifiedBy(url: \"x\")",
                        "Cannot extend type \"String\" because it is not defined.", 1, 37),
        SchemaErrorCase("type Query { a: In } input In { x: Int }",
                        "The type of Query.a must be Output Type but got: In.", 1, 17),
        SchemaErrorCase("type Query { a(x: [Query]): Int }",
                        "The type of Query.a(x:) must be Input Type but got: [Query].", 1, 19),
        SchemaErrorCase("type Query { a: Int } input I { x: Query }",
                        "The type of I.x must be Input Type but got: Query.", 1, 36),
        SchemaErrorCase("type Query { a: U } union U = Query | E enum E { A }",
                        "Union type U can only include Object types, it cannot include E.", 1, 39),
        SchemaErrorCase("type Query { a: U } union U = Query | Query",
                        "Union type U can only include type Query once.", 1, 39),
        SchemaErrorCase("type Query implements Q2 { a: Int } type Q2 { a: Int }",
                        "Type Query must only implement Interface types, it cannot implement Q2.", 1, 23),
        SchemaErrorCase("type Query implements I & I { a: Int } interface I { a: Int }",
                        "Type Query can only implement I once.", 1, 27),
        SchemaErrorCase("type Query implements I { a: Int } interface I { b: Int }",
                        "Interface field I.b expected but Query does not provide it.", 1, 23),
        SchemaErrorCase("type Query implements I { a: Int } interface I { a: String }",
                        "Interface field I.a expects type String but Query.a is type Int.", 1, 23),
        SchemaErrorCase("type Query implements I { a: Int } interface I { a(x: Int): Int }",
                        "Interface field argument I.a(x:) expected but Query.a does not provide it.", 1, 23),
        SchemaErrorCase("type Query implements I { a(x: Int!): Int } interface I { a: Int }",
                        "Object field Query.a includes required argument x that is missing from the Interface field I.a.", 1, 23),
        SchemaErrorCase("type Query implements B { a: Int } interface A { a: Int } interface B implements A { a: Int }",
                        "Type Query must implement A because it is implemented by B.", 1, 23),
        SchemaErrorCase("type Foo { a: Int }", "Query root type must be provided.", 0, 0),
        SchemaErrorCase("schema { mutation: Foo } type Foo { a: Int }", "Query root type must be provided.", 0, 0),
        SchemaErrorCase("schema { query: Q } input Q { a: Int }",
                        "Query root type must be Object type, it cannot be Q.", 1, 17),
        SchemaErrorCase("schema { query: Query subscription: E } type Query { a: Int } enum E { A }",
                        "Subscription root type must be Object type if provided, it cannot be E.", 1, 37),
        SchemaErrorCase("schema { query: Nope }", "Unknown type \"Nope\".", 1, 17),
        SchemaErrorCase("schema { query: Query } schema { query: Query } type Query { a: Int }",
                        "Must provide only one schema definition.", 1, 25),
        SchemaErrorCase("schema { query: Query } type Query { a: Int } extend schema { query: Query }",
                        "Type for query already defined in the schema. It cannot be redefined.", 1, 70),
        SchemaErrorCase("type Query { a: Int } type __Foo { a: Int }",
                        "Name \"__Foo\" must not begin with \"__\", which is reserved by GraphQL introspection.", 1, 23),
        SchemaErrorCase("type Query { __a: Int }",
                        "Name \"__a\" must not begin with \"__\", which is reserved by GraphQL introspection.", 1, 14),
        SchemaErrorCase("type Query { a: Int @foo }", "Unknown directive \"@foo\".", 1, 21),
        SchemaErrorCase("type Query @deprecated { a: Int }", "Directive \"@deprecated\" may not be used on OBJECT.", 1, 12),
        SchemaErrorCase("type Query { a: Int @deprecated @deprecated }",
                        "The directive \"@deprecated\" can only be used once at this location.", 1, 33),
        SchemaErrorCase("type Query { a: Int @deprecated(why: \"x\") }",
                        "Unknown argument \"why\" on directive \"@deprecated\".", 1, 33),
        SchemaErrorCase("type Query { a: Int @deprecated(reason: 5) }", "Argument \"reason\" has invalid value 5.", 1, 41),
        SchemaErrorCase("type Query { a: S } scalar S @specifiedBy",
                        "Directive \"@specifiedBy\" argument \"url\" of type \"String!\" is required, but it was not provided.", 1, 30),
        SchemaErrorCase("type Query { a(x: Int! @deprecated): Int }",
                        "Required argument Query.a(x:) cannot be deprecated.", 1, 24),
        SchemaErrorCase("type Query { a: Int } { a }", "Executable definitions are not allowed in a schema document.", 1, 23),
        SchemaErrorCase("type Query", "Type Query must define one or more fields.", 1, 1),
        SchemaErrorCase("type Query { a: E } enum E", "Enum type E must define one or more values.", 1, 21),
        SchemaErrorCase("type Query { a: Int } input I", "Input Object type I must define one or more fields.", 1, 23),
        SchemaErrorCase("type Query { a: U } union U", "Union type U must define one or more member types.", 1, 21),
    ]

    @Test(arguments: errorCases)
    func schemaError(_ c: SchemaErrorCase) {
        let error = buildError(c.sdl)
        #expect(error?.message == c.message)
        let expected = c.line == 0 ? [] : [SourceLocation(line: c.line, column: c.column)]
        #expect(error?.locations == expected)
    }

    @Test func builtInScalarsAreAddedWhenReferenced() throws {
        let schema = try GraphQLSchema.build(sdl: "type Query { a: Int b: ID }")
        #expect(schema.typeNames == [
            "Query", "Int", "ID", "Boolean", "String", "__Schema", "__Type", "__TypeKind", "__Field",
            "__InputValue", "__EnumValue", "__Directive", "__DirectiveLocation",
        ])
        #expect(schema.type("Float") == nil)
        #expect(schema.type("Int")?.kind == .scalar)
        #expect(schema.type("Int")?.description
                == "The `Int` scalar type represents non-fractional signed whole numeric values. Int can represent values between -(2^31) and 2^31 - 1.")
        #expect(schema.type("Boolean")?.description == "The `Boolean` scalar type represents `true` or `false`.")
        #expect(schema.type("ID")?.description?.hasSuffix("input value will be accepted as an ID.") == true)
        let withFloat = try GraphQLSchema.build(sdl: "type Query { a: Float }")
        #expect(withFloat.type("Float")?.description
                == "The `Float` scalar type represents signed double-precision fractional values as specified by [IEEE 754](https://en.wikipedia.org/wiki/IEEE_floating_point).")
        // Redefining a standard scalar keeps the standard one (graphql-js).
        let redefined = try GraphQLSchema.build(sdl: "scalar String type Query { a: String }")
        #expect(redefined.typeNames.prefix(2) == ["String", "Query"])
        #expect(redefined.type("String")?.description?.hasPrefix("The `String` scalar type") == true)
    }

    @Test func specifiedDirectives() throws {
        let schema = try GraphQLSchema.build(sdl: "type Query { a: Int }")
        #expect(schema.directives.map(\.name) == ["include", "skip", "deprecated", "specifiedBy"])

        let include = try #require(schema.directive("include"))
        #expect(include.description == "Directs the executor to include this field or fragment only when the `if` argument is true.")
        #expect(include.locations == ["FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"])
        #expect(include.arguments.map(\.name) == ["if"])
        #expect(include.arguments[0].type == .nonNull(.named("Boolean")))
        #expect(include.arguments[0].description == "Included when true.")
        #expect(!include.isRepeatable)

        let skip = try #require(schema.directive("skip"))
        #expect(skip.description == "Directs the executor to skip this field or fragment when the `if` argument is true.")
        #expect(skip.arguments[0].description == "Skipped when true.")

        let deprecated = try #require(schema.directive("deprecated"))
        #expect(deprecated.description == "Marks an element of a GraphQL schema as no longer supported.")
        #expect(deprecated.locations == ["FIELD_DEFINITION", "ARGUMENT_DEFINITION", "INPUT_FIELD_DEFINITION", "ENUM_VALUE"])
        #expect(deprecated.arguments[0].type == .named("String"))
        #expect(canonical(deprecated.arguments[0].defaultValue) == "\"No longer supported\"")
        #expect(deprecated.arguments[0].description?.hasPrefix("Explains why this element was deprecated") == true)

        let specifiedBy = try #require(schema.directive("specifiedBy"))
        #expect(specifiedBy.description == "Exposes a URL that specifies the behavior of this scalar.")
        #expect(specifiedBy.locations == ["SCALAR"])
        #expect(specifiedBy.arguments[0].type == .nonNull(.named("String")))
        #expect(specifiedBy.arguments[0].description == "The URL that specifies the behavior of this scalar.")
    }

    @Test func introspectionTypes() throws {
        let schema = try GraphQLSchema.build(sdl: "type Query { a: Int }")
        func fields(_ name: String) -> [String] {
            schema.type(name)?.fields.map { f in
                let args = f.arguments.map { "\($0.name): \($0.type) = \(canonical($0.defaultValue))" }
                return f.name + (args.isEmpty ? "" : "(\(args.joined(separator: ", ")))") + ": \(f.type)"
            } ?? []
        }
        #expect(fields("__Schema") == [
            "description: String", "types: [__Type!]!", "queryType: __Type!", "mutationType: __Type",
            "subscriptionType: __Type", "directives: [__Directive!]!",
        ])
        #expect(fields("__Type") == [
            "kind: __TypeKind!", "name: String", "description: String", "specifiedByURL: String",
            "fields(includeDeprecated: Boolean = false): [__Field!]", "interfaces: [__Type!]",
            "possibleTypes: [__Type!]", "enumValues(includeDeprecated: Boolean = false): [__EnumValue!]",
            "inputFields(includeDeprecated: Boolean = false): [__InputValue!]", "ofType: __Type", "isOneOf: Boolean",
        ])
        #expect(fields("__Field") == [
            "name: String!", "description: String", "args(includeDeprecated: Boolean = false): [__InputValue!]!",
            "type: __Type!", "isDeprecated: Boolean!", "deprecationReason: String",
        ])
        #expect(fields("__InputValue") == [
            "name: String!", "description: String", "type: __Type!", "defaultValue: String",
            "isDeprecated: Boolean!", "deprecationReason: String",
        ])
        #expect(fields("__EnumValue") == ["name: String!", "description: String", "isDeprecated: Boolean!", "deprecationReason: String"])
        #expect(fields("__Directive") == [
            "name: String!", "description: String", "isRepeatable: Boolean!", "locations: [__DirectiveLocation!]!",
            "args(includeDeprecated: Boolean = false): [__InputValue!]!",
        ])
        #expect(schema.type("__TypeKind")?.enumValues.map(\.name)
                == ["SCALAR", "OBJECT", "INTERFACE", "UNION", "ENUM", "INPUT_OBJECT", "LIST", "NON_NULL"])
        #expect(schema.type("__TypeKind")?.enumValue("OBJECT")?.description
                == "Indicates this type is an object. `fields` and `interfaces` are valid fields.")
        #expect(schema.type("__DirectiveLocation")?.enumValues.count == 19)
        #expect(schema.type("__DirectiveLocation")?.enumValue("INPUT_FIELD_DEFINITION")?.description
                == "Location adjacent to an input object field definition.")
        #expect(schema.type("__Schema")?.description?.hasPrefix("A GraphQL Schema defines the capabilities") == true)
        #expect(schema.type("__Schema")?.field("subscriptionType")?.description
                == "If this server support subscription, the type that subscription operations will be rooted at.")
        #expect(schema.type("__Type")?.description?.contains("\n\nDepending on the kind of a type") == true)
        #expect(schema.type("__InputValue")?.field("defaultValue")?.description
                == "A GraphQL-formatted string representing the default value for this input value.")
        #expect(schema.type("__Directive")?.description?.hasSuffix("describing additional information to the executor.") == true)
    }

    @Test func descriptionsDeprecationAndSpecifiedBy() throws {
        let schema = try GraphQLSchema.build(sdl: #"""
            """The schema."""
            schema { query: Root }

            """
              Root type,
                indented.
            """
            type Root {
              "plain"
              a(
                "the x"
                x: Int = 1 @deprecated(reason: "use y")
                y: [String!] = ["s"]
              ): Int @deprecated
              b: Int @deprecated(reason: """block reason""")
              c: Int @deprecated(reason: null)
              d(i: In): E
              e: Date
            }
            enum E { A, B @deprecated(reason: "gone"), C @deprecated }
            input In { p: Int = 5 @deprecated, q: In }
            scalar Date @specifiedBy(url: "https://tools.ietf.org/html/rfc3339")
            """#)
        #expect(schema.description == "The schema.")
        #expect(schema.queryType == "Root")
        let root = try #require(schema.type("Root"))
        #expect(root.description == "Root type,\n  indented.")
        let a = try #require(root.field("a"))
        #expect(a.description == "plain")
        #expect(a.isDeprecated && a.deprecationReason == "No longer supported")
        #expect(a.arguments[0].description == "the x")
        #expect(a.arguments[0].isDeprecated && a.arguments[0].deprecationReason == "use y")
        #expect(canonical(a.arguments[0].defaultValue) == "1")
        #expect(canonical(a.arguments[1].defaultValue) == "[\"s\"]")
        #expect(!a.arguments[1].isDeprecated && a.arguments[1].deprecationReason == nil)
        #expect(root.field("b")?.deprecationReason == "block reason")
        #expect(root.field("c")?.isDeprecated == false)
        #expect(root.field("e")?.isDeprecated == false)
        let e = try #require(schema.type("E"))
        #expect(e.enumValues.map(\.isDeprecated) == [false, true, true])
        #expect(e.enumValues.map(\.deprecationReason) == [nil, "gone", "No longer supported"])
        let input = try #require(schema.type("In"))
        #expect(input.inputFields.map(\.name) == ["p", "q"])
        #expect(input.inputField("p")?.deprecationReason == "No longer supported")
        #expect(canonical(input.inputField("p")?.defaultValue) == "5")
        #expect(schema.type("Date")?.specifiedByURL == "https://tools.ietf.org/html/rfc3339")
        #expect(schema.type("Date")?.description == nil)
    }

    @Test func extensionsMerge() throws {
        let schema = try GraphQLSchema.build(sdl: """
            extend type Query { b: String }
            type Query { a: Int }
            extend type Query implements Node @deprecated2 { id: ID! name: String }
            interface Node { id: ID! }
            extend interface Node { name: String }
            type Thing implements Node { id: ID! name: String }
            extend type Query { c: Thing }
            union U = Thing
            extend union U = Query
            enum E { A }
            extend enum E { B }
            input I { x: Int }
            extend input I { y: E }
            scalar S
            extend scalar S @specifiedBy(url: "u")
            extend type Query { u: U e(arg: I): E s: S }
            directive @deprecated2 on OBJECT
            """)
        let query = try #require(schema.type("Query"))
        #expect(query.fields.map(\.name) == ["a", "b", "id", "name", "c", "u", "e", "s"])
        #expect(query.interfaces == ["Node"])
        #expect(schema.type("Node")?.fields.map(\.name) == ["id", "name"])
        #expect(schema.type("Node")?.possibleTypes == ["Query", "Thing"])
        #expect(schema.type("U")?.possibleTypes == ["Thing", "Query"])
        #expect(schema.type("E")?.enumValues.map(\.name) == ["A", "B"])
        #expect(schema.type("I")?.inputFields.map(\.name) == ["x", "y"])
        #expect(schema.type("S")?.specifiedByURL == "u")
        #expect(schema.directives.map(\.name) == ["deprecated2", "include", "skip", "deprecated", "specifiedBy"])
        #expect(schema.isSubType("Thing", of: "Node"))
        #expect(schema.isSubType("Query", of: "U"))
        #expect(!schema.isSubType("Thing", of: "Query"))
    }

    @Test func defaultRootTypesAndUserDirectives() throws {
        let schema = try GraphQLSchema.build(sdl: """
            "A key."
            directive @key(fields: String!, other: [Int] = [1, 2]) repeatable on OBJECT | INTERFACE
            type Query @key(fields: "a") @key(fields: "b") { a: Int }
            type Mutation { m: Int }
            type Subscription { s: Int }
            """)
        #expect(schema.queryType == "Query")
        #expect(schema.mutationType == "Mutation")
        #expect(schema.subscriptionType == "Subscription")
        let key = try #require(schema.directive("key"))
        #expect(key.description == "A key.")
        #expect(key.isRepeatable)
        #expect(key.locations == ["OBJECT", "INTERFACE"])
        #expect(key.arguments.map(\.name) == ["fields", "other"])
        #expect(canonical(key.arguments[1].defaultValue) == "[1,2]")
        #expect(schema.rootType(.mutation)?.name == "Mutation")

        // A schema definition names the roots; conventional names are then not used.
        let explicit = try GraphQLSchema.build(sdl: "schema { query: Q } type Q { a: Int } type Mutation { m: Int }")
        #expect(explicit.queryType == "Q")
        #expect(explicit.mutationType == nil)

        // A user definition of a specified directive replaces it.
        let replaced = try GraphQLSchema.build(sdl: "directive @skip(if: Int) on FIELD type Query { a: Int }")
        #expect(replaced.directives.map(\.name) == ["skip", "include", "deprecated", "specifiedBy"])
        #expect(replaced.directive("skip")?.arguments[0].type == .named("Int"))
    }

    @Test func builtSchemaAnswersModelQueries() throws {
        let schema = CatalogSchema.shared
        #expect(schema.fieldDef(parent: "Query", name: "__schema")?.type == .nonNull(.named("__Schema")))
        #expect(schema.fieldDef(parent: "Product", name: "__schema") == nil)
        #expect(schema.fieldDef(parent: "Product", name: "__typename")?.type == .nonNull(.named("String")))
        #expect(schema.fieldDef(parent: "Category", name: "products")?.arguments.map(\.name)
                == ["includeDescendants", "orderBy", "first", "after"])
        #expect(schema.possibleTypes("Product") == ["Product"])
        #expect(schema.type("ProductFilter")?.kind == .inputObject)
        #expect(schema.type("ProductOrder")?.enumValues.map(\.name) == ["CATALOG", "NAME", "NEWEST"])
    }
}
