import Foundation

/// Where the tests put their catalog files: one directory per test process, removed when the
/// process exits. A run creates a few hundred catalogs; without this they stayed in
/// the temporary directory run after run. Directories left by processes that no longer exist
/// (a crashed run) are removed when the first file of the next run is made.
public enum TestFiles {
    public static let directory: String = {
        let base = NSTemporaryDirectory()
        removeDeadRuns(in: base, prefix: "cg-tests-")
        let dir = base + "cg-tests-\(getpid())-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestFiles.directory) }
        return dir
    }()

    /// A path in the directory that no other call returns: `<stem>-<uuid>.<ext>`.
    public static func file(_ stem: String, ext: String = "sqlite") -> String {
        "\(directory)/\(stem)-\(UUID().uuidString).\(ext)"
    }
}

/// Removes `<prefix><pid>-…` entries of `base` whose process is gone.
func removeDeadRuns(in base: String, prefix: String) {
    for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
        guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
        if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: base + name) }
    }
}
