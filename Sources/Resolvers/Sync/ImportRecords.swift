import Schema

/// Turns an import file into checked records: every problem of every record is collected, and
/// the batch is returned only when there is none. Nothing here touches the catalog.
enum ImportRecords {
    static let productFields = ["id", "sku", "name", "manufacturer", "category", "displayOrder", "thumbnail", "images",
                                "videos", "panoramaUrl", "description", "specs", "kit", "template"]
    static let categoryFields = ["id", "title", "icon", "level", "parent"]
    static let templateFields = ["id", "specs", "referenceCategory"]
    static let manufacturerFields = ["name", "logo"]
    /// Output-only fields of the contract (or GraphQL's __typename), accepted and ignored so
    /// that a query's answer can be imported back.
    static let derivedFields: [String: Set<String>] = [
        "product": ["__typename"],
        "category": ["__typename", "children", "path", "productCount", "products"],
        "template": ["__typename"],
        "manufacturer": ["__typename", "productCount", "products"],
    ]
    static let sections = ["products": "product", "categories": "category", "templates": "template",
                           "manufacturers": "manufacturer"]

    // MARK: JSON

    static func json(_ bytes: [UInt8], file: String, layout: ImportLayout,
                     progress: ImportProgress? = nil) throws(ImportFailure) -> ImportBatch {
        var reader = Reader(layout: layout)
        var stream = JSONRecordStream(bytes)
        var count = 0
        do {
            try stream.read(member: { name, line, isArray in
                if sections[name] == nil {
                    reader.problems.append(ImportProblem(line: line, record: nil, field: name,
                        message: "unknown member (expected products, categories, templates or manufacturers)"))
                } else if !isArray {
                    reader.problems.append(ImportProblem(line: line, record: nil, field: name, message: "expected an array"))
                }
            }) { value, line, member, index in
                count += 1
                if count % 10_000 == 0 { progress?("checking", count, 0) }
                guard let member else {
                    reader.record(value, type: nil, line: line, label: "record \(index + 1)")
                    return
                }
                guard let type = sections[member] else { return }
                reader.record(value, type: type, line: line, label: "\(member) record \(index + 1)")
            }
        } catch {
            reader.problems.append(ImportProblem(line: error.line, record: nil, field: nil, message: error.message))
        }
        if !reader.problems.isEmpty {
            // By line, keeping the order found within a line.
            let sorted = reader.problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            throw .invalid(file: file, problems: sorted.map(\.element))
        }
        return reader.batch
    }

    /// Checks JSON records one at a time, collecting problems.
    struct Reader {
        let layout: ImportLayout
        var batch = ImportBatch()
        var problems: [ImportProblem] = []
        var productSeen: [Int64: String] = [:]
        var categorySeen: [Int64: String] = [:]
        var templateSeen: [Int64: String] = [:]
        var manufacturerSeen: [String: String] = [:]

        init(layout: ImportLayout) { self.layout = layout }

        /// The problems of the record being read.
        private var line = 0
        private var label = ""
        private mutating func fail(_ field: String?, _ message: String) {
            problems.append(ImportProblem(line: line, record: label, field: field, message: message))
        }

        mutating func record(_ value: JSONValue, type implied: String?, line: Int, label: String) {
            self.line = line
            self.label = label
            guard case .object(let members) = value else { fail(nil, "expected an object"); return }
            var type = implied ?? "product"
            if let t = value["type"] {
                guard case .string(let s) = t, ["product", "category", "template", "manufacturer"].contains(s) else {
                    fail("type", "expected \"product\", \"category\", \"template\" or \"manufacturer\""); return
                }
                if let implied, implied != s { fail("type", "is \"\(s)\" in an array of \(implied) records"); return }
                type = s
            }
            let known: [String]
            switch type {
            case "category": known = ImportRecords.categoryFields
            case "template": known = ImportRecords.templateFields
            case "manufacturer": known = ImportRecords.manufacturerFields
            default: known = ImportRecords.productFields
            }
            let ignored = ImportRecords.derivedFields[type] ?? []
            for (k, _) in members where k != "type" && !known.contains(k) && !ignored.contains(k) {
                fail(k, "unknown \(type) field (known: \(known.joined(separator: ", ")))")
            }
            switch type {
            case "category": category(value)
            case "template": template(value)
            case "manufacturer": manufacturer(value)
            default: product(value)
            }
        }

        // Field readers: each reports its own problem and returns nil on a bad value.

