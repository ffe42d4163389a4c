// prof-analyze ranks FILE [--window ...] [--format table|csv|json]
// The ranks of a distributed run step by step: HTA's temporal breakdown, communication/
// computation overlap, time blocked in collectives and the straggler of each step
// (analyzer/ranks; docs/multi-gpu.md, "Ranks analysis").

#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "Cli.h"
#include "fuselens/db/Reader.h"
#include "ranks/Ranks.h"
#include "ranks/RanksFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct RanksOptions {
  std::string file;
  std::string format = "table";
  WindowOptions window;
};

int run_ranks(const RanksOptions& o) {
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(o.window, spec, steps)) return rc;
  db::Reader reader(o.file);
  if (reader.processes().empty() && reader.process_ranks().empty()) {
    return fail("'" + o.file + "': the workload never initialized CUDA; no ranks to describe",
                kExitCapture);
  }
  // Each rank's steps are numbered over the whole capture: the analysis reads it before the
  // window restricts the reader.
  analyzer::RanksReport report;
  analyzer::Window window;
  if (const int rc = open_window(reader, spec, steps, window, [&](const analyzer::Window& w) {
        report = analyzer::analyze_ranks(reader, &w, steps);
      })) {
    return rc;
  }
  std::ostringstream text;
  analyzer::write_ranks(text, report, output_format(o.format));
  write_windowed(std::cout, text.str(), output_format(o.format), {&window});
  std::cout.flush();
  return std::cout ? kExitOk : fail("writing to standard output failed", kExitCapture);
}

}  // namespace

Runner add_ranks_command(CLI::App& app) {
  auto o = std::make_shared<RanksOptions>();
  auto* cmd = add_command(app, "ranks",
                          "Ranks of a distributed run per step: HTA's temporal breakdown, "
                          "communication/computation overlap, time blocked in collectives and "
                          "the straggler rank of each step (docs/multi-gpu.md)");
  cmd->footer(footer("ranks") +
              "\n  ranks: 1 also when the capture holds no process (the workload never "
              "initialized CUDA)");
  cmd->add_option("FILE", o->file, "Capture written by prof-run")->required();
  add_format_option(cmd, o->format);
  add_window_options(cmd, o->window);
  return [o] { return run_ranks(*o); };
}

}  // namespace fuselens::cli
