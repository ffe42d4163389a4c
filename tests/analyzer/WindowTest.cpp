// Windows (analyzer/window, docs/windows.md): parsing, resolving on the committed real captures,
// the restriction every analysis reads through, and `--window` on the command line: each output
// names its window, a window that selects nothing fails with one line, status 4 and no output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "Subprocess.h"
#include "TestSupport.h"
#include "fuselens/db/Reader.h"
#include "fuselens/db/TraceCursors.h"
#include "summary/Summary.h"
#include "summary/SummaryStore.h"
#include "window/Window.h"

#ifndef PROF_ANALYZE_PATH
#error "PROF_ANALYZE_PATH must name the prof-analyze binary"
#endif

using namespace fuselens;
using namespace fuselens::analyzer;
using fuselens::analyzer::test::TempDir;

namespace {

std::string data(const std::string& name) {
  return std::string(FUSELENS_TEST_DATA_DIR) + "/" + name;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Kernels the steps report counts in steps first..last (1-based, inclusive).
std::int64_t step_kernels(const StepReport& r, int first, int last) {
  std::int64_t n = 0;
  for (int i = first; i <= last; ++i) n += r.steps[static_cast<std::size_t>(i - 1)].kernels;
  return n;
}

}  // namespace

TEST(WindowParse, AcceptsEveryForm) {
  EXPECT_EQ(parse_window("all").kind, WindowKind::All);
  EXPECT_EQ(parse_window("steady").kind, WindowKind::Steady);
  const auto steps = parse_window("steps:3-7");
  EXPECT_EQ(steps.kind, WindowKind::Steps);
  EXPECT_EQ(steps.first_step, 3);
  EXPECT_EQ(steps.last_step, 7);
  EXPECT_EQ(parse_window("steps:4").last_step, 4);
  EXPECT_FALSE(parse_window("steps:4-").last_step.has_value());
  EXPECT_EQ(parse_window("range:train/*").range_glob, "train/*");
  const auto time = parse_window("time:1.5-2500ms");
  EXPECT_EQ(time.t0_ns, 1'500'000'000);
  EXPECT_EQ(time.t1_ns, 2'500'000'000);
  EXPECT_EQ(parse_window("time:10us-20us").t1_ns, 20'000);
}

TEST(WindowParse, RefusesMalformedWindowsAsSyntaxErrors) {
  for (const char* bad : {"", "Steady", "steps", "steps:", "steps:0", "steps:-1", "steps:2-1",
                          "steps:1-x", "steps: 1", "range:", "time:", "time:1", "time:2-1",
                          "time:-1-2", "time:abc-2", "time:1e30-1e31", "time:nan-1", "frames:1"}) {
    try {
      parse_window(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const WindowError& e) {
      EXPECT_EQ(e.kind(), WindowError::Kind::Syntax) << bad;
      EXPECT_NE(std::string(e.what()).find("--window"), std::string::npos) << e.what();
    }
  }
}

// The real PyTorch training capture: the steady window is the steps after warm-up; the kernels
// a window's reader sees are exactly those the steps report counts in it (both project GPU
// work onto its launch call), and the file is not changed.
TEST(WindowResolve, SteadyAndStepWindowsOnTheTrainingCapture) {
  const std::string path = data("train_steps.sqlite");
  const std::string before = file_bytes(path);
  db::Reader reader(path);
  const Window steady = resolve_window(reader, parse_window("steady"));
  ASSERT_TRUE(steady.steps.has_value());
  const StepReport& r = *steady.steps;
  ASSERT_EQ(r.steps.size(), 65u);
  EXPECT_FALSE(steady.whole);
  EXPECT_EQ(steady.first_step, r.steady_first);
  EXPECT_GT(steady.first_step, 1);
  EXPECT_EQ(steady.last_step, 65);
  EXPECT_EQ(steady.label, "steps " + std::to_string(r.steady_first) + "-65 of 65 (steady)");
  EXPECT_NE(steady.description.find("start-up"), std::string::npos) << steady.description;
  EXPECT_EQ(steady.startup_ns, r.steps[static_cast<std::size_t>(r.steady_first - 1)].start_ns -
                                   steady.capture_start_ns);
  EXPECT_LT(steady.inside_ns, steady.captured_ns);

  apply_window(reader, steady);
  EXPECT_TRUE(reader.restricted());
  const Summary in_steady = summarize(reader);
  EXPECT_FALSE(in_steady.from_stored_aggregates);
  EXPECT_EQ(in_steady.totals.kernel_count, step_kernels(r, steady.first_step, 65));

  db::Reader again(path);
  const Window some = resolve_window(again, parse_window("steps:10-20"));
  apply_window(again, some);
  EXPECT_EQ(summarize(again).totals.kernel_count, step_kernels(r, 10, 20));
  EXPECT_EQ(some.label, "steps 10-20 of 65");
  EXPECT_THROW(again.restrict_to({}), db::Error);  // one window per reader

  db::Reader whole(path);
  const Window all = resolve_window(whole, parse_window("all"));
  apply_window(whole, all);
  EXPECT_FALSE(whole.restricted());
  EXPECT_GT(summarize(whole).totals.kernel_count, in_steady.totals.kernel_count);
  EXPECT_EQ(file_bytes(path), before);
}

TEST(WindowResolve, RangeAndTimeWindows) {
  db::Reader reader(data("train_steps.sqlite"));
  const Window range = resolve_window(reader, parse_window("range:ProfilerStep#1?"));
  EXPECT_EQ(range.intervals.size(), 10u);  // ProfilerStep#10 .. #19, one interval each
  EXPECT_EQ(range.label, "NVTX range 'ProfilerStep#1?' (10 instances)");
  const Window time = resolve_window(reader, parse_window("time:1-2"));
  ASSERT_EQ(time.intervals.size(), 1u);
  EXPECT_EQ(time.intervals[0].start_ns, time.capture_start_ns + 1'000'000'000);
  EXPECT_EQ(time.inside_ns, 1'000'000'000);
  EXPECT_TRUE(time.contains(time.capture_start_ns + 1'500'000'000));
  EXPECT_FALSE(time.contains(time.capture_start_ns + 2'000'000'000));
}

TEST(WindowResolve, WindowsThatSelectNothing) {
  db::Reader reader(data("train_steps.sqlite"));
  for (const char* empty : {"steps:66", "steps:60-70", "range:no such range", "time:100-200"}) {
    try {
      resolve_window(reader, parse_window(empty));
      ADD_FAILURE() << "resolved '" << empty << "'";
    } catch (const WindowError& e) {
      EXPECT_EQ(e.kind(), WindowError::Kind::Empty) << empty;
    }
  }
  // A program without steps: steady is the whole capture, a step window selects nothing.
  db::Reader plain(data("no_repetition.sqlite"));
  const Window steady = resolve_window(plain, parse_window("steady"));
  EXPECT_TRUE(steady.whole);
  EXPECT_EQ(steady.label.rfind("whole capture (no steps", 0), 0u) << steady.label;
  EXPECT_THROW(resolve_window(plain, parse_window("steps:1")), WindowError);
  // A time span inside the capture where nothing starts.
  db::Reader gap(data("train_steps.sqlite"));
  const Window quiet = resolve_window(gap, parse_window("time:0.5-0.5001"));
  EXPECT_THROW(apply_window(gap, quiet), WindowError);
}

// Every analysing subcommand names its window: a line above the table, a column in CSV, a
// member in JSON; the default is steady.
TEST(WindowCli, EveryOutputNamesTheWindow) {
  const std::string path = data("train_steps.sqlite");
  for (const char* command : {"summary", "cct", "flags", "roofline"}) {
    const auto table = fuselens::test::run_cli(TempDir{}, {command, path});
    ASSERT_EQ(table.status, 0) << command << ": " << table.err;
    EXPECT_EQ(table.out.rfind("Window: steps ", 0), 0u)
        << command << ": " << table.out.substr(0, 200);
    EXPECT_NE(table.out.find("(steady)"), std::string::npos) << command;
    const auto json = fuselens::test::run_cli(TempDir{}, {command, path, "--format", "json"});
    ASSERT_EQ(json.status, 0) << command << ": " << json.err;
    const auto doc = nlohmann::json::parse(json.out);
    EXPECT_EQ(doc["window"]["spec"], "steady") << command;
    EXPECT_GT(doc["window"]["first_step"].get<int>(), 1) << command;
    const auto csv = fuselens::test::run_cli(
        TempDir{}, {command, path, "--format", "csv", "--window", "steps:10-20"});
    ASSERT_EQ(csv.status, 0) << command << ": " << csv.err;
    const auto records = fuselens::analyzer::test::parse_csv(csv.out);
    bool header = true;
    for (const auto& record : records) {
      if (record.size() <= 1) {  // a "# section" line or a blank line: a header follows
        header = true;
        continue;
      }
      EXPECT_EQ(record.back(), header ? "window" : "steps 10-20 of 65") << command;
      header = false;
    }
  }
  // compare of two captures names both windows
  const auto both = fuselens::test::run_cli(TempDir{}, {"compare", path, path});
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(both.out.rfind("Window: baseline: steps ", 0), 0u) << both.out.substr(0, 200);
  EXPECT_NE(both.out.find("; candidate: steps "), std::string::npos);
}

TEST(WindowCli, TheSummaryOfAStepWindowCountsItsKernels) {
  const std::string path = data("train_steps.sqlite");
  db::Reader reader(path);
  const StepReport r = analyze_steps(reader);
  const auto json = fuselens::test::run_cli(
      TempDir{}, {"summary", path, "--format", "json", "--window", "steps:30-39"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["totals"]["kernel_count"].get<std::int64_t>(), step_kernels(r, 30, 39));
  const auto all =
      fuselens::test::run_cli(TempDir{}, {"summary", path, "--format", "json", "--window", "all"});
  const auto whole = nlohmann::json::parse(all.out);
  EXPECT_EQ(whole["window"]["label"], "whole capture");
  EXPECT_GT(whole["totals"]["kernel_count"].get<std::int64_t>(), step_kernels(r, 30, 39));
}

// Bad input: one line on stderr, the documented status, nothing on stdout, no file written.
TEST(WindowCli, WindowsThatSelectNothingFailWithOneLineAndWriteNothing) {
  const std::string path = data("train_steps.sqlite");
  TempDir dir;
  const std::string out = (dir.path() / "report.html").string();
  struct Case {
    std::vector<std::string> args;
    int status;
  };
  const std::vector<Case> cases{
      {{"summary", path, "--window", "steps:70-80"}, 4},
      {{"flags", path, "--window", "range:never*"}, 4},
      {{"cct", path, "--window", "time:500-600"}, 4},
      {{"summary", path, "--step-range", "*epoch*"}, 4},
      {{"export", path, "--format", "html", "-o", out, "--window", "steps:99"}, 4},
      {{"summary", path, "--window", "steps:9-3"}, 2},
      {{"summary", path, "--step-range", "x", "--auto-steps"}, 2},
      {{"roofline", path, "--window", "time:2-1"}, 2},
  };
  for (const auto& c : cases) {
    const auto r = fuselens::test::run_cli(dir, c.args);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.status, c.status) << shown << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << shown << r.err;
    EXPECT_EQ(r.err.rfind("prof-analyze: error: ", 0), 0u) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown;
    EXPECT_FALSE(std::filesystem::exists(out)) << shown;
  }
}

// When the steps stored at the end of the run answer the default window (here: a search skipped
// above the size limit, so the window is the whole capture and the summary reads its stored
// aggregates), no launch is read: the kernel and launch-call timestamps are not scanned (2.5 s
// on ten million kernels). Probe: a kernel start made TEXT, which a scan refuses (exit 1).
TEST(WindowCli, StoredStepsResolveTheDefaultWindowWithoutScanningTheLaunches) {
  TempDir dir;
  const std::string path = (dir.path() / "train_steps.sqlite").string();
  std::filesystem::copy_file(data("train_steps.sqlite"), path);
  const auto exec = [&path](const char* sql) { analyzer::test::exec_sql(path, sql); };
  exec(
      "DELETE FROM step; UPDATE step_detection SET method = 'none', pattern = '', "
      "steady_first = 0, median_step = 0, note = 'steps not searched when the run ended: test'");
  store_summary_aggregates(path);
  const auto good = fuselens::test::run_cli(dir, {"summary", path, "--format", "json"});
  ASSERT_EQ(good.status, 0) << good.err;
  const std::string json = (dir.path() / "export.json").string();
  const std::string json_after = (dir.path() / "export_after.json").string();
  ASSERT_EQ(fuselens::test::run_cli(dir, {"export", path, "--format", "json", "-o", json}).status,
            0);
  exec("UPDATE kernel SET start_ns = 'x' WHERE id = (SELECT MAX(id) FROM kernel)");
  const auto stored = fuselens::test::run_cli(dir, {"summary", path, "--format", "json"});
  EXPECT_EQ(stored.status, 0) << stored.err;
  EXPECT_EQ(stored.out, good.out);
  // The JSON export (the summary and the capture's extent) likewise, from what is stored.
  const auto exported =
      fuselens::test::run_cli(dir, {"export", path, "--format", "json", "-o", json_after});
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_EQ(file_bytes(json_after), file_bytes(json));
  // A window or an export that reads the damaged row still refuses it, with one line; a window
  // that does not hold it reads and checks only its own rows (db/src/Window.cpp).
  const auto narrow = fuselens::test::run_cli(dir, {"summary", path, "--window", "time:0-0.5"});
  EXPECT_EQ(narrow.status, 0) << narrow.err;
  const std::string trace = (dir.path() / "trace.json").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"summary", path, "--window", "time:0-"},
        std::vector<std::string>{"export", path, "--format", "chrome-trace", "-o", trace}}) {
    const auto rows = fuselens::test::run_cli(dir, args);
    EXPECT_EQ(rows.status, 1) << args[0] << rows.err;
    EXPECT_EQ(rows.err_lines().size(), 1u) << args[0] << rows.err;
  }
  EXPECT_FALSE(std::filesystem::exists(trace));
}

// The C++ loop with NVTX steps (tests/data/step_loop.sqlite, H100): 40 marked steps, the same
// count found automatically and by its step function `train_step`, the kernels and the copy of
// each as the program reported launching them.
TEST(WindowCaptures, TheCppStepLoopHasItsFortyStepsByMarksAndAutomatically) {
  db::Reader reader(data("step_loop.sqlite"));
  const StepReport marked = analyze_steps(reader);
  StepOptions automatic;
  automatic.automatic = true;
  const StepReport found = analyze_steps(reader, automatic);
  EXPECT_EQ(marked.method, StepMethod::Range);
  ASSERT_EQ(marked.steps.size(), 40u);
  EXPECT_EQ(found.steps.size(), marked.steps.size());
  StepOptions by_function;
  by_function.function = "train_step";
  EXPECT_EQ(analyze_steps(reader, by_function).steps.size(), marked.steps.size());
  std::ifstream in(data("step_loop.launched.json"));
  const auto launched = nlohmann::json::parse(in);
  ASSERT_EQ(launched["steps"].size(), 40u);
  for (std::size_t i = 0; i < 40; ++i) {
    std::int64_t kernels = 0;
    for (const auto& [name, n] : launched["steps"][i]["kernels"].items()) kernels += n.get<int>();
    EXPECT_EQ(marked.steps[i].kernels, kernels) << "step " << i + 1;
    EXPECT_EQ(marked.steps[i].copies, launched["steps"][i]["copies"].get<int>()) << i + 1;
  }
  const Window steady = resolve_window(reader, parse_window("steady"));
  EXPECT_GT(steady.first_step, 1);  // the first steps (allocations, first launches) are warm-up
  EXPECT_EQ(steady.last_step, 40);
}

// The same loop under `prof-run --steps 5:2:3:2` (H100): two recorded windows, the steps inside
// them (8-10 and 18-20 of the program, 1-based) and exactly their kernels; none of the start-up
// or the tail, none of the skipped steps.
TEST(WindowCaptures, AStepScheduleCaptureHoldsExactlyItsActiveSteps) {
  const std::string path = data("step_loop_schedule.sqlite");
  db::Reader reader(path);
  const auto recorded = db::capture_windows(reader);
  ASSERT_EQ(recorded.size(), 2u);
  const StepReport r = analyze_steps(reader);
  ASSERT_EQ(r.steps.size(), 6u);
  const std::vector<std::string> labels{"step#7",  "step#8",  "step#9",
                                        "step#17", "step#18", "step#19"};
  std::ifstream in(data("step_loop_schedule.launched.json"));
  const auto launched = nlohmann::json::parse(in);
  std::map<std::string, std::int64_t> expected;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(r.steps[i].label, labels[i]);
    const int program_step = std::stoi(labels[i].substr(5));
    for (const auto& [name, n] : launched["steps"][program_step]["kernels"].items())
      expected[name] += n.get<int>();
  }
  db::Reader again(path);
  const Window all = resolve_window(again, parse_window("all"));
  apply_window(again, all);
  const Summary s = summarize(again, NameKind::Short);
  std::map<std::string, std::int64_t> got;
  for (const auto& k : s.kernels) got[k.name] = k.stats.count;
  EXPECT_EQ(got, expected);
}

// prof-run stored the steps of the real training run when it ended: they equal what the search
// finds now, and the default window reads them.
TEST(WindowCaptures, TheStoredStepsOfTheTrainingRunEqualTheSearch) {
  db::Reader reader(data("train_steps.sqlite"));
  const auto stored = stored_step_report(reader);
  ASSERT_TRUE(stored.has_value());
  const StepReport found = analyze_steps(reader);
  ASSERT_EQ(stored->steps.size(), 65u);
  ASSERT_EQ(found.steps.size(), 65u);
  EXPECT_EQ(stored->steady_first, found.steady_first);
  for (std::size_t i = 0; i < found.steps.size(); ++i) {
    EXPECT_EQ(stored->steps[i].start_ns, found.steps[i].start_ns) << i;
    EXPECT_EQ(stored->steps[i].kernels, found.steps[i].kernels) << i;
    EXPECT_EQ(stored->steps[i].gpu_busy_ns, found.steps[i].gpu_busy_ns) << i;
  }
  const Window steady = resolve_window(reader, parse_window("steady"));
  EXPECT_EQ(steady.first_step, found.steady_first);
}

// The default window (no --window) of a capture above kMaxSteadyDefaultRecords GPU records is the
// whole capture, whose stored results answer it; its stored steps go with it and `--window
// steady` still selects them. The bound is the tables' largest row ids (gpu_record_bound): one
// kernel moved to id 3,000,000 makes the real training capture "large" without changing what it
// holds. Without stored steps nothing is searched for the default (a damaged kernel time is not
// read), and a hostile row id saturates the bound instead of wrapping it.
TEST(WindowDefault, AboveTheBoundTheDefaultIsTheWholeCaptureAndSteadyStaysExplicit) {
  TempDir dir;
  const std::string path = (dir.path() / "large.sqlite").string();
  std::filesystem::copy_file(data("train_steps.sqlite"), path);
  {
    db::Reader small(path);
    const Window by_default = resolve_window(small, default_window());
    EXPECT_FALSE(by_default.whole);
    EXPECT_EQ(by_default.label, resolve_window(small, parse_window("steady")).label);
  }
  const auto exec = [&path](const char* sql) { analyzer::test::exec_sql(path, sql); };
  exec("UPDATE kernel SET id = 3000000 WHERE id = (SELECT MAX(id) FROM kernel)");
  {
    db::Reader reader(path);
    ASSERT_GT(reader.gpu_record_bound(), kMaxSteadyDefaultRecords);
    const Window by_default = resolve_window(reader, default_window());
    EXPECT_TRUE(by_default.whole);
    ASSERT_TRUE(by_default.steps.has_value());
    ASSERT_EQ(by_default.steps->steps.size(), 65u);
    const std::string steady_steps =
        "steps " + std::to_string(by_default.steps->steady_first) + "-65";
    EXPECT_EQ(by_default.label, "whole capture (the default above " +
                                    std::to_string(kMaxSteadyDefaultRecords) +
                                    " GPU records; --window steady: " + steady_steps + ")");
    const Window steady = resolve_window(reader, parse_window("steady"));
    EXPECT_FALSE(steady.whole);
    EXPECT_EQ(steady.label, steady_steps + " of 65 (steady)");
    StepOptions named;  // a named step method keeps the steady default
    named.range_glob = "ProfilerStep#*";
    EXPECT_FALSE(resolve_window(reader, default_window(), named).whole);
  }
  // On the command line: no --window reads the whole capture, --window steady the steps.
  const auto whole = fuselens::test::run_cli(dir, {"summary", path});
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_NE(whole.out.find("Window: whole capture (the default above"), std::string::npos)
      << whole.out.substr(0, 300);
  const auto steady = fuselens::test::run_cli(dir, {"summary", path, "--window", "steady"});
  ASSERT_EQ(steady.status, 0) << steady.err;
  EXPECT_NE(steady.out.find("Window: steps "), std::string::npos) << steady.out.substr(0, 300);
  // No stored steps: the default searches nothing (a damaged kernel time is never read).
  exec(
      "DELETE FROM step; DELETE FROM step_detection; "
      "UPDATE kernel SET start_ns = 'x' WHERE id = 3000000");
  {
    db::Reader reader(path, db::TimestampCheck::DeferLargeTables);
    const Window by_default = resolve_window(reader, default_window());
    EXPECT_TRUE(by_default.whole);
    ASSERT_TRUE(by_default.steps.has_value());
    EXPECT_TRUE(by_default.steps->steps.empty());
    EXPECT_NE(by_default.steps->note.find("not searched"), std::string::npos);
  }
  exec("UPDATE memcpy SET id = 9223372036854775807 WHERE id = (SELECT MAX(id) FROM memcpy)");
  exec("UPDATE kernel SET id = 9223372036854775806 WHERE id = 3000000");
  db::Reader hostile(path, db::TimestampCheck::DeferLargeTables);
  EXPECT_EQ(hostile.gpu_record_bound(), std::numeric_limits<std::int64_t>::max());
}