        private mutating func id(_ v: JSONValue, _ field: String) -> Int64? {
            switch v {
            case .int(let i): return i
            case .string(let s): if let i = s.strictInteger { return i }
            case .object:
                if let inner = v["id"] { return id(inner, field + ".id") }
            default: break
            }
            fail(field, "expected an ID (an integer, or a string holding one)")
            return nil
        }

        private mutating func text(_ v: JSONValue, _ field: String) -> SQLValue? {
            switch v {
            case .string(let s): return .text(s)
            case .null: return .text("")
            default: fail(field, "expected a string or null"); return nil
            }
        }

        private mutating func optionalInt(_ v: JSONValue, _ field: String) -> SQLValue? {
            switch v {
            case .int(let i): return .integer(i)
            case .null: return .null
            default: fail(field, "expected an integer or null"); return nil
            }
        }

        private mutating func list(_ v: JSONValue, _ field: String) -> [JSONValue]? {
            if case .array(let items) = v { return items }
            if case .null = v { return [] }
            fail(field, "expected an array")
            return nil
        }

        private mutating func product(_ r: JSONValue) {
            var values = [SQLValue?](repeating: nil, count: layout.productColumns.count)
            func set(_ lower: String, _ v: SQLValue?, field: String) {
                guard let v else { return }
                guard let i = layout.index(lower) else { fail(field, "the catalog has no column \(lower)"); return }
                values[i] = v
            }
            guard let idValue = r["id"] else { fail("id", "missing (every product needs its id, the keyid)"); return }
            let keyid = id(idValue, "id")
            if let v = r["sku"] {
                switch v {
                case .string(let s): set("product_id", .text(s), field: "sku")
                case .int(let i): set("product_id", .text(String(i)), field: "sku")
                default: fail("sku", "expected a string")
                }
            }
            if let v = r["name"] { set("product", text(v, "name"), field: "name") }
            if let v = r["manufacturer"] {
                if case .object = v {
                    set("manufacturer", text(v["name"] ?? .null, "manufacturer.name"), field: "manufacturer")
                } else {
                    set("manufacturer", text(v, "manufacturer"), field: "manufacturer")
                }
            }
            if let v = r["category"] {
                if case .null = v { set("cat", .null, field: "category") } else if let c = id(v, "category") {
                    set("cat", .integer(c), field: "category")
                }
            }
            if let v = r["displayOrder"] { set("displayorder", optionalInt(v, "displayOrder"), field: "displayOrder") }
            if let v = r["thumbnail"] { set("display_thumbnail", text(v, "thumbnail"), field: "thumbnail") }
            if let v = r["panoramaUrl"] { set("panorama", text(v, "panoramaUrl"), field: "panoramaUrl") }
            if let v = r["description"] { set("description", text(v, "description"), field: "description") }
            if let v = r["images"], let items = list(v, "images") {
                if items.count > layout.imageColumns.count {
                    fail("images", "\(items.count) images, but the catalog has \(layout.imageColumns.count) image columns")
                } else {
                    for (i, col) in layout.imageColumns.enumerated() {
                        if i < items.count {
                            guard case .string(let s) = items[i] else { fail("images[\(i)]", "expected a string"); continue }
                            values[col] = .text(s)
                        } else {
                            values[col] = .text("")
                        }
                    }
                }
            }
            if let v = r["videos"], let items = list(v, "videos") {
                var given: [String: String] = [:]
                for (i, item) in items.enumerated() {
                    guard case .string(let kind) = item["kind"] ?? .null else { fail("videos[\(i)].kind", "expected a VideoKind"); continue }
                    guard layout.videoColumns.contains(where: { $0.kind == kind }) else {
                        fail("videos[\(i)].kind", "unknown video kind \(kind) (known: \(layout.videoColumns.map(\.kind).joined(separator: ", ")))")
                        continue
                    }
                    guard case .string(let url) = item["url"] ?? .null else { fail("videos[\(i)].url", "expected a string"); continue }
                    if given[kind] != nil { fail("videos[\(i)].kind", "\(kind) given twice"); continue }
                    given[kind] = url
                }
                for (kind, col) in layout.videoColumns { values[col] = .text(given[kind] ?? "") }
            }
            if let v = r["specs"], let items = list(v, "specs") {
                var given: [String: String] = [:]
                for (i, item) in items.enumerated() {
                    guard case .string(let key) = item["key"] ?? .null else { fail("specs[\(i)].key", "expected a letter"); continue }
                    guard layout.productSpecColumns[key] != nil else {
                        fail("specs[\(i)].key", "no column info_spec_\(key) (spec keys: \(layout.productSpecColumns.keys.sorted().joined(separator: ", ")))")
                        continue
                    }
                    let value: String
                    switch item["value"] ?? .null {
                    case .string(let s): value = s
                    case .null: value = ""
                    default: fail("specs[\(i)].value", "expected a string or null"); continue
                    }
                    if given[key] != nil { fail("specs[\(i)].key", "\(key) given twice"); continue }
                    given[key] = value
                }
                for (letter, col) in layout.productSpecColumns { values[col] = .text(given[letter] ?? "") }
            }
            if let v = r["template"] {
                if case .null = v { set("info_detailskey", .text(""), field: "template") } else if let t = id(v, "template") {
                    set("info_detailskey", .text(String(t)), field: "template")
                }
            }
            var kit: [(name: String, quantity: Int64)]?
            if let v = r["kit"], let items = list(v, "kit") {
                if r["sku"] == nil { fail("kit", "needs the product's sku in the same record (kit rows are keyed by it)") }
                var out: [(name: String, quantity: Int64)] = []
                for (i, item) in items.enumerated() {
                    guard case .object = item else { fail("kit[\(i)]", "expected an object with name and quantity"); continue }
                    guard case .string(let name) = item["name"] ?? .null else { fail("kit[\(i)].name", "expected a string"); continue }
                    guard case .int(let q) = item["quantity"] ?? .null else { fail("kit[\(i)].quantity", "expected an integer"); continue }
                    for (k, _) in item.objectMembers where !["id", "name", "quantity", "__typename"].contains(k) {
                        fail("kit[\(i)].\(k)", "unknown kit item field (known: name, quantity)")
                    }
                    out.append((name, q))
                }
                kit = out
            }
            guard let keyid else { return }
            if let first = productSeen[keyid] { fail("id", "product \(keyid) is also in \(first)"); return }
            productSeen[keyid] = label
            batch.products.append(ProductUpsert(line: line, keyid: keyid, values: values, kit: kit))
        }

