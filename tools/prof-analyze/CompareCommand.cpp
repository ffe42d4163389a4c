// prof-analyze compare A.sqlite B.sqlite [--diff-threshold PCT]
// prof-analyze compare FILE --baseline GLOB --candidate GLOB
// prof-analyze compare EAGER.sqlite COMPILED.sqlite --by op|module  (torch.compile: fusions)
//   common: [--format table|csv|json] [--names short|demangled|mangled] [--fail-if-slower PCT]
//           [--nvtx-projection process|thread]  (which launches count for a range)
//           [--time gpu|span]  (what --fail-if-slower judges: GPU time or GPU span per iteration)
//           [--confidence LEVEL]  (of the gate's bootstrap interval; docs/compare-gate.md)
// --fail-if-slower exits 3 when a candidate is significantly slower than PCT %, 5 when none is
// but the interval of one contains the threshold (inconclusive), else 0 (CompareGate.h).

#include <fmt/format.h>

#include <cmath>
#include <exception>
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
#include "compare/CompareGate.h"
#include "compare/CompareSteps.h"
#include "compiled/Compiled.h"
#include "compiled/CompiledFormat.h"
#include "fuselens/db/Reader.h"
#include "store/AnalysisStore.h"

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
  double confidence = 0.95;
  std::string time = "gpu";
  std::string projection = "process";
  std::string by;        ///< "op" or "module": eager vs torch.compile capture
  WindowOptions window;  ///< window "": steady for two captures, all with range patterns
};

/// Rejects "nan", "inf" and the like, which CLI::Range lets through (every comparison with NaN
/// is false): `--fail-if-slower nan` used to switch the gate off silently.
const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value)) return {};
      } catch (const std::exception&) {
      }
      return "'" + text + "' is not a finite number";
    },
    "FINITE");

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

/// Lists `entries` as "NAME (+12.3 %) [speedup interval 0.850x to 0.910x]" for the gate's messages.
std::string gate_list(const std::vector<const analyzer::CompareEntry*>& entries,
                      analyzer::TimeBasis basis) {
  std::string list;
  for (const auto* e : entries) {
    const auto slowdown = e->slowdown_percent(basis);
    std::string item = e->candidate->name + " (";
    item += slowdown ? fmt::format("{:+.1f} %)", *slowdown) : std::string("no median)");
    if (e->gate->interval) {
      item += fmt::format(" [speedup interval {:.3f}x to {:.3f}x]", e->gate->interval->low,
                          e->gate->interval->high);
    } else {
      item += std::string(" [") + analyzer::describe(e->gate->problem) + "]";
    }
    list += (list.empty() ? "" : ", ") + item;
  }
  return list;
}

/// --fail-if-slower: 3 when an entry is significantly slower than the threshold, else 5 when one
/// is inconclusive, else 0; one line on stderr for each of the first two.
int gate_status(const analyzer::CompareReport& report, const analyzer::GateOptions& gate) {
  const char* basis = gate.basis == analyzer::TimeBasis::Span ? "GPU span" : "GPU time";
  const auto slower = analyzer::entries_with(report, analyzer::GateVerdict::Slower);
  const auto unsure = analyzer::entries_with(report, analyzer::GateVerdict::Inconclusive);
  if (!slower.empty()) {
    std::cerr << "prof-analyze: slower than baseline by more than " << gate.threshold_percent
              << " % in " << basis << " per iteration (at " << gate.bootstrap.level * 100
              << " % confidence where there is an interval): " << gate_list(slower, gate.basis)
              << std::endl;
  }
  if (!unsure.empty()) {
    std::cerr << "prof-analyze: inconclusive, the " << gate.bootstrap.level * 100
              << " % interval of the speedup contains the threshold of " << gate.threshold_percent
              << " % (" << basis << "): " << gate_list(unsure, gate.basis) << std::endl;
  }
  if (!slower.empty()) return kExitFlagged;
  return unsure.empty() ? kExitOk : kExitInconclusive;
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
      // Kernel and launch call timestamps are checked where their rows are read: before a window
      // is resolved from them (no stored steps), and by compare's statistics when nothing stored
      // answers them (analyzer/store/AnalysisStore.h, summary/SummaryStore.h).
      auto open = [&](const std::string& file) {
        auto reader = std::make_unique<fuselens::db::Reader>(
            file, fuselens::db::TimestampCheck::DeferLargeTables);
        if (!analyzer::stored_results_window(*reader, spec, steps)) {
          reader->check_table_timestamps("kernel");
          reader->check_table_timestamps("api_call");
        }
        return reader;
      };
      const auto a_reader = open(o.files[0]);
      fuselens::db::Reader& a = *a_reader;
      if (const int rc = open_window(a, spec, steps, windows[0])) return rc;
      const auto b_reader = open(o.files[1]);
      fuselens::db::Reader& b = *b_reader;
      if (const int rc = open_window(b, spec, steps, windows[1])) return rc;
      analyzer::CompareOptions options;
      options.kernel_names = name_kind(o.names);
      options.diff_threshold_percent = o.diff_threshold;
      options.projection = nvtx_projection(o.projection);
      report = analyzer::compare_captures(a, b, options);
      // The steps of each window as one more item ("(steps)"): what the gate can resample when
      // the ranges have a new name per step (CompareSteps.h).
      if (windows[0].steps && windows[1].steps) {
        auto base = analyzer::step_range_stats(*windows[0].steps, windows[0].first_step,
                                               windows[0].last_step, windows[0].label);
        auto cand = analyzer::step_range_stats(*windows[1].steps, windows[1].first_step,
                                               windows[1].last_step, windows[1].label);
        if (base && cand) analyzer::add_steps_entry(report, std::move(*base), std::move(*cand));
      }
    }
  } catch (const analyzer::CompareError& e) {
    return fail(std::string("compare: ") + e.what(), kExitCapture);
  }
  analyzer::GateOptions gate;
  gate.basis = o.time == "span" ? analyzer::TimeBasis::Span : analyzer::TimeBasis::Gpu;
  gate.threshold_percent = o.fail_if_slower.value_or(0);
  gate.bootstrap.level = o.confidence;
  analyzer::judge(report, gate);
  std::ostringstream text;
  analyzer::write_compare(text, report, output_format(o.format));
  progress.done();
  std::vector<const analyzer::Window*> named;
  for (const auto& w : windows) named.push_back(&w);
  write_windowed(std::cout, text.str(), output_format(o.format), named);
  std::cout.flush();
  if (!std::cout) return fail("writing the comparison to standard output failed", kExitCapture);

  if (o.fail_if_slower) return gate_status(report, gate);
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
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  compare
      ->add_option("--fail-if-slower", options->fail_if_slower,
                   "CI gate: exit 3 when a candidate is significantly slower than its baseline "
                   "by more than PCT % (the --confidence interval of its speedup over the range "
                   "instances lies beyond PCT), 5 when inconclusive (the interval contains PCT), "
                   "else 0; one instance on a side: the medians decide, as without intervals")
      ->check(kFinite)
      ->check(CLI::Range(0.0, 1e6));
  compare
      ->add_option("--confidence", options->confidence,
                   "Level of the speedup's two-sided percentile bootstrap interval (2000 "
                   "resamples, fixed seed) that --fail-if-slower decides on")
      ->check(kFinite)
      ->check(CLI::Range(0.5, 0.999))
      ->capture_default_str();
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
