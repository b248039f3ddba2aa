import ArgumentParser

/// viewportd: view-recycling bookkeeping of scroll views, over HTTP (`serve`, the default), and
/// `replay`, an offline tool that runs a recorded trace through the planner.
@main
struct Viewportd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "viewportd",
        abstract: "View recycling for scroll views, over HTTP.",
        subcommands: [ServeCommand.self, ReplayCommand.self],
        defaultSubcommand: ServeCommand.self,
        // `--help` is the server's: its settings table (ServeCommand).
        helpNames: [])
}