        private mutating func category(_ r: JSONValue) {
            guard let idValue = r["id"] else { fail("id", "missing"); return }
            let cid = id(idValue, "id")
            var values: [(column: String, value: SQLValue)] = []
            if let v = r["title"] {
                if case .string(let s) = v { values.append(("menu_title", .text(s))) } else { fail("title", "expected a string") }
            }
            if let v = r["icon"], let t = text(v, "icon") { values.append(("menu_icon", t)) }
            if let v = r["level"], let l = optionalInt(v, "level") { values.append(("level", l)) }
            if let v = r["parent"] {
                if case .null = v { values.append(("parent", .integer(0))) } else if let p = id(v, "parent") {
                    values.append(("parent", .integer(p)))
                }
            }
            guard let cid else { return }
            if let first = categorySeen[cid] { fail("id", "category \(cid) is also in \(first)"); return }
            categorySeen[cid] = label
            batch.categories.append(CategoryUpsert(line: line, id: cid, values: values))
        }

        private mutating func template(_ r: JSONValue) {
            guard let idValue = r["id"] else { fail("id", "missing (the DetailsKey)"); return }
            let key = id(idValue, "id")
            var values: [(column: String, value: SQLValue)] = []
            if let v = r["specs"], let items = list(v, "specs") {
                var given: [String: String] = [:]
                for (i, item) in items.enumerated() {
                    guard case .string(let k) = item["key"] ?? .null else { fail("specs[\(i)].key", "expected a letter"); continue }
                    guard layout.templateSpecColumns[k] != nil else {
                        fail("specs[\(i)].key", "no column spec_\(k) (template keys: \(layout.templateSpecColumns.keys.sorted().joined(separator: ", ")))")
                        continue
                    }
                    guard case .string(let label) = item["label"] ?? .null else { fail("specs[\(i)].label", "expected a string"); continue }
                    if given[k] != nil { fail("specs[\(i)].key", "\(k) given twice"); continue }
                    given[k] = label
                }
                // Stored as the original catalogs do: the letter, then the label (the served
                // label drops the first character).
                for (letter, col) in layout.templateSpecColumns.sorted(by: { $0.key < $1.key }) {
                    values.append((col, given[letter].map { .text(letter + $0) } ?? .null))
                }
            }
            if let v = r["referenceCategory"] {
                if layout.hasReferenceCategory {
                    if let t = text(v, "referenceCategory") { values.append(("ReferenceCategory", t)) }
                } else {
                    fail("referenceCategory", "the catalog has no column ReferenceCategory")
                }
            }
            guard let key else { return }
            if let first = templateSeen[key] { fail("id", "template \(key) is also in \(first)"); return }
            templateSeen[key] = label
            batch.templates.append(TemplateUpsert(line: line, key: key, values: values))
        }

