#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// A deterministic demo catalog with the exact Radiant schema (`CatalogSQL.radiantSchema`, all ten
/// tables) and the shape of a real catalog, so that the project runs and is tested without a
/// file of its own. The same `products` and `seed` always give the same file, byte for byte.
///
/// Shape at the default 560 products: 9 top-level categories and 126 hierarchy rows down to
/// level 4 (Cameras > Digital Cinema > ARRI > Alexa 35, Lenses > Primes > Cooke > S4/i, Filters,
/// Lighting, Grip, Monitors, Power, Audio, Support), 560 products with film-equipment names,
/// manufacturers, images, descriptions and specs, about 4,500 kit rows, 134 mfg rows, 42 spec
/// templates, and the version row. Above 560 products, hierarchy rows (new sibling nodes of the
/// leaves, "Alexa 35 (Bay 2)"), kit rows (about 8 per product), mfg rows and templates grow in
/// proportion; the quirk rows of fixed number below stay fixed.
///
/// The quirks of the real files, each present (those marked "at least one" are also placed at
/// fixed positions so that every catalog of 100 products or more has them):
/// - No NULL anywhere in the catalog tables: missing values are ''.
/// - hierarchy: ids are not contiguous; menu_icon '' for most nodes below level 2; 7 orphans
///   whose parent id belongs to no row (a deleted node), one child of an orphan, a two-node cycle
///   (each node's parent is the other) and one node whose parent is itself.
/// - Product_Catalog.product_ID (INTEGER affinity): mostly integers; text ids such as 'K1478';
///   a few lowercase ('k1479'); two ids that occur twice (one integer, one text).
/// - Product: a few names with a trailing space; names starting with a digit ("60A Lunchbox") or
///   a lowercase letter ("cmotion ...").
/// - Manufacturer: '' for some; trailing spaces ('ARRI '); case variants ('Arri', 'COOKE').
/// - cat: mostly leaves, some non-leaf nodes, some orphans / cycle / self-parent nodes, some ids
///   that name no hierarchy row.
/// - displayorder: small integers with ties.
/// - display_Thumbnail, display_Image01..05: '' for some, trailing spaces on some; videos mostly
///   '', a few URLs or file names; panorama for about one product in ten.
/// - description: '' for some; leading/trailing spaces; TAB/CR/LF at the ends; mis-decoded UTF-8
///   ("dÃ©partement", "ARRIâ€™s"); U+00A0 no-break spaces inside and at the end (not trimmed).
/// - info_DetailsKey (TEXT): the template key as text ('26'); keys naming no template ('999'
///   or an unused number); keys with spaces (' 26 '); a sign ('+26'); ''.
/// - info_spec_a..q: '' for some, spaces around some; stray values where the template has no label.
/// - DetailsKeyValues: 42 templates (14 kinds x 3 layouts), keys not contiguous; labels prefixed
///   with their letter ('aSensor', 'bWeight ' with a trailing space); a label that is only its
///   letter ('e', label ''); 'c06)' (label '06)') and '06)' (label '6)'); a label with a foreign
///   prefix ('-Close Focus'); labels in spec_r..spec_t, which no product column matches;
///   ReferenceCategory '' for some.
/// - Product_Assets: kitID is the product's product_ID as text; kits for ids that match no
///   product; asset names with commas and trailing spaces; kitQTY as text: '1', '2', '10', '',
///   'x'; some products have no kit; a duplicated product_ID's kit matches both products.
/// - mfg: mfgid not contiguous; duplicated names with different logos; a duplicate whose lowest
///   mfgid has logo ''; trailing spaces and a TAB in names; case variants ('Arri'); a row with
///   manufacturer ''; logo '' for some, trailing space on some; some product manufacturers with
///   no mfg row at all.
/// - version: one row (6, '', ''). cart, rfq and dictionary are empty.
public struct DemoCatalog: Sendable {
    public let products: Int
    public let seed: UInt64

    public init(products: Int = 560, seed: UInt64 = 1) {
        self.products = max(0, products)
        self.seed = seed
    }

