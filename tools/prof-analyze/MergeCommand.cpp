// prof-analyze merge -o OUT [--force] CAPTURE...
//
// Merges per-rank captures (`prof-run --per-process`, or one capture per host) into one capture
// that every other subcommand reads: db::merge_captures (db/include/fuselens/db/Merge.h) copies
// every row with strings re-interned and ids renumbered, and moves the processes of other hosts
// onto the first input's clock; this command checks the paths, writes OUT through a temporary
// file renamed into place (analyzer::ExportFile), and prints how each input was placed and the
// residual error of the clock alignment (docs/multi-gpu.md, "Merging per-rank captures").

#include <sys/stat.h>

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Cli.h"
#include "export/ExportFile.h"
#include "fuselens/db/Merge.h"
#include "fuselens/db/Printable.h"

namespace fuselens::cli {
namespace {

constexpr const char* kMergeFooter =
    "Exit status:\n"
    "  0  merged\n"
    "  1  an input cannot be read (missing, not a FuseLens capture, corrupt, written by a newer\n"
    "     FuseLens) or cannot be merged (schema older than 8, a pid in two inputs, a host whose\n"
    "     clock offset was never measured, times moved out of range)\n"
    "  2  command-line error: fewer than two captures, the same capture twice, OUT is one of\n"
    "     the captures or not a regular file, or OUT exists and --force was not given";

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false;
};

std::string ns_text(std::int64_t ns, bool sign = true) {
  const bool negative = ns < 0;
  // |ns| without overflow at INT64_MIN.
  const auto magnitude =
      negative ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::string digits = std::to_string(magnitude);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return (negative ? "-" : ns > 0 && sign ? "+" : "") + digits + " ns";
}

void print_report(std::ostream& out, const db::MergeReport& report, const std::string& output) {
  out << "Merged " << report.sources.size() << " process(es) into '" << db::printable(output)
      << "' (" << report.rows << " rows)\n";
  for (const auto& s : report.sources) {
    out << "  [" << s.input_index << "] '" << db::printable(s.path) << "' pid " << s.pid
        << " host '" << db::printable(s.host_name) << "' shift " << ns_text(s.shift_ns) << "\n";
  }
  out << "Clock alignment (times are on each host's CUPTI clock; other hosts are moved onto the "
         "first input's clock by the difference of their UTC offsets):\n";
  for (const auto& h : report.hosts) {
    out << "  host '" << db::printable(h.host_name) << "': " << h.processes << " process(es)";
    if (h.reference) {
      out << ", reference clock, shift 0; residual error 0 (one clock on one host)";
    } else {
      out << ", shift " << ns_text(h.shift_ns)
          << "; residual error bounded by how well this host's UTC clock agrees with the "
             "reference host's (NTP/PTP synchronisation), which FuseLens cannot measure";
    }
    if (h.measured > 1) {
      out << "; its " << h.measured << " processes' measured clock offsets spread over "
          << ns_text(h.offset_spread_ns, false) << " (the offset measurement's own jitter)";
    }
    out << "\n";
  }
  for (const auto& note : report.notes) out << "Note: " << db::printable(note) << "\n";
}

int run_merge(const MergeOptions& options) {
  if (options.inputs.size() < 2) {
    return fail("merge: give at least two captures to merge", kExitUsage);
  }
  if (options.output == "-") {
    return fail("merge: -o - is not possible: a capture is a file; name one", kExitUsage);
  }
  // The same capture twice (also through another name or a hard link).
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> seen;
  for (const auto& input : options.inputs) {
    struct stat st {};
    if (::stat(input.c_str(), &st) != 0) continue;  // the merge says why it cannot be read
    for (const auto& [id, name] : seen) {
      if (id == std::make_pair(st.st_dev, st.st_ino)) {
        return fail(
            "merge: '" + input + "' is the same file as '" + name + "'; give each capture once",
            kExitUsage);
      }
    }
    seen.push_back({{st.st_dev, st.st_ino}, input});
  }
  struct stat st {};
  if (options.output != "-" && ::lstat(options.output.c_str(), &st) == 0 && !options.force &&
      S_ISREG(st.st_mode)) {
    bool is_input = false;
    for (const auto& [id, name] : seen) is_input |= id == std::make_pair(st.st_dev, st.st_ino);
    if (!is_input) {
      return fail("merge: '" + options.output + "' exists; pass --force to replace it", kExitUsage);
    }
  }
  std::unique_ptr<analyzer::ExportFile> out;
  try {
    // Refuses an output that is one of the inputs or not a regular file; makes an empty
    // temporary file next to it.
    out = std::make_unique<analyzer::ExportFile>(options.output, options.inputs);
  } catch (const analyzer::ExportError& e) {
    return fail(std::string("merge: ") + e.what(), kExitUsage);
  }
  db::MergeReport report;
  try {
    report = db::merge_captures(options.inputs, out->temporary_path());
  } catch (const db::Error& e) {
    return fail(std::string("merge: ") + e.what(), kExitCapture);
  }
  out->commit();
  print_report(std::cout, report, options.output);
  return kExitOk;
}

}  // namespace

Runner add_merge_command(CLI::App& app) {
  auto options = std::make_shared<MergeOptions>();
  auto* command = add_command(
      app, "merge",
      "Merge per-rank captures (prof-run --per-process, or one per host) into one capture, "
      "with other hosts' times moved onto the first capture's clock");
  command->footer(footer("merge", kMergeFooter));
  command->add_option("CAPTURE", options->inputs, "Captures to merge; the first sets the clock")
      ->required();
  command->add_option("-o,--output", options->output, "The merged capture to write")->required();
  command->add_flag("--force", options->force, "Replace OUT when it exists");
  return [options] { return run_merge(*options); };
}

}  // namespace fuselens::cli
