// prof-analyze: reads FuseLens captures and prints analyses of them. Each subcommand lives in
// its own <Name>Command.cpp and registers itself through Cli.h.
//
// Every error is one line on stderr starting "prof-analyze: error: "; exit codes are in
// cli::kFooter.

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "Cli.h"
#include "Color.h"
#include "ProgressLine.h"
#include "fuselens/db/Printable.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/Sqlite.h"

#ifndef FUSELENS_VERSION
#define FUSELENS_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  namespace cli = fuselens::cli;
  CLI::App app{"Analyze FuseLens captures: summaries in the style of Nsight Systems' nsys stats.",
               "prof-analyze"};
  app.set_version_flag("--version", FUSELENS_VERSION);
  app.require_subcommand(1);
  app.footer(cli::footer(""));
  // Colour of the diagnostics on standard error (tools/common/Color.h); analyses are never
  // coloured. Given before or after the subcommand: subcommands pass options they do not know
  // to prof-analyze (fallthrough).
  std::string color = "auto";
  app.add_option("--color", color,
                 "Colour the error/warning/note labels on standard error: auto (only on a "
                 "terminal), always or never; never with NO_COLOR set")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.fallthrough();
  // What opening a capture did beyond reading it (a hot journal rolled back or ignored).
  fuselens::db::set_notice_handler([](const std::string& line) {
    fuselens::tools::ProgressLine::erase_open_line();
    std::cerr << fuselens::tools::diagnostic_prefix("prof-analyze", fuselens::tools::Tone::Note)
              << fuselens::db::printable(line) << std::endl;
  });

  std::vector<std::pair<CLI::App*, cli::Runner>> commands;
  auto add = [&](cli::Runner (*registrar)(CLI::App&)) {
    cli::Runner runner = registrar(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
  };
  add(&cli::add_summary_command);
  add(&cli::add_cct_command);
  add(&cli::add_export_command);
  add(&cli::add_flags_command);
  add(&cli::add_compare_command);
  add(&cli::add_roofline_command);
  add(&cli::add_steps_command);
  add(&cli::add_modules_command);
  add(&cli::add_merge_command);
  add(&cli::add_ranks_command);
  add(&cli::add_convert_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::Error& e) {
    return cli::fail(std::string(e.what()) + " (see 'prof-analyze --help')", cli::kExitUsage);
  }
  fuselens::tools::set_diagnostics_colored(
      fuselens::tools::stderr_use_color(*fuselens::tools::parse_color_mode(color)));

  try {
    for (auto& [command, runner] : commands) {
      if (command->parsed()) return runner();
    }
    return cli::fail("no subcommand given", cli::kExitUsage);
  } catch (const fuselens::db::Error& e) {
    return cli::fail(e.what(), cli::kExitCapture);
  } catch (const std::exception& e) {
    return cli::fail(e.what(), cli::kExitCapture);
  }
}