    /// Writes the catalog to `path.tmp`, then renames it to `path` (replacing any file there).
    /// `progress` is called with fractions from 0 to 1. Throws `CatalogFileError` naming `path`.
    public func write(to path: String, progress: ((Double) -> Void)? = nil) throws {
        // Generated in a directory of its own (mode 0700, made by mkdtemp beside `path`), then
        // renamed into place: a fixed `path.tmp` could be planted first, as a symlink to another
        // SQLite file, by anyone who can write to the output's directory, and that file would
        // have been written and then moved to `path`.
        var template = Array((path + ".tmp-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CatalogFileError(path: path, reason: "cannot make a temporary directory beside it: \(String(cString: strerror(errno)))")
        }
        let dir = String(cString: made)
        let tmp = dir + "/catalog.sqlite"
        defer {
            unlink(tmp)
            unlink(tmp + "-journal")
            rmdir(dir)
        }
        do {
            try generate(into: tmp, progress: progress)
        } catch let error as SQLiteError {
            throw CatalogFileError(path: path, reason: "cannot write the demo catalog: \(error.message)")
        }
        if rename(tmp, path) != 0 {
            throw CatalogFileError(path: path, reason: "cannot move \(tmp) into place: \(String(cString: strerror(errno)))")
        }
    }

    private func generate(into path: String, progress: ((Double) -> Void)?) throws {
        let db = try Database(path: path, readOnly: false, create: true)
        // One transaction, no journal and no syncs while generating: the file is a temporary
        // that is thrown away on any failure.
        try db.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536")
        progress?(0)
        try db.transaction("EXCLUSIVE") {
            for statement in CatalogSQL.radiantSchemaStatements { try db.execute(statement) }
            var generator = Generator(products: products, seed: seed)
            try generator.write(db, progress: progress)
        }
        try db.execute("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL")
        progress?(1)
    }
}

// MARK: - Random numbers

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same sequence on every platform.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    @inline(__always)
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in 0..<n (n > 0), by multiply-high (Lemire), bias negligible for these n.
    @inline(__always)
    mutating func int(_ n: Int) -> Int {
        guard n > 1 else { return 0 }
        return Int(next().multipliedFullWidth(by: UInt64(n)).high)
    }

    /// True with probability `permille`/1000.
    @inline(__always)
    mutating func chance(_ permille: Int) -> Bool { int(1000) < permille }

    @inline(__always)
    mutating func pick<T>(_ array: [T]) -> T { array[int(array.count)] }

    mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        for i in stride(from: array.count - 1, to: 0, by: -1) {
            array.swapAt(i, int(i + 1))
        }
    }
}

// MARK: - Generator

/// Fixed-position quirks: each is given to one product so small catalogs have them all.
private struct Forced: OptionSet {
    let rawValue: UInt32
    static let intID = Forced(rawValue: 1 << 0)
    static let textID = Forced(rawValue: 1 << 1)
    static let lowerID = Forced(rawValue: 1 << 2)
    static let dupIntID = Forced(rawValue: 1 << 3)
    static let dupTextID = Forced(rawValue: 1 << 4)
    static let emptyMfg = Forced(rawValue: 1 << 5)
    static let spacedMfg = Forced(rawValue: 1 << 6)
    static let caseMfg = Forced(rawValue: 1 << 7)
    static let nonLeafCat = Forced(rawValue: 1 << 8)
    static let missingCat = Forced(rawValue: 1 << 9)
    static let orphanCat = Forced(rawValue: 1 << 10)
    static let cycleCat = Forced(rawValue: 1 << 11)
    static let selfCat = Forced(rawValue: 1 << 12)
    static let missingKey = Forced(rawValue: 1 << 13)
    static let spacedKey = Forced(rawValue: 1 << 14)
    static let emptyKey = Forced(rawValue: 1 << 15)
    static let mojibake = Forced(rawValue: 1 << 16)
    static let noBreak = Forced(rawValue: 1 << 17)
    static let edgeSpaces = Forced(rawValue: 1 << 18)
    static let edgeControls = Forced(rawValue: 1 << 19)
    static let emptyDescription = Forced(rawValue: 1 << 20)
    static let orphanKit = Forced(rawValue: 1 << 21)
    static let spacedName = Forced(rawValue: 1 << 22)
    static let noKit = Forced(rawValue: 1 << 23)
    static let layout1 = Forced(rawValue: 1 << 24)
    static let layout2 = Forced(rawValue: 1 << 25)

