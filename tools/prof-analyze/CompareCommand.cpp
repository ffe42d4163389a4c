// prof-analyze compare A.sqlite B.sqlite [--diff-threshold PCT]
// prof-analyze compare FILE --baseline GLOB --candidate GLOB
// prof-analyze compare EAGER.sqlite COMPILED.sqlite --by op|module  (torch.compile: fusions)
//   common: [--format table|csv|json] [--names short|demangled|mangled] [--fail-if-slower PCT]
//           [--nvtx-projection process|thread]  (which launches count for a range)
//           [--time gpu|span]  (what --fail-if-slower judges: GPU time or GPU span per iteration)

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "Cli.h"
#include "CommandProgress.h"
#include "compare/Compare.h"
#include "compare/CompareFormat.h"
#include "compiled/Compiled.h"
#include "compiled/CompiledFormat.h"
#include "fuselens/db/Reader.h"

namespace fuselens::cli {
namespace {

namespace analyzer = fuselens::analyzer;

struct CompareOptions {
  std::vector<std::string> files;
  std::string baseline, candidate;
  std::string format = "table";
  std::string names = "short";
  double diff_threshold = 5;
  std::optional<double> fail_if_slower;
  std::string time = "gpu";
  std::string projection = "process";
  std::string by;        ///< "op" or "module": eager vs torch.compile capture
  WindowOptions window;  ///< window "": steady for two captures, all with range patterns
};

/// Steps inside a resolved window (1 when it has none): per-step figures compare captures of
/// different lengths.
double steps_in(const analyzer::Window& w) {
  return w.first_step > 0 && w.last_step >= w.first_step ? w.last_step - w.first_step + 1 : 1;
}

int run_compiled(const CompareOptions& o) {
  if (o.files.size() != 2 || !o.baseline.empty() || !o.candidate.empty()) {
    return fail("compare: --by compares two captures, EAGER.sqlite COMPILED.sqlite", kExitUsage);
  }
  if (o.fail_if_slower) return fail("compare: --fail-if-slower does not apply to --by", kExitUsage);
  WindowOptions window_options = o.window;
  window_options.default_window = "steady";
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(window_options, spec, steps)) return rc;
  std::vector<analyzer::Window> windows(2);
  analyzer::CompiledReport report;
  CommandProgress progress("compare --by " + o.by);  // on a terminal, after 1 s
  try {
    fuselens::db::Reader eager(o.files[0]);
    fuselens::db::Reader compiled(o.files[1]);
    // Marks are emitted at compile time, before the steady steps: read them unrestricted.
    const auto kernels = analyzer::inductor_kernels(compiled);
    if (kernels.empty()) {
      return fail(
          "compare: " + o.files[1] + " holds no torch.compile kernels (no fuselens:inductor marks)",
          kExitCapture);
    }
    const auto extern_names = analyzer::extern_kernel_names(compiled, kernels);
    if (const int rc = open_window(eager, spec, steps, windows[0])) return rc;
    if (const int rc = open_window(compiled, spec, steps, windows[1])) return rc;
    report = analyzer::compare_compiled(
        eager, compiled, kernels,
        o.by == "module" ? analyzer::CompareBy::Module : analyzer::CompareBy::Op,
        steps_in(windows[0]), steps_in(windows[1]), extern_names);
  } catch (const analyzer::CompiledError& e) {
    return fail(std::string("compare: ") + e.what(), kExitCapture);
  }
  std::ostringstream text;
  analyzer::write_compiled(text, report, output_format(o.format));
  progress.done();
  std::vector<const analyzer::Window*> named;
  for (const auto& w : windows) named.push_back(&w);
  write_windowed(std::cout, text.str(), output_format(o.format), named);
  std::cout.flush();
  if (!std::cout) return fail("writing the comparison to standard output failed", kExitCapture);
  return kExitOk;
}

int run_compare(const CompareOptions& o) {
  if (!o.by.empty()) return run_compiled(o);
  const bool patterns = !o.baseline.empty() || !o.candidate.empty();
  if (o.files.size() == 1 && (o.baseline.empty() || o.candidate.empty())) {
    return fail("compare: one FILE needs --baseline GLOB and --candidate GLOB; or give two files",
                kExitUsage);
  }
  if (o.files.size() == 2 && patterns) {
    return fail("compare: --baseline/--candidate select ranges of one FILE; not with two files",
                kExitUsage);
  }

  WindowOptions window_options = o.window;
  window_options.default_window = patterns ? "all" : "steady";
  analyzer::WindowSpec spec;
  analyzer::StepOptions steps;
  if (const int rc = parse_window_options(window_options, spec, steps)) return rc;
  std::vector<analyzer::Window> windows(o.files.size());
  analyzer::CompareReport report;
  CommandProgress progress("compare");  // on a terminal, after 1 s (CommandProgress.h)
  try {
    if (o.files.size() == 1) {
      fuselens::db::Reader reader(o.files[0]);
      if (const int rc = open_window(reader, spec, steps, windows[0])) return rc;
      report =
          analyzer::compare_ranges(reader, o.baseline, o.candidate, nvtx_projection(o.projection));
    } else {
      fuselens::db::Reader a(o.files[0]);
      if (const int rc = open_window(a, spec, steps, windows[0])) return rc;
      fuselens::db::Reader b(o.files[1]);
      if (const int rc = open_window(b, spec, steps, windows[1])) return rc;
      analyzer::CompareOptions options;
      options.kernel_names = name_kind(o.names);
      options.diff_threshold_percent = o.diff_threshold;
      options.projection = nvtx_projection(o.projection);
      report = analyzer::compare_captures(a, b, options);
    }
  } catch (const analyzer::CompareError& e) {
    return fail(std::string("compare: ") + e.what(), kExitCapture);
  }
  std::ostringstream text;
  analyzer::write_compare(text, report, output_format(o.format));
  progress.done();
  std::vector<const analyzer::Window*> named;
  for (const auto& w : windows) named.push_back(&w);
  write_windowed(std::cout, text.str(), output_format(o.format), named);
  std::cout.flush();
  if (!std::cout) return fail("writing the comparison to standard output failed", kExitCapture);

  if (o.fail_if_slower) {
    const auto basis = o.time == "span" ? analyzer::TimeBasis::Span : analyzer::TimeBasis::Gpu;
    const auto slower = report.slower_than(*o.fail_if_slower, basis);
    if (!slower.empty()) {
      std::string list;
      for (const auto* e : slower) {
        list += (list.empty() ? "" : ", ") +
                fmt::format("{} ({:+.1f} %)", e->candidate->name, *e->slowdown_percent(basis));
      }
      std::cerr << "prof-analyze: slower than baseline by more than " << *o.fail_if_slower
                << " % in " << (basis == analyzer::TimeBasis::Span ? "GPU span" : "GPU time")
                << " per iteration: " << list << std::endl;
      return kExitFlagged;
    }
  }
  return kExitOk;
}

}  // namespace

