// Issue #9, command lines: every option of every command-line tool (prof-analyze's six
// subcommands, prof-run, prof-ceilings) given an unknown flag next to it, no value, and a value
// of the wrong type or outside its set. Each must be refused before any work: exit status 2, one
// line on stderr starting "TOOL: error: ", nothing on stdout, no output file. prof-gui's command
// line (files and --screenshot) is not covered here: it needs the Qt build.
//
// The options come from each command's --help: a test fails when a tool gains an option that the
// table below does not cover (or the table names an option the tool no longer has), so a new
// option cannot go untested.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "Binaries.h"
#include "Subprocess.h"
#include "TempDir.h"

using fuselens::test::Result;
using fuselens::test::run;
using fuselens::test::TempDir;

namespace {

const std::string kCapture = std::string(FUSELENS_TEST_DATA_DIR) + "/fusion_bench.sqlite";

/// One option and the values that must be refused. A flag (no value) is given "=maybe", which
/// is not a boolean; an option whose every text is valid at parse time has no bad values and is
/// only checked for a missing value.
struct Option {
  std::string name;  ///< long form, as --help prints it
  std::vector<std::string> bad_values;
  bool flag = false;
};

/// A command: the program, the arguments that make a valid call (the option under test is
/// appended, or inserted before "--" for prof-run), and the file it would write.
struct Command {
  std::string label;    ///< "prof-analyze summary"
  std::string program;  ///< path
  std::string error_prefix;
  std::vector<std::string> help_args;
  std::vector<std::string> valid_args;  ///< with @OUT for the output path
  std::vector<Option> options;
};

std::vector<Command> commands() {
  const std::string analyze = fuselens::test::binary("prof-analyze", PROF_ANALYZE_PATH);
#ifdef FUSELENS_WITH_COLLECTOR
  const std::string prof_run = fuselens::test::binary("prof-run", PROF_RUN_PATH);
  const std::string ceilings = fuselens::test::binary("prof-ceilings", PROF_CEILINGS_PATH);
#endif
  const std::string a = "prof-analyze: error: ";
  const Option format{"--format", {"xml", ""}};
  const Option names{"--names", {"pretty"}};
  const Option projection{"--nvtx-projection", {"both", ""}};  // process or thread (issue 22)
  // --window and the step methods of every analysing subcommand (analyzer/window/Window.h)
  const Option window{"--window",
                      {"", "nope", "steps:0", "steps:5-2", "steps:-3", "steps:1-x",
                       "range:", "time:", "time:5-1", "time:abc-2", "time:-1-2", "time:1e30-1e31"}};
  const Option step_range{"--step-range", {}};
  const Option step_function{"--step-function", {}};
  const Option auto_steps{"--auto-steps", {}, true};
  return {
      // prof-analyze's own options (--color: issue 23), given after a subcommand (fallthrough).
      {"prof-analyze",
       analyze,
       a,
       {"--help"},
       {"summary", kCapture},
       {{"--color", {"sometimes", "Always", ""}}}},
      {"prof-analyze summary",
       analyze,
       a,
       {"summary", "--help"},
       {"summary", kCapture},
       {format,
        names,
        projection,
        {"--report", {"kernel", "all,nope", "cuda_gpu_trace"}},  // alias --section
        {"--output", {"prefix"}},  // nsys-style files need --format csv (issue 23)
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze steps",
       analyze,
       a,
       {"steps", "--help"},
       {"steps", kCapture},
       {format, window, step_range, step_function, {"--auto", {}, true}}},
      {"prof-analyze cct",
       analyze,
       a,
       {"cct", "--help"},
       {"cct", kCapture},
       {{"--view", {"sideways"}},
        {"--metric", {"flops"}},
        {"--depth", {"-1", "abc", "1.5"}},
        {"--limit", {"-3", "abc", "2.5"}},
        {"--min-percent", {"abc", "-1", "101"}},
        {"--filter", {"(", "[a-", "((a{100}){100}){100}"}},
        {"--show-internal", {}, true},
        {"--phase", {"sideways"}},
        {"--split-phase", {}, true},
        {"--frames", {"sideways", ""}},
        format,
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze flags",
       analyze,
       a,
       {"flags", "--help"},
       {"flags", kCapture},
       {format,
        names,
        {"--threshold", {"x", "launch_short.runtime_cutoff_us=abc", "no_such.key=1"}},
        {"--rules", {"no_such_rule"}},
        {"--fail-on", {"no_such_rule"}},
        {"--limit", {"-3", "abc", "2.5"}},
        {"--list", {}, true},
        {"--frames", {"sideways"}},
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze compare",
       analyze,
       a,
       {"compare", "--help"},
       {"compare", kCapture, kCapture},
       {{"--baseline", {}},
        {"--candidate", {}},
        format,
        names,
        {"--diff-threshold", {"abc", "-1", "nan"}},
        {"--fail-if-slower", {"abc", "-5", "nan", "inf"}},
        {"--confidence", {"abc", "1", "0.2", "nan"}},
        {"--time", {"wall", ""}},
        {"--by", {"sideways", ""}},
        projection,
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze export",
       analyze,
       a,
       {"export", "--help"},
       {"export", kCapture, "--format", "html", "-o", "@OUT"},
       {{"--format", {"pdf", ""}},
        {"--output", {}},
        names,
        {"--baseline", {}},
        {"--candidate", {}},
        {"--frames", {"sideways"}},
        {"--rank", {"-1", "x", "0"}},  // chrome-trace only (issue 23)
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze roofline",
       analyze,
       a,
       {"roofline", "--help"},
       {"roofline", kCapture},
       {{"--peaks", {"no-such-gpu"}},
        {"--peaks-file", {"/nonexistent/peaks.json"}},
        format,
        names,
        window,
        step_range,
        step_function,
        auto_steps}},
      {"prof-analyze merge",
       analyze,
       a,
       {"merge", "--help"},
       {"merge", "-o", "@OUT", kCapture, kCapture},
       {{"--output", {}}, {"--force", {}, true}}},
      {"prof-analyze convert",  // issue 21: the lean trace layout
       analyze,
       a,
       {"convert", "--help"},
       {"convert", kCapture, "--layout", "lean", "-o", "@OUT"},
       {{"--output", {}}, {"--layout", {"medium", "full"}}, {"--force", {}, true}}},
      {"prof-analyze ranks",
       analyze,
       a,
       {"ranks", "--help"},
       {"ranks", kCapture},
       {format, window, step_range, step_function, auto_steps}},
#ifdef FUSELENS_WITH_COLLECTOR  // prof-run and prof-ceilings: built with the GPU side only
      {"prof-run",
       prof_run,
       "prof-run: error: ",
       {"--help"},
       {"-o", "@OUT", "--", "/bin/true"},
       {{"--output", {}},
        {"--force", {}, true},
        {"--torch-modules", {"maybe", ""}},
        {"--layout", {"medium", "Lean", ""}},       // issue 21
        {"--mode", {"sideways", "Aggregate", ""}},  // issue 21: aggregate mode
        {"--trace", {"no_such_group", "+nope"}},
        {"--buffer-kib", {"abc", "1", "-64"}},
        {"--max-buffers", {"abc", "1", "100000"}},
        {"--flush-ms", {"abc", "1", "1e9"}},
        {"--metrics", {"no_such_set"}},
        {"--replay", {"sideways", "application"}},  // the second: without --metrics
        {"--cache-control", {"some", "all"}},
        // the counter launch filters: bad values, and good ones without --metrics
        {"--kernel-name", {"regex:(", "", "gemm"}},
        {"--kernel-name-base", {"short", "function"}},
        {"--launch-skip", {"-1", "abc", "1e3", "99999999999999999999", "2"}},
        {"--launch-skip-before-match", {"-1", "abc", "2"}},
        {"--launch-count", {"0", "abc", "-3", "2"}},
        {"--nvtx-include", {"a//b/", "@x/", "a\\", "train/"}},
        {"--nvtx-exclude", {"", "[a/[b/", "train/"}},
        {"--measure-ceilings", {}, true},
        {"--per-process", {}, true},
        {"--capture-range", {"nvtx:", "foo", "nvtx:a@", "cudaprofilerapi"}},
        {"--capture-range-end", {"again", "repeat:0"}},  // also: without --capture-range
        {"--delay", {"-1", "abc", "1e30"}},
        {"--duration", {"0", "-2", "abc"}},
        {"--steps", {"1:1", "1:1:0", "a:b:c", "1:1:1:1:1"}},
        {"--sample", {"1/0", "", "2/3", "1/-1", "10ms/100ms", "1/99999999999999999999"}},
        {"--step-range", {""}},
        {"--color", {"sometimes", "Always", ""}}}},  // issue 23
      {"prof-ceilings",
       ceilings,
       "prof-ceilings: error: ",
       {"--help"},
       {"--into", "@OUT"},
       {{"--into", {}},
        {"--device", {"abc", "1.5"}},
        {"--only", {"dram,nope", "disk"}},
        {"--quick", {}, true},
        {"--format", {"xml"}}}},
#endif
  };
}

/// Long option names in a CLI11 --help text, without --help and --version.
std::set<std::string> options_in_help(const std::string& help) {
  std::set<std::string> out;
  static const std::regex line(R"(^\s+(?:-\w,)?(--[A-Za-z0-9][A-Za-z0-9-]*))");
  std::istringstream in(help);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line) && m[1] != "--help" && m[1] != "--version") out.insert(m[1]);
  }
  return out;
}

/// The command's valid arguments with `extra` added: before "--" (prof-run) or at the end.
std::vector<std::string> with(const Command& c, const std::string& out,
                              const std::vector<std::string>& extra) {
  std::vector<std::string> args{c.program};
  bool placed = false;
  for (const auto& v : c.valid_args) {
    if (v == "--" && !placed) {
      args.insert(args.end(), extra.begin(), extra.end());
      placed = true;
    }
    args.push_back(v == "@OUT" ? out : v);
  }
  if (!placed) args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string shown(const std::vector<std::string>& args) {
  std::string s;
  for (std::size_t i = 1; i < args.size(); ++i)
    s += (i > 1 ? " " : "") + (args[i].empty() ? "''" : args[i]);
  return s;
}

/// Runs `extra` on command `c` and checks the refusal: status 2, one error line, no output.
void expect_refused(const Command& c, const std::vector<std::string>& extra) {
  TempDir dir;
  const std::string out = dir.file("out.file");
  const auto args = with(c, out, extra);
  const Result r = run(args);
  const std::string what = c.label + ": " + shown(args) + "\n" + r.err;
  EXPECT_EQ(r.status, 2) << what;
  EXPECT_EQ(r.err_lines().size(), 1u) << what;
  EXPECT_EQ(r.err.rfind(c.error_prefix, 0), 0u) << what;
  EXPECT_TRUE(r.out.empty()) << what << "\nstdout: " << r.out.substr(0, 200);
  EXPECT_FALSE(std::filesystem::exists(out)) << what << ": output written";
}

TEST(CommandLine, EveryOptionOfEveryToolIsInTheTable) {
  for (const auto& c : commands()) {
    std::vector<std::string> args{c.program};
    args.insert(args.end(), c.help_args.begin(), c.help_args.end());
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << c.label << " --help: " << r.err;
    const auto in_help = options_in_help(r.out);
    ASSERT_FALSE(in_help.empty()) << c.label << ": no options found in --help";
    std::set<std::string> in_table;
    for (const auto& o : c.options) in_table.insert(o.name);
    for (const auto& o : in_help) {
      EXPECT_TRUE(in_table.count(o)) << c.label << " has option " << o
                                     << " that this test does not cover: add it to commands()";
    }
    for (const auto& o : in_table) {
      EXPECT_TRUE(in_help.count(o))
          << c.label << ": the table names " << o << ", which --help no longer lists";
    }
  }
}

TEST(CommandLine, UnknownFlagsAreRefused) {
  for (const auto& c : commands()) {
    expect_refused(c, {"--no-such-option"});
    expect_refused(c, {"--no-such-option=1"});
    expect_refused(c, {"-Z"});
  }
}

TEST(CommandLine, EveryOptionWithoutItsValueIsRefused) {
  for (const auto& c : commands()) {
    for (const auto& o : c.options) {
      if (o.flag) continue;
      expect_refused(c, {o.name});
    }
  }
}

TEST(CommandLine, EveryOptionWithAWrongValueIsRefused) {
  for (const auto& c : commands()) {
    for (const auto& o : c.options) {
      if (o.flag) {
        expect_refused(c, {o.name + "=maybe"});
        continue;
      }
      for (const auto& v : o.bad_values) expect_refused(c, {o.name, v});
    }
  }
}

}  // namespace