    /// In the order of their positions (i * N / 50 for odd i); the two duplicates come after
    /// the products whose ids they copy (product 0 and the `textID` one).
    static let placed: [Forced] = [
        .textID, .lowerID, .emptyMfg, .spacedMfg, .caseMfg, .nonLeafCat, .missingCat, .orphanCat,
        .cycleCat, .selfCat, .missingKey, .spacedKey, .emptyKey, .mojibake, .noBreak, .edgeSpaces,
        .edgeControls, .emptyDescription, .orphanKit, .dupIntID, .dupTextID, .spacedName, .noKit,
        .layout1,
    ]
}

private struct Generator {
    struct Node {
        var id: Int
        var title: String
        var icon: String
        var level: Int
        var parent: Int
        var hasChildren = false
        /// For nodes that hold products: the range of their names in `entries`.
        var entryStart = 0
        var entryCount = 0
    }

    struct Family {
        let manufacturer: String
        let kind: Int
    }

    /// One product name of the tree: its node, family, name and file-name slug.
    struct Entry {
        let node: Int
        let family: Int
        let name: String
        let slug: String
    }

    enum ProductID {
        case integer(Int64)
        case text(String)

        var text: String {
            switch self {
            case .integer(let v): return String(v)
            case .text(let s): return s
            }
        }
    }

    let productCount: Int
    var rng: SplitMix64

    var nodes: [Node] = []
    var families: [Family] = []
    var entries: [Entry] = []
    /// Node indices that hold products (leaves of the tree).
    var productNodes: [Int] = []
    /// Node indices of the tree that have children.
    var innerNodes: [Int] = []
    /// Ids below the largest tree id that belong to no row (deleted nodes).
    var gapIDs: [Int] = []
    var orphanNodes: [Int] = []
    var cycleNodes: [Int] = []
    var selfNode = 0
    /// Extra nodes (above 560 products): (node index, the tree leaf it copies).
    var extraNodes: [(node: Int, base: Int)] = []

    /// Template keys per kind: [layout 0, layout 1, layout 2, extra...].
    var templateKeys: [[Int]] = []
    var unusedTemplateKeys: [Int] = []
    var extraManufacturers: [String] = []

    init(products: Int, seed: UInt64) {
        productCount = products
        rng = SplitMix64(seed: seed)
    }

    var scale: Double { Double(productCount) / 560 }

    func scaled(_ base: Int) -> Int { max(base, Int((Double(base) * scale).rounded())) }

    mutating func write(_ db: Database, progress: ((Double) -> Void)?) throws {
        buildTree()
        try writeHierarchy(db)
        try writeManufacturers(db)
        try writeTemplates(db)
        try db.execute("INSERT INTO version (versionid, updatecatalogrow, updateassetrow) VALUES (6, '', '')")
        progress?(0.02)
        try writeProducts(db, progress: progress)
    }

    // MARK: hierarchy