Runner add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  auto* compare = add_command(
      app, "compare",
      "Baseline vs candidate per op and shape: two captures (A B), or two sets of NVTX ranges "
      "of one capture (--baseline/--candidate globs)");
  compare->add_option("FILES", options->files, "One capture with --baseline/--candidate, or two")
      ->required()
      ->expected(1, 2);
  compare->add_option("--baseline", options->baseline,
                      "Glob of the baseline NVTX ranges, e.g. 'gemm_bias_relu/unfused/*'");
  compare->add_option("--candidate", options->candidate,
                      "Glob of the candidate NVTX ranges, paired by what the wildcards matched");
  compare
      ->add_option("--by", options->by,
                   "EAGER COMPILED: a torch.compile capture against an eager capture of the same "
                   "script, each fused kernel against the eager kernels of its ATen ops, grouped "
                   "by op or by module")
      ->check(CLI::IsMember({"op", "module"}));
  add_format_option(compare, options->format);
  add_names_option(compare, options->names, "Kernel names in the kernel diff");
  add_nvtx_projection_option(compare, options->projection);
  add_window_options(compare, options->window, "");
  compare->get_option("--window")->default_str("steady (all with --baseline/--candidate)");
  compare
      ->add_option("--diff-threshold", options->diff_threshold,
                   "Kernel diff: faster/slower beyond +-PCT % of the median (two captures)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  compare
      ->add_option("--fail-if-slower", options->fail_if_slower,
                   "Exit with status 3 when a candidate is slower than its baseline by more "
                   "than PCT %")
      ->check(CLI::Range(0.0, 1e6));
  compare
      ->add_option("--time", options->time,
                   "What --fail-if-slower judges: gpu (median GPU time per iteration, the "
                   "kernels' durations summed) or span (median GPU span per iteration, first "
                   "start to last end, launch gaps included)")
      ->check(CLI::IsMember({"gpu", "span"}))
      ->capture_default_str();
  return [options] { return run_compare(*options); };
}

}  // namespace fuselens::cli
