// The recursive-descent parser, after graphql-js 16 `src/language/parser.ts`. Each method
// carries the grammar production it parses (GraphQL spec, October 2021). It reads executable
// documents and type-system definitions and extensions, and guards against hostile input: a
// document may hold at most `maxTokens` tokens and nest brackets (selection sets, list and
// object values, list types) at most `maxDepth` deep, so no input can exhaust the stack.

public enum Parser {
    /// Parses a whole document (executable and/or type-system definitions).
    public static func parse(_ source: Source, maxDepth: Int = 200, maxTokens: Int = 50_000)
        throws(GraphQLSyntaxError) -> Document
    {
        var parser = DocumentParser(source, maxDepth: maxDepth, maxTokens: maxTokens)
        return try parser.parseDocument()
    }

    /// Parses a document from text (source name "GraphQL request").
    public static func parse(_ text: String, maxDepth: Int = 200, maxTokens: Int = 50_000)
        throws(GraphQLSyntaxError) -> Document
    {
        try parse(Source(text), maxDepth: maxDepth, maxTokens: maxTokens)
    }

    /// Parses a single value literal, e.g. `[1, 2]` or `{a: $var}` (graphql-js `parseValue`).
    public static func parseValue(_ source: Source, maxDepth: Int = 200, maxTokens: Int = 50_000)
        throws(GraphQLSyntaxError) -> Value
    {
        var parser = DocumentParser(source, maxDepth: maxDepth, maxTokens: maxTokens)
        try parser.expectToken(.sof)
        let value = try parser.parseValueLiteral(isConst: false)
        try parser.expectToken(.eof)
        return value
    }

    /// Parses a single type reference, e.g. `[Int!]!` (graphql-js `parseType`).
    public static func parseType(_ source: Source, maxDepth: Int = 200, maxTokens: Int = 50_000)
        throws(GraphQLSyntaxError) -> TypeNode
    {
        var parser = DocumentParser(source, maxDepth: maxDepth, maxTokens: maxTokens)
        try parser.expectToken(.sof)
        let type = try parser.parseTypeReference()
        try parser.expectToken(.eof)
        return type
    }
}

/// The parser's state: the lexer, the token count and the current nesting depth.
struct DocumentParser {
    private var lexer: Lexer
    private let maxDepth: Int
    private let maxTokens: Int
    private var tokenCount = 0
    private var depth = 0

    init(_ source: Source, maxDepth: Int, maxTokens: Int) {
        self.lexer = Lexer(source)
        self.maxDepth = maxDepth
        self.maxTokens = maxTokens
    }

    private var source: Source { lexer.source }
    private var token: Token { lexer.token }

    // MARK: Document

