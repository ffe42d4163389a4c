// prof-analyze roofline FILE [--peaks auto|measured|t4|a100-sxm|h100-sxm|h100-pcie|h200|l4]
//                            [--peaks-file PEAKS.json] [--format table|csv|json]
//                            [--names demangled|short|mangled]
//
// Arithmetic intensity, achieved and attainable FLOP/s, bound and efficiency of every kernel
// (hardware counters) and NVTX range (counters and/or annotations) against the chosen peaks.

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "Cli.h"
#include "fuselens/db/Reader.h"
#include "roofline/Peaks.h"
#include "roofline/Roofline.h"
#include "roofline/RooflineFormat.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct RooflineOptions {
  std::string file;
  std::string peaks = "auto";
  std::string peaks_file;
  std::string format = "table";
  std::string names = "demangled";
  WindowOptions window;
};

int run_roofline(const RooflineOptions& options) {
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(options.window, spec, steps)) return rc;
  std::vector<analyzer::PeakProfile> custom;
  analyzer::RooflineOptions o;
  o.peaks = options.peaks;
  if (!options.peaks_file.empty()) {
    std::ifstream in(options.peaks_file);
    if (!in) return fail("cannot read the peaks file '" + options.peaks_file + "'", kExitUsage);
    std::stringstream text;
    text << in.rdbuf();
    try {
      custom = analyzer::parse_peaks(text.str());
    } catch (const analyzer::PeaksError& e) {
      return fail("'" + options.peaks_file + "': " + e.what(), kExitUsage);
    }
    o.profiles = &custom;
  }
  o.kernel_names = name_kind(options.names);
  fuselens::db::Reader reader(options.file);
  if (reader.processes().empty()) {
    return fail("'" + options.file + "': the workload never initialized CUDA; nothing to analyze",
                kExitCapture);
  }
  analyzer::Window window;
  if (const int rc = open_window(reader, spec, steps, window)) return rc;
  analyzer::RooflineReport report;
  try {
    report = analyzer::analyze_roofline(reader, o);
  } catch (const analyzer::PeaksError& e) {
    return fail(e.what(), kExitUsage);
  }
  std::ostringstream text;
  analyzer::write_roofline(text, report, output_format(options.format));
  write_windowed(std::cout, text.str(), output_format(options.format), {&window});
  std::cout.flush();
  if (!std::cout) return fail("writing the roofline to standard output failed", kExitCapture);
  return kExitOk;
}

}  // namespace

Runner add_roofline_command(CLI::App& app) {
  auto options = std::make_shared<RooflineOptions>();
  auto* cmd = add_command(
      app, "roofline",
      "Roofline efficiency of kernels (hardware counters, prof-run --metrics roofline) and NVTX "
      "ranges (counters and fuselens/annotate.h declarations) against datasheet or measured peaks");
  cmd->add_option("FILE", options->file, "Capture written by prof-run")->required();
  cmd->add_option("--peaks", options->peaks,
                  "Ceilings: auto (datasheet of the capture's GPU), measured (prof-ceilings), or a "
                  "profile id: t4, a100-sxm, h100-sxm, h100-pcie, h200, l4")
      ->capture_default_str();
  cmd->add_option(
      "--peaks-file", options->peaks_file,
      "Peak profiles to use instead of the built-in ones (format of share/fuselens/peaks.json)");
  add_format_option(cmd, options->format);
  add_names_option(cmd, options->names, "Kernel names: demangled, short or mangled");
  add_window_options(cmd, options->window);
  return [options] { return run_roofline(*options); };
}

}  // namespace fuselens::cli
