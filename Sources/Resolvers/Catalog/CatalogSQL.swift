/// SQL shared by the catalog tools and the executor: the whitespace set that "trimmed" means in
/// SEMANTICS.md, the trim expressions built from it, and the Radiant schema itself.
public enum CatalogSQL {
    /// ASCII whitespace as C's isspace in the C locale: space, TAB, LF, CR, VT, FF. U+00A0 is not
    /// in it. Every trimming expression uses this exact text so that the `cg_` expression indexes
    /// match the executor's queries.
    public static let ws = "char(32,9,10,13,11,12)"

    /// `trim(<expr>, char(32,9,10,13,11,12))`.
    public static func trim(_ expression: String) -> String { "trim(\(expression), \(ws))" }

    /// The Radiant catalog schema, verbatim from the contract (radiant-schema.sql, as printed by
    /// the sqlite3 shell's `.schema`).
    public static let radiantSchema = #"""
CREATE TABLE sqlite_sequence(name,seq);
CREATE TABLE IF NOT EXISTS "Product_Assets" (
	 "assetID" integer NOT NULL PRIMARY KEY AUTOINCREMENT,
	 "kitID" text NOT NULL,
	 "asset" text NOT NULL,
	 "kitQTY" text NOT NULL
);
CREATE TABLE IF NOT EXISTS "DetailsKeyValues" (
	 "DetailsKey" INT (10,0) NOT NULL,
	 "spec_a" VARCHAR (10,0),
	 "spec_b" VARCHAR (10,0),
	 "spec_c" VARCHAR (10,0),
	 "spec_d" VARCHAR (10,0),
	 "spec_e" VARCHAR (10,0),
	 "spec_f" VARCHAR (10,0),
	 "spec_g" VARCHAR (10,0),
	 "spec_h" VARCHAR (10,0),
	 "spec_i" VARCHAR (10,0),
	 "spec_j" VARCHAR (10,0),
	 "spec_k" VARCHAR (10,0),
	 "spec_l" VARCHAR (10,0),
	 "spec_m" VARCHAR (10,0),
	 "spec_n" VARCHAR (10,0),
	 "spec_o" VARCHAR (10,0),
	 "spec_p" VARCHAR (10,0),
	 "spec_q" VARCHAR (10,0),
	 "spec_r" VARCHAR (10,0),
	 "spec_s" VARCHAR (10,0),
	 "spec_t" VARCHAR (10,0),
	 "ReferenceCategory" VARCHAR,
	PRIMARY KEY("DetailsKey") ON CONFLICT ABORT
);
CREATE TABLE IF NOT EXISTS "cart" (
	 "rfq_id" INT (10,0) NOT NULL,
	 "product_ID" VARCHAR (10,0),
	 "qty" NUMERIC (10,0) DEFAULT (0),
	 "comments" TEXT (225,0),
	 "photofield" BLOB,
	 "photofield2" BLOB,
	 "photofield3" BLOB,
	 "photofield4" BLOB,
	 "photofield5" BLOB,
	FOREIGN KEY ("product_ID") REFERENCES "_Product_Catalog_old_20130507" ("product_ID")
);
CREATE TABLE IF NOT EXISTS "mfg" (
	 "mfgid" integer,
	 "manufacturer" text,
	 "logo" text,
	PRIMARY KEY("mfgid")
);
CREATE TABLE IF NOT EXISTS "dictionary" (
	 "keyid" integer,
	 "searchwords" text,
	PRIMARY KEY("keyid")
);
CREATE TABLE IF NOT EXISTS "hierarchy" (
	 "id" integer NOT NULL,
	 "menu_title" TEXT(255,0) NOT NULL,
	 "menu_icon" TEXT(255,0) NOT NULL,
	 "level" integer,
	 "parent" integer NOT NULL,
	PRIMARY KEY("id")
);
CREATE TABLE IF NOT EXISTS "version" (
	 "versionid" integer,
	 "updatecatalogrow" integer,
	 "updateassetrow" integer,
	PRIMARY KEY("versionid")
);
CREATE TABLE rfq (rfq_id INT (10) PRIMARY KEY, projectname VARCHAR (120), estimated_start DATETIME (15), actual_start DATETIME (15), estimated_end DATETIME (15), actual_end DATETIME (15), productioncompany VARCHAR (25), addressline1_bill VARCHAR (50), addressline2_bill VARCHAR (50), city_bill VARCHAR (50), state_bill VARCHAR (2), zip_bill NUMERIC (5), bill_ship BOOLEAN (3), addressline1_ship VARCHAR (50), addressline2_ship VARCHAR (50), city_ship VARCHAR (50), state_ship VARCHAR (2), zip_ship NUMERIC (5), poc_name VARCHAR (120), poc_phone TEXT, poc_email VARCHAR (50), camdept_ac_name VARCHAR (120), camdept_ac2_name VARCHAR (120), camdept_dp_name VARCHAR (120), camdept_dit_name VARCHAR (120), acctpayble_poc_name VARCHAR (120), acctpayble_poc_phone NUMERIC (10), acctpayble_poc_email VARCHAR (50), authorized_prep_receive VARCHAR (225), authorized_billing VARCHAR (225), authorized_changes VARCHAR (225), pullorderdate DATETIME (20), clientprepdate DATETIME (20), clientshipdate DATETIME (20), clientreturndate DATETIME (20), is_current NUMERIC(1));
CREATE TABLE IF NOT EXISTS "Product_Catalog" (
	 "bracketvid" TEXT,
	 "dynamicvid" TEXT,
	 "colorrendvid" TEXT,
	 "promovid" TEXT,
	 "gscreenvid" TEXT,
	 "product_ID" integer,
	 "Product" text,
	 "Manufacturer" text,
	 "cat" integer,
	 "displayorder" integer,
	 "display_Thumbnail" text,
	 "display_Image01" text,
	 "display_Image02" text,
	 "display_Image03" text,
	 "display_Image04" text,
	 "display_Image05" text,
	 "panorama" text,
	 "description" text,
	 "info_DetailsKey" text,
	 "info_spec_a" text,
	 "info_spec_b" text,
	 "info_spec_c" text,
	 "info_spec_d" text,
	 "info_spec_e" text,
	 "info_spec_f" text,
	 "info_spec_g" text,
	 "info_spec_h" text,
	 "info_spec_i" text,
	 "info_spec_j" text,
	 "info_spec_k" text,
	 "info_spec_l" text,
	 "info_spec_m" text,
	 "info_spec_n" text,
	 "info_spec_o" text,
	 "info_spec_p" text,
	 "info_spec_q" text,
	 "keyid" integer,
	PRIMARY KEY("keyid")
);

"""#

    /// The statements of `radiantSchema` that create its ten tables, in order. The shell prints
    /// `CREATE TABLE sqlite_sequence(name,seq);`, which cannot be executed: SQLite creates that
    /// table itself with the first AUTOINCREMENT table (Product_Assets), so it is left out.
    public static let radiantSchemaStatements: [String] = radiantSchema
        .split(separator: ";")
        .map { String($0).trimmingASCIIWhitespace() }
        .filter { !$0.isEmpty && !$0.hasPrefix("CREATE TABLE sqlite_sequence") }

    /// The ten tables of a Radiant catalog, in schema order (sqlite_sequence included).
    public static let radiantTables = [
        "sqlite_sequence", "Product_Assets", "DetailsKeyValues", "cart", "mfg", "dictionary",
        "hierarchy", "version", "rfq", "Product_Catalog",
    ]
}

/// A catalog file that cannot be used: names the file and says why, in one line.
public struct CatalogFileError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path; self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

extension String {
    /// The string without leading/trailing ASCII whitespace (the CatalogSQL.ws set).
    func trimmingASCIIWhitespace() -> String {
        let bytes = Array(utf8)
        func isSpace(_ b: UInt8) -> Bool { b == 32 || (b >= 9 && b <= 13) }
        var lo = 0, hi = bytes.count
        while lo < hi, isSpace(bytes[lo]) { lo += 1 }
        while hi > lo, isSpace(bytes[hi - 1]) { hi -= 1 }
        return String(decoding: bytes[lo..<hi], as: UTF8.self)
    }
}