    mutating func buildTree() {
        var stack: [Int] = []
        var nextID = 1
        for line in DemoCatalog.tree.split(separator: "\n", omittingEmptySubsequences: true) {
            let indent = line.prefix(while: { $0 == " " }).count / 2
            let content = line.drop(while: { $0 == " " })
            if content.hasPrefix("@") {
                guard indent >= 1, indent - 1 < stack.count else { continue }
                addFamily(String(content.dropFirst()), to: stack[indent - 1])
                continue
            }
            let parts = content.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
            let title = String(parts[0]).trimmingASCIIWhitespace()
            let icon = parts.count > 1 ? String(parts[1]).trimmingASCIIWhitespace() : ""
            if stack.count > indent { stack.removeLast(stack.count - indent) }
            // A deleted node before each top-level category after the first, and now and then.
            if (indent == 0 && !nodes.isEmpty) || rng.chance(80) {
                gapIDs.append(nextID)
                nextID += 1
            }
            let parent = stack.last.map { nodes[$0].id } ?? 0
            if let p = stack.last { nodes[p].hasChildren = true }
            nodes.append(Node(id: nextID, title: title, icon: icon, level: indent + 1, parent: parent))
            stack.append(nodes.count - 1)
            nextID += 1
        }
        for (i, node) in nodes.enumerated() {
            if node.entryCount > 0 { productNodes.append(i) }
            if node.hasChildren { innerNodes.append(i) }
        }

        // Quirk rows, added after the tree as a real catalog's later edits would be.
        for (title, level) in DemoCatalog.orphanTitles {
            nodes.append(Node(id: nextID, title: title, icon: rng.chance(500) ? "icon_misc.png" : "",
                              level: level, parent: rng.pick(gapIDs)))
            orphanNodes.append(nodes.count - 1)
            nextID += 1 + rng.int(2)
        }
        let adoptive = orphanNodes[2]
        nodes[adoptive].hasChildren = true
        nodes.append(Node(id: nextID, title: DemoCatalog.orphanChildTitle.0, icon: "",
                          level: DemoCatalog.orphanChildTitle.1, parent: nodes[adoptive].id))
        orphanNodes.append(nodes.count - 1)
        nextID += 1
        let a = nextID, b = nextID + 1
        nodes.append(Node(id: a, title: DemoCatalog.cycleTitles[0].0, icon: "icon_specials.png",
                          level: DemoCatalog.cycleTitles[0].1, parent: b, hasChildren: true))
        nodes.append(Node(id: b, title: DemoCatalog.cycleTitles[1].0, icon: "",
                          level: DemoCatalog.cycleTitles[1].1, parent: a, hasChildren: true))
        cycleNodes = [nodes.count - 2, nodes.count - 1]
        nextID += 3
        nodes.append(Node(id: nextID, title: DemoCatalog.selfParentTitle.0, icon: "icon_clearance.png",
                          level: DemoCatalog.selfParentTitle.1, parent: nextID, hasChildren: true))
        selfNode = nodes.count - 1
        nextID += 2

        // More products, more categories: siblings of the leaves, "Alexa 35 (Bay 2)".
        let extra = scaled(nodes.count) - nodes.count
        if extra > 0, !productNodes.isEmpty {
            extraNodes.reserveCapacity(extra)
            nodes.reserveCapacity(nodes.count + extra)
            for k in 0..<extra {
                let base = productNodes[k % productNodes.count]
                let bay = k / productNodes.count + 2
                let b = nodes[base]
                nodes.append(Node(id: nextID, title: "\(b.title) (Bay \(bay))", icon: "",
                                  level: b.level, parent: b.parent))
                extraNodes.append((nodes.count - 1, base))
                nextID += rng.chance(50) ? 2 : 1
            }
        }
    }

    /// `@ Manufacturer ; kind ; pattern` → one entry per expansion of the pattern.
    mutating func addFamily(_ spec: String, to node: Int) {
        let parts = spec.split(separator: ";", omittingEmptySubsequences: false)
            .map { String($0).trimmingASCIIWhitespace() }
        guard parts.count == 3,
              let kind = DemoCatalog.kinds.firstIndex(where: { $0.name == parts[1] }) else { return }
        families.append(Family(manufacturer: parts[0], kind: kind))
        if nodes[node].entryCount == 0 { nodes[node].entryStart = entries.count }
        for name in Self.expand(parts[2]) {
            entries.append(Entry(node: node, family: families.count - 1, name: name, slug: Self.slug(name)))
            nodes[node].entryCount += 1
        }
    }

    /// "Cooke S4/i {25,32}mm" → ["Cooke S4/i 25mm", "Cooke S4/i 32mm"]; groups multiply.
    static func expand(_ pattern: String) -> [String] {
        guard let open = pattern.firstIndex(of: "{"),
              let close = pattern[open...].firstIndex(of: "}") else { return [pattern] }
        let head = pattern[..<open]
        let options = pattern[pattern.index(after: open)..<close].split(separator: ",", omittingEmptySubsequences: false)
        let tails = expand(String(pattern[pattern.index(after: close)...]))
        var names: [String] = []
        for option in options {
            for tail in tails { names.append(head + option + tail) }
        }
        return names
    }

