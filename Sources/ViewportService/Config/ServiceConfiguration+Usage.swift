extension ServiceConfiguration {
    /// `viewportd --help`: the settings table with aligned columns.
    public static var usage: String {
        let header = ["key", "environment", "flag", "default"]
        let rows = [header] + Setting.all.map { [$0.name, $0.environmentName, $0.flag, $0.defaultText] }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let table = rows.map { row in
            "  " + row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] + 2 - cell.count)
            }.joined()
        }
        return """
            viewportd — view recycling for scroll views, over HTTP

            usage: viewportd [--config PATH] [--FLAG VALUE | --FLAG=VALUE …]
                   viewportd replay --layout FILE --trace FILE [options]   (viewportd replay --help)
                   viewportd --help

            Settings come from config/viewportd.json (or --config PATH / VIEWPORTD_CONFIG), then
            environment variables, then flags; each overrides the one before. Unknown flags and
            stray arguments are refused (exit 2). Durations are in seconds, sizes in bytes.

            """ + "\n\n" + table.joined(separator: "\n")
    }

    /// The settings table of docs/operations/configuration.md (Markdown), from the same table as
    /// `--help`; a test keeps that copy equal to it.
    static var markdownSettingsTable: String {
        var lines = ["| key | environment | flag | default | meaning |", "|---|---|---|---|---|"]
        for setting in Setting.all {
            let value = setting.show(ServiceConfiguration())
            let shown = setting.isSecret || value == "none" ? "none" : "`\(value)`"
            lines.append("| `\(setting.name)` | `\(setting.environmentName)` | `\(setting.flag)` | \(shown) | \(setting.summary) |")
        }
        return lines.joined(separator: "\n")
    }
}
