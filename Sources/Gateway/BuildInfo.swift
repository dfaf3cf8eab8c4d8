import CJansson
import CSQLite
import CWebSockets

/// What `catalog-gateway --version` prints and `serve` logs at start: the gateway's version and
/// the versions of the C libraries it is running with (the shared objects loaded, which may be
/// newer than the headers it was built against).
public enum BuildInfo {
    /// The gateway's version (semantic versioning; 0.x while the API contract may still change).
    public static let version = "0.43.0"

    /// "SQLite 3.40.1, libwebsockets 4.1.6, jansson 2.14".
    public static var libraries: String {
        let v = libraryVersions
        return "SQLite \(v.sqlite), libwebsockets \(v.libwebsockets), jansson \(v.jansson)"
    }

    /// Each library's version (also /metrics' build_info labels).
    public static var libraryVersions: (sqlite: String, libwebsockets: String, jansson: String) {
        // lws appends "-" and its git hash, which Debian's build leaves empty ("4.1.6-").
        var lws = String(cString: lws_get_library_version())
        while lws.hasSuffix("-") { lws.removeLast() }
        return (String(cString: sqlite3_libversion()), lws, String(cString: jansson_version_str()))
    }

    /// Both, as `--version` prints them.
    public static var description: String { "catalog-gateway \(version) (\(libraries))" }
}
