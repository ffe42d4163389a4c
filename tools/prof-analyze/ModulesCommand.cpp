// prof-analyze modules FILE [--depth N] [--format table|csv|json] [--window ...]
// The PyTorch module view (analyzer/modules; docs/calling-context.md, "Modules").

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "Cli.h"
#include "fuselens/db/Reader.h"
#include "modules/ModulesFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct ModulesOptions {
  std::string file;
  std::string format = "table";
  std::optional<int> depth;
  WindowOptions window;
};

int run_modules(const ModulesOptions& o) {
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(o.window, spec, steps)) return rc;
  db::Reader reader(o.file);
  analyzer::Window window;
  if (const int rc = open_window(reader, spec, steps, window)) return rc;
  const auto report = analyzer::module_report(reader);
  if (!report.available) {
    return fail("'" + o.file +
                    "': no module ranges in this window (record a PyTorch program with prof-run, "
                    "whose --torch-modules is on by default; docs/calling-context.md, \"Modules\")",
                kExitCapture);
  }
  std::ostringstream text;
  analyzer::write_modules(text, report, output_format(o.format), o.depth);
  write_windowed(std::cout, text.str(), output_format(o.format), {&window});
  std::cout.flush();
  return std::cout ? kExitOk : fail("writing to standard output failed", kExitCapture);
}

}  // namespace

Runner add_modules_command(CLI::App& app) {
  auto o = std::make_shared<ModulesOptions>();
  auto* cmd = add_command(app, "modules",
                          "PyTorch module view: GPU time, launches, bytes and peak memory per "
                          "nn.Module instance path, forward and backward, inclusive and exclusive");
  cmd->footer(footer("modules") +
              "\n  modules: 1 also when the capture (or the window) holds no module range");
  cmd->add_option("FILE", o->file, "Capture written by prof-run")->required();
  cmd->add_option("--depth", o->depth, "Hide modules deeper than N (roots are 0)")
      ->check(CLI::NonNegativeNumber);
  add_format_option(cmd, o->format);
  add_window_options(cmd, o->window);
  return [o] { return run_modules(*o); };
}

}  // namespace fuselens::cli