        private mutating func manufacturer(_ r: JSONValue) {
            guard case .string(let raw) = r["name"] ?? .null, !raw.trimmedASCII.isEmpty else {
                fail("name", "expected a non-empty string"); return
            }
            let name = raw.trimmedASCII
            var logo: SQLValue?
            if let v = r["logo"] { logo = text(v, "logo") }
            if let first = manufacturerSeen[name] { fail("name", "manufacturer \(name) is also in \(first)"); return }
            manufacturerSeen[name] = label
            batch.manufacturers.append(ManufacturerUpsert(line: line, name: name, logo: logo))
        }
    }

    // MARK: CSV

    /// A header of Product_Catalog column names (any case), then one product per record.
    /// keyid is required; cat and displayorder must be integers or empty; every other field is
    /// stored as the text given. Columns not in the header are left as they are (new rows get
    /// '' there, integer columns included: `Importer.writeProduct`).
    static func csv(_ bytes: [UInt8], file: String, layout: ImportLayout) throws(ImportFailure) -> ImportBatch {
        let records: [CSVRecord]
        do {
            records = try CSVReader.records(bytes)
        } catch {
            throw .invalid(file: file, problems: [ImportProblem(line: error.line, record: nil, field: nil, message: error.message)])
        }
        guard let header = records.first else {
            throw .invalid(file: file, problems: [ImportProblem(line: 1, record: nil, field: nil,
                message: "empty file (expected a header line of Product_Catalog column names)")])
        }
        var problems: [ImportProblem] = []
        var columns: [String?] = []
        var seen: Set<String> = []
        for name in header.fields {
            let trimmed = name.trimmedASCII
            guard let col = layout.index(trimmed.lowercased()).map({ layout.productColumns[$0].name }) else {
                problems.append(ImportProblem(line: header.line, record: "header", field: trimmed,
                    message: "no such column in Product_Catalog"))
                columns.append(nil)
                continue
            }
            if !seen.insert(col).inserted {
                problems.append(ImportProblem(line: header.line, record: "header", field: trimmed, message: "column given twice"))
            }
            columns.append(col)
        }
        guard let keyIndex = columns.firstIndex(where: { $0?.lowercased() == "keyid" }) else {
            problems.append(ImportProblem(line: header.line, record: "header", field: nil, message: "no keyid column"))
            throw .invalid(file: file, problems: problems)
        }
        if !problems.isEmpty { throw .invalid(file: file, problems: problems) }
        let indexes = columns.map { $0.flatMap { layout.index($0.lowercased()) } }
        var batch = ImportBatch()
        var firstRecord: [Int64: Int] = [:]
        for (n, r) in records.dropFirst().enumerated() {
            let label = "record \(n + 1)"
            func fail(_ field: String?, _ message: String) {
                problems.append(ImportProblem(line: r.line, record: label, field: field, message: message))
            }
            guard r.fields.count == columns.count else {
                fail(nil, "\(r.fields.count) fields, but the header has \(columns.count)")
                continue
            }
            guard let keyid = r.fields[keyIndex].trimmedASCII.strictInteger else {
                fail(columns[keyIndex], "expected an integer keyid, got \"\(r.fields[keyIndex])\"")
                continue
            }
            var values = [SQLValue?](repeating: nil, count: layout.productColumns.count)
            var ok = true
            for (i, col) in columns.enumerated() where i != keyIndex {
                guard let col, let index = indexes[i] else { continue }
                let raw = r.fields[i]
                switch col.lowercased() {
                case "cat", "displayorder":
                    let t = raw.trimmedASCII
                    if t.isEmpty { values[index] = .text("") } else if let v = t.strictInteger {
                        values[index] = .integer(v)
                    } else {
                        fail(col, "expected an integer or nothing, got \"\(raw)\""); ok = false
                    }
                default:
                    values[index] = .text(raw)
                }
            }
            if let first = firstRecord[keyid] { fail(columns[keyIndex], "keyid \(keyid) is also in record \(first)"); continue }
            firstRecord[keyid] = n + 1
            guard ok else { continue }
            batch.products.append(ProductUpsert(line: r.line, keyid: keyid, values: values, kit: nil))
        }
        if !problems.isEmpty { throw .invalid(file: file, problems: problems) }
        return batch
    }
}

private extension JSONValue {
    var objectMembers: [(String, JSONValue)] {
        if case .object(let m) = self { return m }
        return []
    }
}