    // Document : Definition+
    mutating func parseDocument() throws(GraphQLSyntaxError) -> Document {
        let definitions = try many(.sof, .eof) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseDefinition() }
        return Document(definitions: definitions, loc: Location(start: 0, end: source.body.count), source: source)
    }

    // Definition :
    //   - ExecutableDefinition
    //   - TypeSystemDefinitionOrExtension
    //
    // ExecutableDefinition :
    //   - OperationDefinition
    //   - FragmentDefinition
    //
    // TypeSystemDefinition :
    //   - SchemaDefinition
    //   - TypeDefinition
    //   - DirectiveDefinition
    //
    // TypeDefinition :
    //   - ScalarTypeDefinition
    //   - ObjectTypeDefinition
    //   - InterfaceTypeDefinition
    //   - UnionTypeDefinition
    //   - EnumTypeDefinition
    //   - InputObjectTypeDefinition
    private mutating func parseDefinition() throws(GraphQLSyntaxError) -> Definition {
        if peek(.braceL) {
            return .operation(try parseOperationDefinition())
        }
        // Many definitions begin with a description and require a lookahead.
        let hasDescription = peekDescription()
        let keywordToken = hasDescription ? try lexer.lookahead() : token

        if keywordToken.kind == .name, let keyword = keywordToken.value {
            switch keyword {
            case "schema": return .typeSystem(try parseSchemaDefinition())
            case "scalar": return .typeSystem(try parseScalarTypeDefinition())
            case "type": return .typeSystem(try parseObjectTypeDefinition())
            case "interface": return .typeSystem(try parseInterfaceTypeDefinition())
            case "union": return .typeSystem(try parseUnionTypeDefinition())
            case "enum": return .typeSystem(try parseEnumTypeDefinition())
            case "input": return .typeSystem(try parseInputObjectTypeDefinition())
            case "directive": return .typeSystem(try parseDirectiveDefinition())
            default: break
            }
            if hasDescription {
                throw syntaxError(token.start,
                                  "Unexpected description, descriptions are supported only on type definitions.")
            }
            switch keyword {
            case "query", "mutation", "subscription": return .operation(try parseOperationDefinition())
            case "fragment": return .fragment(try parseFragmentDefinition())
            case "extend": return .typeSystem(try parseTypeSystemExtension())
            default: break
            }
        }
        throw unexpected(keywordToken)
    }

    // MARK: Operations

    // OperationDefinition :
    //  - SelectionSet
    //  - OperationType Name? VariableDefinitions? Directives? SelectionSet
    private mutating func parseOperationDefinition() throws(GraphQLSyntaxError) -> OperationDefinition {
        let start = token
        if peek(.braceL) {
            let selectionSet = try parseSelectionSet()
            return OperationDefinition(operation: .query, name: nil, variableDefinitions: [], directives: [],
                                       selectionSet: selectionSet, loc: loc(start))
        }
        let operation = try parseOperationType()
        let name = peek(.name) ? try parseName() : nil
        let variableDefinitions = try parseVariableDefinitions()
        let directives = try parseDirectives(isConst: false)
        let selectionSet = try parseSelectionSet()
        return OperationDefinition(operation: operation, name: name, variableDefinitions: variableDefinitions,
                                   directives: directives, selectionSet: selectionSet, loc: loc(start))
    }

    // OperationType : one of query mutation subscription
    private mutating func parseOperationType() throws(GraphQLSyntaxError) -> OperationType {
        let operationToken = try expectToken(.name)
        switch operationToken.value {
        case "query": return .query
        case "mutation": return .mutation
        case "subscription": return .subscription
        default: throw unexpected(operationToken)
        }
    }

    // VariableDefinitions : ( VariableDefinition+ )
    @inline(never)
    private mutating func parseVariableDefinitions() throws(GraphQLSyntaxError) -> [VariableDefinition] {
        try optionalMany(.parenL, .parenR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseVariableDefinition() }
    }

    // VariableDefinition : Variable : Type DefaultValue? Directives[Const]?
    private mutating func parseVariableDefinition() throws(GraphQLSyntaxError) -> VariableDefinition {
        let start = token
        let variable = try parseVariable()
        try expectToken(.colon)
        let type = try parseTypeReference()
        let defaultValue = try expectOptionalToken(.equals) ? try parseValueLiteral(isConst: true) : nil
        let directives = try parseDirectives(isConst: true)
        return VariableDefinition(variable: variable, type: type, defaultValue: defaultValue,
                                  directives: directives, loc: loc(start))
    }

    // Variable : $ Name
    @inline(never)
    private mutating func parseVariable() throws(GraphQLSyntaxError) -> Variable {
        let start = token
        try expectToken(.dollar)
        let name = try parseName()
        return Variable(name: name, loc: loc(start))
    }

    // SelectionSet : { Selection+ }
    private mutating func parseSelectionSet() throws(GraphQLSyntaxError) -> SelectionSet {
        let start = token
        try enterNesting()
        defer { depth -= 1 }
        let selections = try many(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseSelection() }
        return SelectionSet(selections: selections, loc: loc(start))
    }

    // Selection :
    //   - Field
    //   - FragmentSpread
    //   - InlineFragment
    private mutating func parseSelection() throws(GraphQLSyntaxError) -> Selection {
        peek(.spread) ? try parseFragment() : .field(try parseField())
    }

    // Field : Alias? Name Arguments? Directives? SelectionSet?
    // Alias : Name :
    private mutating func parseField() throws(GraphQLSyntaxError) -> Field {
        let start = token
        let nameOrAlias = try parseName()
        let alias: Name?
        let name: Name
        if try expectOptionalToken(.colon) {
            alias = nameOrAlias
            name = try parseName()
        } else {
            alias = nil
            name = nameOrAlias
        }
        let arguments = try parseArguments(isConst: false)
        let directives = try parseDirectives(isConst: false)
        let selectionSet = peek(.braceL) ? try parseSelectionSet() : nil
        return Field(alias: alias, name: name, arguments: arguments, directives: directives,
                     selectionSet: selectionSet, loc: loc(start))
    }

    // Arguments[Const] : ( Argument[?Const]+ )
    @inline(never)
    private mutating func parseArguments(isConst: Bool) throws(GraphQLSyntaxError) -> [Argument] {
        try optionalMany(.parenL, .parenR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseArgument(isConst: isConst) }
    }

    // Argument[Const] : Name : Value[?Const]
    private mutating func parseArgument(isConst: Bool) throws(GraphQLSyntaxError) -> Argument {
        let start = token
        let name = try parseName()
        try expectToken(.colon)
        let value = try parseValueLiteral(isConst: isConst)
        return Argument(name: name, value: value, loc: loc(start))
    }

    // MARK: Fragments

    // Corresponds to both FragmentSpread and InlineFragment in the spec.
    //
    // FragmentSpread : ... FragmentName Directives?
    // InlineFragment : ... TypeCondition? Directives? SelectionSet
    private mutating func parseFragment() throws(GraphQLSyntaxError) -> Selection {
        let start = token
        try expectToken(.spread)
        let hasTypeCondition = try expectOptionalKeyword("on")
        if !hasTypeCondition && peek(.name) {
            let name = try parseFragmentName()
            let directives = try parseDirectives(isConst: false)
            return .fragmentSpread(FragmentSpread(name: name, directives: directives, loc: loc(start)))
        }
        let typeCondition = hasTypeCondition ? try parseNamedType() : nil
        let directives = try parseDirectives(isConst: false)
        let selectionSet = try parseSelectionSet()
        return .inlineFragment(InlineFragment(typeCondition: typeCondition, directives: directives,
                                              selectionSet: selectionSet, loc: loc(start)))
    }

    // FragmentDefinition : fragment FragmentName TypeCondition Directives? SelectionSet
    // TypeCondition : on NamedType
    private mutating func parseFragmentDefinition() throws(GraphQLSyntaxError) -> FragmentDefinition {
        let start = token
        try expectKeyword("fragment")
        let name = try parseFragmentName()
        try expectKeyword("on")
        let typeCondition = try parseNamedType()
        let directives = try parseDirectives(isConst: false)
        let selectionSet = try parseSelectionSet()
        return FragmentDefinition(name: name, typeCondition: typeCondition, directives: directives,
                                  selectionSet: selectionSet, loc: loc(start))
    }

    // FragmentName : Name but not `on`
    @inline(never)
    private mutating func parseFragmentName() throws(GraphQLSyntaxError) -> Name {
        if token.kind == .name && token.value == "on" { throw unexpected() }
        return try parseName()
    }

    // MARK: Values

    // Value[Const] :
    //   - [~Const] Variable
    //   - IntValue
    //   - FloatValue
    //   - StringValue
    //   - BooleanValue
    //   - NullValue
    //   - EnumValue
    //   - ListValue[?Const]
    //   - ObjectValue[?Const]
    //
    // BooleanValue : one of `true` `false`
    // NullValue : `null`
    // EnumValue : Name but not `true`, `false` or `null`
    mutating func parseValueLiteral(isConst: Bool) throws(GraphQLSyntaxError) -> Value {
        let start = token
        switch start.kind {
        case .bracketL:
            return try parseList(isConst: isConst)
        case .braceL:
            return try parseObject(isConst: isConst)
        case .int:
            try advanceLexer()
            return .int(start.value ?? "", start.loc)
        case .float:
            try advanceLexer()
            return .float(start.value ?? "", start.loc)
        case .string, .blockString:
            return try parseStringLiteral()
        case .name:
            try advanceLexer()
            switch start.value {
            case "true": return .boolean(true, start.loc)
            case "false": return .boolean(false, start.loc)
            case "null": return .null(start.loc)
            default: return .enumValue(start.value ?? "", start.loc)
            }
        case .dollar:
            if isConst { throw try variableInConstantValue() }
            return .variable(try parseVariable())
        default:
            throw unexpected()
        }
    }

    /// The error for `$` where a constant value is expected.
    @inline(never)
    private mutating func variableInConstantValue() throws(GraphQLSyntaxError) -> GraphQLSyntaxError {
        let start = token
        try expectToken(.dollar)
        if token.kind == .name, let name = token.value {
            return syntaxError(start.start, "Unexpected variable \"$\(name)\" in constant value.")
        }
        return unexpected(start)
    }

    // StringValue
    @inline(never)
    private mutating func parseStringLiteral() throws(GraphQLSyntaxError) -> Value {
        let start = token
        try advanceLexer()
        return .string(start.value ?? "", block: start.kind == .blockString, start.loc)
    }

    // ListValue[Const] :
    //   - [ ]
    //   - [ Value[?Const]+ ]
    @inline(never)
    private mutating func parseList(isConst: Bool) throws(GraphQLSyntaxError) -> Value {
        let start = token
        try enterNesting()
        defer { depth -= 1 }
        let values = try any(.bracketL, .bracketR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseValueLiteral(isConst: isConst) }
        return .list(values, loc(start))
    }

    // ObjectValue[Const] :
    //   - { }
    //   - { ObjectField[?Const]+ }
    @inline(never)
    private mutating func parseObject(isConst: Bool) throws(GraphQLSyntaxError) -> Value {
        let start = token
        try enterNesting()
        defer { depth -= 1 }
        let fields = try any(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseObjectField(isConst: isConst) }
        return .object(fields, loc(start))
    }

    // ObjectField[Const] : Name : Value[?Const]
    private mutating func parseObjectField(isConst: Bool) throws(GraphQLSyntaxError) -> ObjectField {
        let start = token
        let name = try parseName()
        try expectToken(.colon)
        let value = try parseValueLiteral(isConst: isConst)
        return ObjectField(name: name, value: value, loc: loc(start))
    }

    // MARK: Directives

    // Directives[Const] : Directive[?Const]+
    @inline(never)
    private mutating func parseDirectives(isConst: Bool) throws(GraphQLSyntaxError) -> [Directive] {
        var directives: [Directive] = []
        while peek(.at) {
            directives.append(try parseDirective(isConst: isConst))
        }
        return directives
    }

    // Directive[Const] : @ Name Arguments[?Const]?
    private mutating func parseDirective(isConst: Bool) throws(GraphQLSyntaxError) -> Directive {
        let start = token
        try expectToken(.at)
        let name = try parseName()
        let arguments = try parseArguments(isConst: isConst)
        return Directive(name: name, arguments: arguments, loc: loc(start))
    }

    // MARK: Types

    // Type :
    //   - NamedType
    //   - ListType
    //   - NonNullType
    //
    // ListType : [ Type ]
    // NonNullType :
    //   - NamedType !
    //   - ListType !
    mutating func parseTypeReference() throws(GraphQLSyntaxError) -> TypeNode {
        let start = token
        let type: TypeNode
        if peek(.bracketL) {
            try enterNesting()
            defer { depth -= 1 }
            try advanceLexer()
            let inner = try parseTypeReference()
            try expectToken(.bracketR)
            type = .list(inner, loc(start))
        } else {
            type = .named(try parseNamedType())
        }
        if try expectOptionalToken(.bang) {
            return .nonNull(type, loc(start))
        }
        return type
    }

    // NamedType : Name
    @inline(never)
    private mutating func parseNamedType() throws(GraphQLSyntaxError) -> NamedType {
        let start = token
        let name = try parseName()
        return NamedType(name: name, loc: loc(start))
    }

    // Name : /^[_a-zA-Z][_a-zA-Z0-9]*$/
    @inline(never)
    private mutating func parseName() throws(GraphQLSyntaxError) -> Name {
        let nameToken = try expectToken(.name)
        return Name(nameToken.value ?? "", loc: nameToken.loc)
    }

    // MARK: Type system definitions

    private func peekDescription() -> Bool { peek(.string) || peek(.blockString) }

    // Description : StringValue
    @inline(never)
    private mutating func parseDescription() throws(GraphQLSyntaxError) -> String? {
        guard peekDescription() else { return nil }
        let description = token.value
        try advanceLexer()
        return description
    }

    // SchemaDefinition : Description? schema Directives[Const]? { OperationTypeDefinition+ }
    private mutating func parseSchemaDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("schema")
        let directives = try parseDirectives(isConst: true)
        let operationTypes = try many(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseOperationTypeDefinition() }
        return .schema(description: description, directives: directives, operationTypes: operationTypes,
                       isExtension: false, loc(start))
    }

    // OperationTypeDefinition : OperationType : NamedType
    private mutating func parseOperationTypeDefinition() throws(GraphQLSyntaxError) -> RootOperationTypeDefinition {
        let operation = try parseOperationType()
        try expectToken(.colon)
        let type = try parseNamedType()
        return RootOperationTypeDefinition(operation: operation, type: type)
    }

    // ScalarTypeDefinition : Description? scalar Name Directives[Const]?
    private mutating func parseScalarTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("scalar")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        return .scalar(description: description, name: name, directives: directives, isExtension: false, loc(start))
    }

    // ObjectTypeDefinition :
    //   Description?
    //   type Name ImplementsInterfaces? Directives[Const]? FieldsDefinition?
    private mutating func parseObjectTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("type")
        let name = try parseName()
        let interfaces = try parseImplementsInterfaces()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseFieldsDefinition()
        return .object(description: description, name: name, interfaces: interfaces, directives: directives,
                       fields: fields, isExtension: false, loc(start))
    }

    // ImplementsInterfaces :
    //   - implements `&`? NamedType
    //   - ImplementsInterfaces & NamedType
    private mutating func parseImplementsInterfaces() throws(GraphQLSyntaxError) -> [NamedType] {
        guard try expectOptionalKeyword("implements") else { return [] }
        return try delimitedMany(.amp) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseNamedType() }
    }

    // FieldsDefinition : { FieldDefinition+ }
    private mutating func parseFieldsDefinition() throws(GraphQLSyntaxError) -> [FieldDefinition] {
        try optionalMany(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseFieldDefinition() }
    }

    // FieldDefinition :
    //   - Description? Name ArgumentsDefinition? : Type Directives[Const]?
    private mutating func parseFieldDefinition() throws(GraphQLSyntaxError) -> FieldDefinition {
        let start = token
        let description = try parseDescription()
        let name = try parseName()
        let arguments = try parseArgumentDefs()
        try expectToken(.colon)
        let type = try parseTypeReference()
        let directives = try parseDirectives(isConst: true)
        return FieldDefinition(description: description, name: name, arguments: arguments, type: type,
                               directives: directives, loc: loc(start))
    }

    // ArgumentsDefinition : ( InputValueDefinition+ )
    private mutating func parseArgumentDefs() throws(GraphQLSyntaxError) -> [InputValueDefinition] {
        try optionalMany(.parenL, .parenR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseInputValueDef() }
    }

    // InputValueDefinition :
    //   - Description? Name : Type DefaultValue? Directives[Const]?
    // DefaultValue : = Value[Const]
    private mutating func parseInputValueDef() throws(GraphQLSyntaxError) -> InputValueDefinition {
        let start = token
        let description = try parseDescription()
        let name = try parseName()
        try expectToken(.colon)
        let type = try parseTypeReference()
        let defaultValue = try expectOptionalToken(.equals) ? try parseValueLiteral(isConst: true) : nil
        let directives = try parseDirectives(isConst: true)
        return InputValueDefinition(description: description, name: name, type: type,
                                    defaultValue: defaultValue, directives: directives, loc: loc(start))
    }

    // InterfaceTypeDefinition :
    //   - Description? interface Name ImplementsInterfaces? Directives[Const]? FieldsDefinition?
    private mutating func parseInterfaceTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("interface")
        let name = try parseName()
        let interfaces = try parseImplementsInterfaces()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseFieldsDefinition()
        return .interface(description: description, name: name, interfaces: interfaces, directives: directives,
                          fields: fields, isExtension: false, loc(start))
    }

    // UnionTypeDefinition :
    //   - Description? union Name Directives[Const]? UnionMemberTypes?
    private mutating func parseUnionTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("union")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let types = try parseUnionMemberTypes()
        return .union(description: description, name: name, directives: directives, types: types,
                      isExtension: false, loc(start))
    }

    // UnionMemberTypes :
    //   - = `|`? NamedType
    //   - UnionMemberTypes | NamedType
    private mutating func parseUnionMemberTypes() throws(GraphQLSyntaxError) -> [NamedType] {
        guard try expectOptionalToken(.equals) else { return [] }
        return try delimitedMany(.pipe) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseNamedType() }
    }

    // EnumTypeDefinition :
    //   - Description? enum Name Directives[Const]? EnumValuesDefinition?
    private mutating func parseEnumTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("enum")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let values = try parseEnumValuesDefinition()
        return .enumType(description: description, name: name, directives: directives, values: values,
                         isExtension: false, loc(start))
    }

    // EnumValuesDefinition : { EnumValueDefinition+ }
    private mutating func parseEnumValuesDefinition() throws(GraphQLSyntaxError) -> [EnumValueDefinition] {
        try optionalMany(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseEnumValueDefinition() }
    }

    // EnumValueDefinition : Description? EnumValue Directives[Const]?
    private mutating func parseEnumValueDefinition() throws(GraphQLSyntaxError) -> EnumValueDefinition {
        let start = token
        let description = try parseDescription()
        let name = try parseEnumValueName()
        let directives = try parseDirectives(isConst: true)
        return EnumValueDefinition(description: description, name: name, directives: directives, loc: loc(start))
    }

    // EnumValue : Name but not `true`, `false` or `null`
    private mutating func parseEnumValueName() throws(GraphQLSyntaxError) -> Name {
        if token.kind == .name, token.value == "true" || token.value == "false" || token.value == "null" {
            throw syntaxError(token.start, "\(token) is reserved and cannot be used for an enum value.")
        }
        return try parseName()
    }

    // InputObjectTypeDefinition :
    //   - Description? input Name Directives[Const]? InputFieldsDefinition?
    private mutating func parseInputObjectTypeDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("input")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseInputFieldsDefinition()
        return .inputObject(description: description, name: name, directives: directives, fields: fields,
                            isExtension: false, loc(start))
    }

    // InputFieldsDefinition : { InputValueDefinition+ }
    private mutating func parseInputFieldsDefinition() throws(GraphQLSyntaxError) -> [InputValueDefinition] {
        try optionalMany(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseInputValueDef() }
    }

    // MARK: Type system extensions

    // TypeSystemExtension :
    //   - SchemaExtension
    //   - TypeExtension
    //
    // TypeExtension :
    //   - ScalarTypeExtension
    //   - ObjectTypeExtension
    //   - InterfaceTypeExtension
    //   - UnionTypeExtension
    //   - EnumTypeExtension
    //   - InputObjectTypeDefinition
    private mutating func parseTypeSystemExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let keywordToken = try lexer.lookahead()
        if keywordToken.kind == .name {
            switch keywordToken.value {
            case "schema": return try parseSchemaExtension()
            case "scalar": return try parseScalarTypeExtension()
            case "type": return try parseObjectTypeExtension()
            case "interface": return try parseInterfaceTypeExtension()
            case "union": return try parseUnionTypeExtension()
            case "enum": return try parseEnumTypeExtension()
            case "input": return try parseInputObjectTypeExtension()
            default: break
            }
        }
        throw unexpected(keywordToken)
    }

    // SchemaExtension :
    //  - extend schema Directives[Const]? { OperationTypeDefinition+ }
    //  - extend schema Directives[Const]
    private mutating func parseSchemaExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("schema")
        let directives = try parseDirectives(isConst: true)
        let operationTypes = try optionalMany(.braceL, .braceR) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseOperationTypeDefinition() }
        if directives.isEmpty && operationTypes.isEmpty { throw unexpected() }
        return .schema(description: nil, directives: directives, operationTypes: operationTypes,
                       isExtension: true, loc(start))
    }

    // ScalarTypeExtension :
    //   - extend scalar Name Directives[Const]
    private mutating func parseScalarTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("scalar")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        if directives.isEmpty { throw unexpected() }
        return .scalar(description: nil, name: name, directives: directives, isExtension: true, loc(start))
    }

    // ObjectTypeExtension :
    //  - extend type Name ImplementsInterfaces? Directives[Const]? FieldsDefinition
    //  - extend type Name ImplementsInterfaces? Directives[Const]
    //  - extend type Name ImplementsInterfaces
    private mutating func parseObjectTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("type")
        let name = try parseName()
        let interfaces = try parseImplementsInterfaces()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseFieldsDefinition()
        if interfaces.isEmpty && directives.isEmpty && fields.isEmpty { throw unexpected() }
        return .object(description: nil, name: name, interfaces: interfaces, directives: directives,
                       fields: fields, isExtension: true, loc(start))
    }

    // InterfaceTypeExtension :
    //  - extend interface Name ImplementsInterfaces? Directives[Const]? FieldsDefinition
    //  - extend interface Name ImplementsInterfaces? Directives[Const]
    //  - extend interface Name ImplementsInterfaces
    private mutating func parseInterfaceTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("interface")
        let name = try parseName()
        let interfaces = try parseImplementsInterfaces()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseFieldsDefinition()
        if interfaces.isEmpty && directives.isEmpty && fields.isEmpty { throw unexpected() }
        return .interface(description: nil, name: name, interfaces: interfaces, directives: directives,
                          fields: fields, isExtension: true, loc(start))
    }

    // UnionTypeExtension :
    //   - extend union Name Directives[Const]? UnionMemberTypes
    //   - extend union Name Directives[Const]
    private mutating func parseUnionTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("union")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let types = try parseUnionMemberTypes()
        if directives.isEmpty && types.isEmpty { throw unexpected() }
        return .union(description: nil, name: name, directives: directives, types: types,
                      isExtension: true, loc(start))
    }

    // EnumTypeExtension :
    //   - extend enum Name Directives[Const]? EnumValuesDefinition
    //   - extend enum Name Directives[Const]
    private mutating func parseEnumTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("enum")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let values = try parseEnumValuesDefinition()
        if directives.isEmpty && values.isEmpty { throw unexpected() }
        return .enumType(description: nil, name: name, directives: directives, values: values,
                         isExtension: true, loc(start))
    }

    // InputObjectTypeExtension :
    //   - extend input Name Directives[Const]? InputFieldsDefinition
    //   - extend input Name Directives[Const]
    private mutating func parseInputObjectTypeExtension() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        try expectKeyword("extend")
        try expectKeyword("input")
        let name = try parseName()
        let directives = try parseDirectives(isConst: true)
        let fields = try parseInputFieldsDefinition()
        if directives.isEmpty && fields.isEmpty { throw unexpected() }
        return .inputObject(description: nil, name: name, directives: directives, fields: fields,
                            isExtension: true, loc(start))
    }

    // DirectiveDefinition :
    //   - Description? directive @ Name ArgumentsDefinition? `repeatable`? on DirectiveLocations
    private mutating func parseDirectiveDefinition() throws(GraphQLSyntaxError) -> TypeSystemDefinition {
        let start = token
        let description = try parseDescription()
        try expectKeyword("directive")
        try expectToken(.at)
        let name = try parseName()
        let arguments = try parseArgumentDefs()
        let repeatable = try expectOptionalKeyword("repeatable")
        try expectKeyword("on")
        let locations = try parseDirectiveLocations()
        return .directive(description: description, name: name, arguments: arguments, repeatable: repeatable,
                          locations: locations, loc(start))
    }

    // DirectiveLocations :
    //   - `|`? DirectiveLocation
    //   - DirectiveLocations | DirectiveLocation
    private mutating func parseDirectiveLocations() throws(GraphQLSyntaxError) -> [Name] {
        try delimitedMany(.pipe) { (p: inout Self) throws(GraphQLSyntaxError) in try p.parseDirectiveLocation() }
    }

    // DirectiveLocation :
    //   - ExecutableDirectiveLocation
    //   - TypeSystemDirectiveLocation
    //
    // ExecutableDirectiveLocation : one of
    //   `QUERY` `MUTATION` `SUBSCRIPTION` `FIELD` `FRAGMENT_DEFINITION` `FRAGMENT_SPREAD`
    //   `INLINE_FRAGMENT` `VARIABLE_DEFINITION`
    //
    // TypeSystemDirectiveLocation : one of
    //   `SCHEMA` `SCALAR` `OBJECT` `FIELD_DEFINITION` `ARGUMENT_DEFINITION` `INTERFACE` `UNION`
    //   `ENUM` `ENUM_VALUE` `INPUT_OBJECT` `INPUT_FIELD_DEFINITION`
    private mutating func parseDirectiveLocation() throws(GraphQLSyntaxError) -> Name {
        let start = token
        let name = try parseName()
        if Self.directiveLocations.contains(name.value) { return name }
        throw unexpected(start)
    }

    static let directiveLocations: Set<String> = [
        "QUERY", "MUTATION", "SUBSCRIPTION", "FIELD", "FRAGMENT_DEFINITION", "FRAGMENT_SPREAD",
        "INLINE_FRAGMENT", "VARIABLE_DEFINITION", "SCHEMA", "SCALAR", "OBJECT", "FIELD_DEFINITION",
        "ARGUMENT_DEFINITION", "INTERFACE", "UNION", "ENUM", "ENUM_VALUE", "INPUT_OBJECT",
        "INPUT_FIELD_DEFINITION",
    ]

    // MARK: Helpers

    /// The location from `start` to the end of the last consumed token.
    private func loc(_ start: Token) -> Location {
        Location(start: start.start, end: lexer.lastToken.end)
    }

    /// Moves to the next token, counting it against `maxTokens`.
    @inline(never)
    private mutating func advanceLexer() throws(GraphQLSyntaxError) {
        let next = try lexer.advance()
        if next.kind != .eof {
            tokenCount += 1
            if tokenCount > maxTokens {
                throw syntaxError(next.start, "Document contains more than \(maxTokens) tokens. Parsing aborted.")
            }
        }
    }

    /// Enters one more level of bracket nesting, failing past `maxDepth`.
    @inline(never)
    private mutating func enterNesting() throws(GraphQLSyntaxError) {
        if depth >= maxDepth {
            throw syntaxError(token.start, "Document nesting exceeds the maximum depth of \(maxDepth). Parsing aborted.")
        }
        depth += 1
    }

    /// True when the current token is of the given kind.
    private func peek(_ kind: TokenKind) -> Bool { token.kind == kind }

    /// Consumes a token of the given kind, or fails with "Expected X, found Y.".
    @inline(never)
    @discardableResult
    mutating func expectToken(_ kind: TokenKind) throws(GraphQLSyntaxError) -> Token {
        let current = token
        if current.kind == kind {
            try advanceLexer()
            return current
        }
        throw syntaxError(current.start, "Expected \(kind.kindDescription), found \(current).")
    }

    /// Consumes a token of the given kind if it is there.
    @inline(never)
    private mutating func expectOptionalToken(_ kind: TokenKind) throws(GraphQLSyntaxError) -> Bool {
        guard token.kind == kind else { return false }
        try advanceLexer()
        return true
    }

    /// Consumes the keyword (a Name token with that value), or fails.
    @inline(never)
    private mutating func expectKeyword(_ value: String) throws(GraphQLSyntaxError) {
        let current = token
        guard current.kind == .name && current.value == value else {
            throw syntaxError(current.start, "Expected \"\(value)\", found \(current).")
        }
        try advanceLexer()
    }

    /// Consumes the keyword if it is there.
    @inline(never)
    private mutating func expectOptionalKeyword(_ value: String) throws(GraphQLSyntaxError) -> Bool {
        guard token.kind == .name && token.value == value else { return false }
        try advanceLexer()
        return true
    }

    /// "Unexpected X." at the given token (the current one by default).
    @inline(never)
    private func unexpected(_ at: Token? = nil) -> GraphQLSyntaxError {
        let t = at ?? token
        return syntaxError(t.start, "Unexpected \(t).")
    }

    @inline(never)
    private func syntaxError(_ position: Int, _ description: String) -> GraphQLSyntaxError {
        GraphQLSyntaxError(GraphQLError("Syntax Error: " + description, source: source, offsets: [position]))
    }

    /// open item* close — possibly empty.
    private mutating func any<T>(
        _ open: TokenKind, _ close: TokenKind, _ item: (inout Self) throws(GraphQLSyntaxError) -> T
    ) throws(GraphQLSyntaxError) -> [T] {
        try expectToken(open)
        var nodes: [T] = []
        nodes.reserveCapacity(4)
        while try !expectOptionalToken(close) {
            nodes.append(try item(&self))
        }
        return nodes
    }

    /// (open item+ close)? — empty when `open` is absent.
    private mutating func optionalMany<T>(
        _ open: TokenKind, _ close: TokenKind, _ item: (inout Self) throws(GraphQLSyntaxError) -> T
    ) throws(GraphQLSyntaxError) -> [T] {
        guard try expectOptionalToken(open) else { return [] }
        var nodes: [T] = []
        nodes.reserveCapacity(4)
        repeat {
            nodes.append(try item(&self))
        } while try !expectOptionalToken(close)
        return nodes
    }

    /// open item+ close.
    private mutating func many<T>(
        _ open: TokenKind, _ close: TokenKind, _ item: (inout Self) throws(GraphQLSyntaxError) -> T
    ) throws(GraphQLSyntaxError) -> [T] {
        try expectToken(open)
        var nodes: [T] = []
        nodes.reserveCapacity(4)
        repeat {
            nodes.append(try item(&self))
        } while try !expectOptionalToken(close)
        return nodes
    }

    /// delimiter? item (delimiter item)*.
    private mutating func delimitedMany<T>(
        _ delimiter: TokenKind, _ item: (inout Self) throws(GraphQLSyntaxError) -> T
    ) throws(GraphQLSyntaxError) -> [T] {
        _ = try expectOptionalToken(delimiter)
        var nodes: [T] = []
        nodes.reserveCapacity(4)
        repeat {
            nodes.append(try item(&self))
        } while try expectOptionalToken(delimiter)
        return nodes
    }
}