    /// "Cooke S4/i 32mm" → "cooke_s4_i_32mm".
    static func slug(_ name: String) -> String {
        var out: [UInt8] = []
        var lastUnderscore = true
        for b in name.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(b); lastUnderscore = false
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                out.append(b + 32); lastUnderscore = false
            default:
                if !lastUnderscore { out.append(UInt8(ascii: "_")); lastUnderscore = true }
            }
        }
        if out.last == UInt8(ascii: "_") { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }

    func writeHierarchy(_ db: Database) throws {
        let insert = try db.prepare("INSERT INTO hierarchy (id, menu_title, menu_icon, level, parent) VALUES (?, ?, ?, ?, ?)")
        for node in nodes.sorted(by: { $0.id < $1.id }) {
            insert.reset()
            insert.bind(node.id, at: 1)
            insert.bind(node.title, at: 2)
            insert.bind(node.icon, at: 3)
            insert.bind(node.level, at: 4)
            insert.bind(node.parent, at: 5)
            try insert.run()
        }
    }

    // MARK: mfg

    mutating func writeManufacturers(_ db: Database) throws {
        var names: [String] = []
        var seen = Set<String>()
        func add(_ name: String) { if seen.insert(name).inserted { names.append(name) } }
        // Product manufacturers with no mfg row at all.
        let unlisted: Set<String> = ["Hydroflex", "Innovision", "Jimmy Jib"]
        for family in families where !unlisted.contains(family.manufacturer) { add(family.manufacturer) }
        for name in DemoCatalog.moreManufacturers where names.count < 120 { add(name) }
        while names.count < 120 {
            let name = rng.pick(DemoCatalog.inventedPrefixes) + rng.pick(DemoCatalog.inventedSuffixes)
            if seen.insert(name).inserted { names.append(name) }
        }
        rng.shuffle(&names)

        var rows: [(name: String, logo: String)] = names.map { name in
            (name, rng.chance(100) ? "" : (rng.chance(30) ? "logo_\(Self.slug(name)).png " : "logo_\(Self.slug(name)).png"))
        }
        // Leitz only as 'Leitz ', Zeiss's lowest mfgid without a logo.
        for i in rows.indices {
            if rows[i].name == "Leitz" { rows[i].name = "Leitz " }
            if rows[i].name == "Zeiss" { rows[i].logo = "" }
            if rows[i].name == "ARRI" || rows[i].name == "Cooke" { rows[i].logo = "logo_\(Self.slug(rows[i].name)).png" }
        }
        rows += [
            ("ARRI", "logo_arri_2019.png"), ("Zeiss", "logo_zeiss.png"), ("Cooke ", "logo_cooke_old.png"),
            ("Arri", "logo_arri_old.png"), ("Angenieux  ", "logo_angenieux.png"), ("Sony\t", ""),
            ("Tiffen", "logo_tiffen_2.png"), ("TIFFEN", "logo_tiffen_caps.png"), ("", "logo_unknown.png"),
            ("Matthews ", ""), ("RED", "logo_red_digital_cinema.png"), ("Aputure ", "logo_aputure.png"),
            ("SmallHD", ""), ("Teradek", "logo_teradek_new.png"),
        ]
        let extra = scaled(rows.count) - rows.count
        if extra > 0 {
            extraManufacturers.reserveCapacity(extra)
            for k in 0..<extra {
                let name = rng.pick(DemoCatalog.inventedPrefixes) + rng.pick(DemoCatalog.inventedSuffixes) + " \(k + 2)"
                extraManufacturers.append(name)
                rows.append((rng.chance(20) ? name + " " : name, rng.chance(100) ? "" : "logo_\(Self.slug(name)).png"))
            }
        }
        let insert = try db.prepare("INSERT INTO mfg (mfgid, manufacturer, logo) VALUES (?, ?, ?)")
        var mfgid = 1 + rng.int(3)
        for row in rows {
            insert.reset()
            insert.bind(mfgid, at: 1)
            insert.bind(row.name, at: 2)
            insert.bind(row.logo, at: 3)
            try insert.run()
            mfgid += 1 + (rng.chance(200) ? 1 + rng.int(5) : 0)
        }
    }

    // MARK: DetailsKeyValues

    mutating func writeTemplates(_ db: Database) throws {
        let kinds = DemoCatalog.kinds
        var pool = Array(1...60)
        rng.shuffle(&pool)
        let baseCount = kinds.count * 3
        templateKeys = kinds.indices.map { k in Array(pool[(k * 3)..<(k * 3 + 3)]) }
        unusedTemplateKeys = Array(pool[baseCount...]) + [999]

        var rows: [(key: Int, kind: Int, layout: Int)] = []
        for (k, keys) in templateKeys.enumerated() {
            for (layout, key) in keys.enumerated() { rows.append((key, k, layout)) }
        }
        let extra = scaled(baseCount) - baseCount
        var key = 100
        for e in 0..<max(0, extra) {
            key += 1 + rng.int(3)
            let kind = e % kinds.count
            templateKeys[kind].append(key)
            rows.append((key, kind, (e / kinds.count) % 3))
        }
        rows.sort { $0.key < $1.key }

        let columns = (0..<20).map { "spec_\(Self.letter($0))" }.joined(separator: ", ")
        let insert = try db.prepare(
            "INSERT INTO DetailsKeyValues (DetailsKey, \(columns), ReferenceCategory) VALUES (?\(String(repeating: ", ?", count: 21)))")
        for row in rows {
            let kind = kinds[row.kind]
            var labels = [String](repeating: "", count: 20)
            for (i, spec) in kind.specs.enumerated() { labels[i] = Self.letter(i) + spec.label }
            switch row.layout {
            case 1:
                labels[1] += " "
                labels[2] = "c06)"
                labels[min(4, kind.specs.count - 1)] = Self.letter(min(4, kind.specs.count - 1))
                labels[17] = "rBarcode"; labels[18] = "sLocation "; labels[19] = "tNotes"
            case 2:
                labels[min(5, kind.specs.count - 1)] = "06)"
                labels[2] = "-" + kind.specs[2].label
            default:
                break
            }
            insert.reset()
            insert.bind(row.key, at: 1)
            for (i, label) in labels.enumerated() { insert.bind(label, at: Int32(i + 2)) }
            insert.bind(row.layout == 2 ? "" : kind.reference, at: 22)
            try insert.run()
        }
    }

    static let letters = (0..<20).map { String(UnicodeScalar(UInt8(ascii: "a") + UInt8($0))) }
    static func letter(_ i: Int) -> String { letters[i] }

    // MARK: Product_Catalog and Product_Assets

    mutating func forcedQuirks() -> [Int: Forced] {
        var forced: [Int: Forced] = [:]
        guard productCount >= 100 else { return forced }
        forced[0, default: []].insert(.intID)
        for (i, quirk) in Forced.placed.enumerated() {
            forced[(2 * i + 1) * productCount / 50, default: []].insert(quirk)
        }
        forced[productCount - 1, default: []].insert(.layout2)
        return forced
    }

    mutating func writeProducts(_ db: Database, progress: ((Double) -> Void)?) throws {
        let productSQL = """
            INSERT INTO Product_Catalog (bracketvid, dynamicvid, colorrendvid, promovid, gscreenvid, \
            product_ID, Product, Manufacturer, cat, displayorder, display_Thumbnail, display_Image01, \
            display_Image02, display_Image03, display_Image04, display_Image05, panorama, description, \
            info_DetailsKey, info_spec_a, info_spec_b, info_spec_c, info_spec_d, info_spec_e, info_spec_f, \
            info_spec_g, info_spec_h, info_spec_i, info_spec_j, info_spec_k, info_spec_l, info_spec_m, \
            info_spec_n, info_spec_o, info_spec_p, info_spec_q, keyid) \
            VALUES (\(Array(repeating: "?", count: 37).joined(separator: ", ")))
            """
        guard !entries.isEmpty else { return }
        let product = try db.prepare(productSQL)
        let kit = try db.prepare("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES (?, ?, ?)")
        let kinds = DemoCatalog.kinds
        let forcedAt = forcedQuirks()
        var order = Array(entries.indices)
        rng.shuffle(&order)

        var keyid = 0
        var dupIntSource: ProductID?
        var dupTextSource: ProductID?
        let step = max(1, productCount / 1000)
        for i in 0..<productCount {
            let forced = forcedAt[i] ?? []

            // Which name, under which node.
            let entry: Entry
            var cat: Int
            if i < entries.count {
                entry = entries[order[i]]
                cat = nodes[entry.node].id
            } else if !extraNodes.isEmpty {
                let j = i - entries.count
                let extra = extraNodes[j % extraNodes.count]
                let base = nodes[extra.base]
                entry = entries[base.entryStart + (j / extraNodes.count + rng.int(4)) % base.entryCount]
                cat = nodes[extra.node].id
            } else {
                entry = entries[order[i % entries.count]]
                cat = nodes[entry.node].id
            }
            let family = families[entry.family]
            let kind = kinds[family.kind]

            if forced.contains(.nonLeafCat) || rng.chance(25) {
                cat = nodes[rng.pick(innerNodes)].id
            } else if forced.contains(.orphanCat) || rng.chance(6) {
                cat = nodes[rng.pick(orphanNodes)].id
            } else if forced.contains(.cycleCat) || rng.chance(4) {
                cat = nodes[rng.pick(cycleNodes)].id
            } else if forced.contains(.selfCat) || rng.chance(3) {
                cat = nodes[selfNode].id
            } else if forced.contains(.missingCat) || rng.chance(7) {
                cat = rng.chance(200) ? 0 : rng.pick(gapIDs)
            }

            // product_ID
            var productID: ProductID
            let idRoll = rng.int(1000)
            if forced.contains(.textID) || (!forced.contains(.intID) && !forced.contains(.lowerID) && idRoll < 60) {
                productID = .text("K\(1000 + i)")
            } else if forced.contains(.lowerID) || (!forced.contains(.intID) && idRoll < 67) {
                productID = .text("k\(1000 + i)")
            } else {
                productID = .integer(Int64(10_000 + 2 * i + rng.int(2)))
            }
            if i == 0 { dupIntSource = productID }
            if forced.contains(.textID) { dupTextSource = productID }
            if forced.contains(.dupIntID), let id = dupIntSource { productID = id }
            if forced.contains(.dupTextID), let id = dupTextSource { productID = id }

            var name = entry.name
            if forced.contains(.spacedName) || rng.chance(15) { name += " " }

            var manufacturer = family.manufacturer
            if i >= entries.count, !extraManufacturers.isEmpty, rng.chance(150) {
                manufacturer = rng.pick(extraManufacturers)
            }
            let mfgRoll = rng.int(1000)
            if forced.contains(.emptyMfg) || (forced.isEmpty && mfgRoll < 20) {
                manufacturer = ""
            } else if forced.contains(.spacedMfg) || (forced.isEmpty && mfgRoll < 50) {
                manufacturer += " "
            } else if forced.contains(.caseMfg) || (forced.isEmpty && mfgRoll < 70) {
                manufacturer = manufacturer == "ARRI" ? "Arri" : Self.upper(manufacturer)
            }

            product.reset()
            // Videos.
            for v in 0..<5 {
                if rng.chance(25) {
                    let video = v == 3 ? "\(entry.slug)_promo.mp4" : "https://vimeo.com/\(100_000_000 + rng.int(900_000_000))"
                    product.bind(video, at: Int32(v + 1))
                } else {
                    product.bind("", at: Int32(v + 1))
                }
            }
            switch productID {
            case .integer(let v): product.bind(v, at: 6)
            case .text(let s): product.bind(s, at: 6)
            }
            product.bind(name, at: 7)
            product.bind(manufacturer, at: 8)
            product.bind(cat, at: 9)
            product.bind(1 + rng.int(40), at: 10)
            let thumbRoll = rng.int(1000)
            product.bind(thumbRoll < 50 ? "" : (thumbRoll < 80 ? "\(entry.slug)_thumb.jpg " : "\(entry.slug)_thumb.jpg"), at: 11)
            let imageCount = rng.int(6)
            for k in 0..<5 {
                if k < imageCount {
                    let spaced = rng.chance(30)
                    product.bind("\(entry.slug)_0\(k + 1).jpg\(spaced ? " " : "")", at: Int32(12 + k))
                } else {
                    product.bind("", at: Int32(12 + k))
                }
            }
            product.bind(rng.chance(100) ? "\(entry.slug)_360.jpg" : "", at: 17)
            product.bind(description(name: entry.name, kind: kind, forced: forced), at: 18)

            // Spec template and values.
            let keys = templateKeys[family.kind]
            var layout = 0
            var templateKey: Int
            if forced.contains(.layout1) { layout = 1 } else if forced.contains(.layout2) { layout = 2 }
            if forced.isEmpty {
                let roll = rng.int(10)
                layout = roll < 7 ? 0 : (roll < 9 ? 1 : 2)
            }
            templateKey = keys[layout]
            if i >= entries.count, keys.count > 3, rng.chance(500) {
                templateKey = keys[3 + rng.int(keys.count - 3)]
            }
            let keyRoll = rng.int(1000)
            let keyText: String
            if forced.contains(.missingKey) || (forced.isEmpty && keyRoll < 40) {
                keyText = String(rng.pick(unusedTemplateKeys))
            } else if forced.contains(.spacedKey) || (forced.isEmpty && keyRoll < 70) {
                keyText = " \(templateKey) "
            } else if forced.contains(.emptyKey) || (forced.isEmpty && keyRoll < 120) {
                keyText = ""
            } else if forced.isEmpty && keyRoll < 125 {
                keyText = "+\(templateKey)"
            } else {
                keyText = String(templateKey)
            }
            product.bind(keyText, at: 19)
            for x in 0..<17 {
                var value = ""
                if x < kind.specs.count {
                    let roll = rng.int(1000)
                    if roll >= 60 {
                        value = rng.pick(kind.specs[x].values)
                        if roll < 90 { value += " " } else if roll < 100 { value = "  " + value }
                    }
                } else if rng.chance(5) {
                    value = "n/a"
                }
                product.bind(value, at: Int32(20 + x))
            }
            keyid += rng.chance(30) ? 2 : 1
            product.bind(keyid, at: 37)
            try product.run()

            // Kit.
            if !forced.contains(.noKit) {
                try writeKit(kit, kitID: productID.text, assets: kind.assets, size: rng.chance(100) ? 0 : 2 + rng.int(15))
            }
            if forced.contains(.orphanKit) || rng.chance(12) {
                let kitID = rng.chance(500) ? String(4_000 + rng.int(5_000)) : "K0\(100 + rng.int(900))"
                try writeKit(kit, kitID: kitID, assets: kinds[kinds.count - 1].assets, size: 1 + rng.int(6))
            }

            if let progress, i % step == 0 {
                progress(0.02 + 0.97 * Double(i) / Double(productCount))
            }
        }
    }

    mutating func writeKit(_ kit: Statement, kitID: String, assets: [String], size: Int) throws {
        guard size > 0 else { return }
        let start = rng.int(assets.count)
        for k in 0..<size {
            kit.reset()
            kit.bind(kitID, at: 1)
            kit.bind(assets[(start + k) % assets.count], at: 2)
            let roll = rng.int(1000)
            let qty = roll < 700 ? "1" : roll < 850 ? "2" : roll < 900 ? "4" : roll < 930 ? "10" : roll < 980 ? "" : "x"
            kit.bind(qty, at: 3)
            try kit.run()
        }
    }

    mutating func description(name: String, kind: DemoCatalog.Kind, forced: Forced) -> String {
        if forced.contains(.emptyDescription) || (forced.isEmpty && rng.chance(30)) { return "" }
        var d = rng.pick(kind.blurbs)
        if rng.chance(400) { d = name + ". " + d }
        if rng.chance(500) { d += " " + rng.pick(DemoCatalog.genericSentences) }
        if forced.contains(.mojibake) || (forced.isEmpty && rng.chance(40)) {
            d += " " + rng.pick(DemoCatalog.mojibakeSentences)
        }
        if forced.contains(.noBreak) {
            d += " " + DemoCatalog.noBreakSentences[0] + "\u{00A0}"
        } else if forced.isEmpty && rng.chance(20) {
            d += " " + rng.pick(DemoCatalog.noBreakSentences)
        }
        if forced.contains(.edgeSpaces) || (forced.isEmpty && rng.chance(80)) {
            d = "  " + d + " "
        } else if forced.contains(.edgeControls) || (forced.isEmpty && rng.chance(30)) {
            d = "\t" + d + (rng.chance(500) ? "\r\n" : "\n")
        }
        return d
    }

    /// ASCII uppercase ("Cooke" → "COOKE").
    static func upper(_ s: String) -> String {
        String(decoding: s.utf8.map { ($0 >= 97 && $0 <= 122) ? $0 - 32 : $0 }, as: UTF8.self)
    }
}
